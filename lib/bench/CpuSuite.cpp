//===- lib/bench/CpuSuite.cpp - `tessera bench --target cpu` --------------------===//
#include "tessera/bench/CpuSuite.h"

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "tessera/bench/BenchEnvironment.h"
#include "MarkdownCells.h"
#include "tessera/bench/TuneSuite.h"
#include "tessera/bench/WorkloadFacts.h"
#include "tessera/cpu/CpuArch.h"
#include "tessera/runtime/Backend.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/support/Error.h"
#include "tessera/tune/CpuTune.h"

namespace tessera::bench {

using json = nlohmann::json;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// `body(t)` on threads 0..threads-1 at once (thread 0 is the caller).
template <typename Body>
void on_threads(unsigned threads, const Body &body) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back([&, t] { body(t); });
  body(0);
  for (std::thread &th : pool) th.join();
}

/// The median of five timings (after one untimed run) of `run`, in ms.
double median_ms(const std::function<void()> &run) {
  return runtime::time_on_cpu(run, {.warmup_ms = 0, .measure_ms = 0, .min_reps = 5, .max_reps = 5}).median_ms;
}

/// Eigen's time for `g` (float32 or float64 operands, any layout), the rows
/// of C split over `threads` threads; UserError for other operand types.
template <typename T>
double eigen_gemm_ms(const runtime::GemmDesc &g, unsigned threads) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Index m = g.m, n = g.n, k = g.k;
  std::vector<Matrix> a, b, c;
  for (int64_t i = 0; i < g.batch; ++i) {
    a.push_back(g.a_transposed ? Matrix::Random(k, m) : Matrix::Random(m, k));
    b.push_back(g.b_transposed ? Matrix::Random(n, k) : Matrix::Random(k, n));
    c.push_back(Matrix::Zero(m, n));
  }
  auto run = [&] {
    on_threads(threads, [&](unsigned t) {
      const Eigen::Index lo = m * t / threads, rows = m * (t + 1) / threads - lo;
      if (rows == 0) return;
      for (int64_t i = 0; i < g.batch; ++i) {
        auto out = c[i].middleRows(lo, rows);
        if (g.a_transposed && g.b_transposed) out.noalias() = a[i].middleCols(lo, rows).transpose() * b[i].transpose();
        else if (g.a_transposed) out.noalias() = a[i].middleCols(lo, rows).transpose() * b[i];
        else if (g.b_transposed) out.noalias() = a[i].middleRows(lo, rows) * b[i].transpose();
        else out.noalias() = a[i].middleRows(lo, rows) * b[i];
      }
    });
  };
  return median_ms(run);
}

json run_one(const json &w, const cpu::CpuArch &arch, double memcpy_gbps) {
  json row = workload_row(w);
  try {
    ir::PrimFunc f = load_workload(w);
    WorkloadFacts facts = workload_facts(f);
    row["bytes"] = facts.bytes;
    row["flops"] = facts.flops;
    auto t0 = Clock::now();
    tuning::CpuTuneResult r = tuning::tune_for_cpu(f, arch);
    row["tune_ms"] = seconds_since(t0) * 1e3;
    row["reference"] = r.reference;
    row["candidates"] = r.candidates.size();
    row["candidates_ok"] = std::count_if(r.candidates.begin(), r.candidates.end(),
                                         [](const tuning::CpuCandidate &c) { return c.ok; });
    if (!r.ok()) {
      row["status"] = "error";
      row["error"] = "no CPU schedule ran and verified: " + r.candidates.at(0).error;
      return row;
    }
    const tuning::CpuCandidate &best = r.best();
    row["status"] = "ok";
    row["schedule"] = best.name;
    row["best_ms"] = best.median_ms;
    row["error_ratio"] = best.error_ratio;
    if (std::isfinite(r.plain_ms)) {
      row["plain_ms"] = r.plain_ms;
      row["speedup_over_plain"] = r.plain_ms / best.median_ms;
    }
    const double seconds = best.median_ms * 1e-3;
    row["gbps"] = double(facts.bytes) / seconds / 1e9;
    if (facts.flops > 0) {
      row["gflops"] = facts.flops / seconds / 1e9;
    } else if (memcpy_gbps > 0) {
      row["fraction_of_memcpy"] = row["gbps"].get<double>() / memcpy_gbps;
    }
    if (facts.gemm && facts.gemm->a_dtype == facts.gemm->b_dtype &&
        (facts.gemm->a_dtype.is_float() && (facts.gemm->a_dtype.bits() == 32 || facts.gemm->a_dtype.bits() == 64))) {
      const unsigned threads = r.threads;
      const double ms = facts.gemm->a_dtype.bits() == 32 ? eigen_gemm_ms<float>(*facts.gemm, threads)
                                                         : eigen_gemm_ms<double>(*facts.gemm, threads);
      row["eigen_gemm"] = facts.gemm->str();
      row["eigen_ms"] = ms;
      row["eigen_gflops"] = facts.gemm->flops() / (ms * 1e-3) / 1e9;
      row["fraction_of_eigen"] = ms / best.median_ms;
    }
  } catch (const std::exception &e) {
    row["status"] = "error";
    row["error"] = e.what();
  }
  return row;
}

/// /proc/cpuinfo's "model name" ("Intel(R) Xeon(R) Processor"), or "unknown".
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  return "unknown";
}

}  // namespace

double measure_memcpy_gbps(size_t bytes, unsigned threads) {
  threads = std::max(1u, threads);
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const double ms = std::max(1e-6, median_ms([&] {
    on_threads(threads, [&](unsigned t) {
      const size_t lo = bytes * t / threads, hi = bytes * (t + 1) / threads;
      std::memcpy(dst.data() + lo, src.data() + lo, hi - lo);
    });
  }));
  return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
}

json run_cpu_suite(const CpuSuiteOptions &o) {
  SuiteSelection sel = select_workloads(o.suite, o.only);
  const cpu::CpuArch arch = cpu::CpuArch::by_name(o.cpu);
  if (!runtime::llvm_jit_available()) throw UserError("--target cpu needs the LLVM JIT; this build has none");
  const unsigned threads = runtime::llvm_jit_threads();
  json report{{"date", today()},
              {"git", o.git},
              {"suite", sel.suite.value("suite", o.suite)},
              {"description", sel.suite.value("description", "")},
              {"mode", "cpu"},
              {"cpu", arch.str()},
              {"cpu_model", cpu_model()},
              {"threads", threads},
              {"eigen", fmt::format("{}.{}.{}", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)}};
  const double memcpy_gbps = measure_memcpy_gbps(size_t(256) << 20, threads);
  report["memcpy"] = {{"bytes", size_t(256) << 20}, {"threads", threads}, {"gbps", memcpy_gbps}};
  run_workloads(
      sel.workloads, o.budget_s, report, [&](const json &w) { return run_one(w, arch, memcpy_gbps); },
      [&](json &partial) {
        if (o.progress) o.progress(partial);
      });
  return report;
}

std::string cpu_suite_markdown(const json &report) {
  std::ostringstream out;
  out << "# tessera bench --target cpu: " << report.value("suite", "") << "\n\n"
      << report.value("description", "") << "\n\n";
  out << "- date " << report.value("date", "") << ", git " << report.value("git", "") << "; "
      << report.value("cpu_model", "") << " (" << report.value("cpu", "") << ")"
      << "; the LLVM JIT on " << report.value("threads", 0) << " threads; Eigen " << report.value("eigen", "")
      << " on the same threads (rows of C split over them)\n";
  out << "- measured memcpy bandwidth (read + write, same threads): "
      << number_cell(report.at("memcpy"), "gbps", "{:.1f}") << " GB/s\n\n";
  out << "| workload | best schedule | plain ms | best ms | vs plain | GB/s | of memcpy | GFLOP/s | Eigen ms | of Eigen "
         "| ok/cands |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const json &r : report.at("workloads")) {
    if (r.value("status", "") != "ok") {
      out << "| " << r.value("workload", "") << " | " << r.value("status", "error") << ": "
          << text_cell(r.value("error", ""), 160) << " |\n";
      continue;
    }
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {}/{} |\n", r.value("workload", ""),
                       text_cell(r.value("schedule", ""), 60), number_cell(r, "plain_ms", "{:.2f}"),
                       number_cell(r, "best_ms", "{:.2f}"), number_cell(r, "speedup_over_plain", "{:.2f}x"),
                       number_cell(r, "gbps", "{:.1f}"), number_cell(r, "fraction_of_memcpy", "{:.0f}%", 100),
                       number_cell(r, "gflops", "{:.1f}", 1, true), number_cell(r, "eigen_ms", "{:.2f}"),
                       number_cell(r, "fraction_of_eigen", "{:.2f}x"), r.value("candidates_ok", 0),
                       r.value("candidates", 0));
  }
  return out.str();
}

namespace {

/// One bar per workload: the best schedule's fraction of its ceiling (Eigen
/// for a matrix product, memcpy for memory-bound work), 0-100%+.
std::string cpu_suite_svg(const json &report) {
  std::ostringstream svg;
  const json &rows = report.at("workloads");
  const int height = 40 + 22 * int(rows.size());
  svg << fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<text x=\"10\" y=\"20\">fraction of the ceiling (Eigen GEMM or memcpy), {} threads</text>\n",
      height, report.value("threads", 0));
  int y = 32;
  for (const json &r : rows) {
    double fraction = r.contains("fraction_of_eigen")    ? r["fraction_of_eigen"].get<double>()
                      : r.contains("fraction_of_memcpy") ? r["fraction_of_memcpy"].get<double>()
                                                         : 0;
    const double w = std::min(1.5, fraction) * 300;
    svg << fmt::format("<text x=\"10\" y=\"{}\">{}</text>\n", y + 14, r.value("workload", ""));
    svg << fmt::format("<rect x=\"260\" y=\"{}\" width=\"{:.1f}\" height=\"14\" fill=\"#4878a8\"/>\n", y + 3, w);
    svg << fmt::format("<text x=\"{:.1f}\" y=\"{}\">{:.0f}%</text>\n", 264 + w, y + 14, fraction * 100);
    y += 22;
  }
  svg << "<line x1=\"560\" y1=\"30\" x2=\"560\" y2=\"" << y << "\" stroke=\"#888\" stroke-dasharray=\"3\"/>\n";
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace

std::vector<std::string> write_cpu_suite(const json &report, const std::string &prefix) {
  return write_report(prefix, report, cpu_suite_markdown(report), cpu_suite_svg(report));
}

}  // namespace tessera::bench
