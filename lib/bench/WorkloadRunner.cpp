//===- lib/bench/WorkloadRunner.cpp - The workload corpus at full size on a GPU -===//
#include "tessera/bench/WorkloadRunner.h"
#include "tessera/runtime/DetectArch.h"

#include "MarkdownCells.h"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <random>
#include <set>

#include "tessera/bench/BenchEnvironment.h"
#include "tessera/bench/WorkloadFacts.h"
#include "tessera/workloads/Corpus.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/arch/Arch.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/rules/Fallback.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/Cublas.h"
#include "tessera/runtime/Backend.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/tune/Reference.h"

namespace tessera::bench {

using nlohmann::json;
using runtime::NDArray;

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string sizes_text(const workloads::Sizes &sizes) {
  std::string out;
  for (const auto &[var, value] : sizes) out += (out.empty() ? "" : " ") + var + "=" + std::to_string(value);
  return out;
}

std::vector<workloads::Entry> select(const std::vector<workloads::Entry> &all, const std::vector<std::string> &only) {
  if (only.empty()) return all;
  std::vector<workloads::Entry> out;
  for (const std::string &name : only) {
    auto it = std::find_if(all.begin(), all.end(), [&](const workloads::Entry &e) { return e.name == name; });
    if (it == all.end()) {
      std::string known;
      for (const workloads::Entry &e : all) known += (known.empty() ? "" : ", ") + e.name;
      throw UserError("unknown workload '" + name + "' (known: " + known + ")");
    }
    out.push_back(*it);
  }
  return out;
}

/// What the whole run shares: the Arch, the cuBLAS handle, the copy ceiling.
struct Suite {
  const SuiteOptions &options;
  Arch arch;
  std::optional<runtime::Cublas> blas;
  double copy_gbps = 0;
};

/// A host array of `shape` filled with random values.
NDArray random_array(ir::DataType dtype, std::vector<int64_t> shape, std::mt19937_64 &rng) {
  NDArray a(dtype, std::move(shape));
  a.fill_random(rng);
  return a;
}

/// The operands of `g` as stored (row-major, the batch outermost).
std::vector<int64_t> with_batch(const runtime::GemmDesc &g, int64_t rows, int64_t cols) {
  if (g.batch == 1) return {rows, cols};
  return {g.batch, rows, cols};
}

/// Times cuBLAS on the workload's GEMM equivalent when the reference did not
/// already (it is not exact: random operands of the GEMM's dtypes and shapes).
void time_cublas_equivalent(const Suite &s, const WorkloadFacts &facts, json &row) {
  if (!facts.gemm || !s.blas || row.contains("cublas_ms")) return;
  runtime::TimingResult t = time_cublas_gemm(*s.blas, *facts.gemm, s.options.timing);
  row["cublas_ms"] = t.median_ms;
  row["cublas_gflops"] = facts.gemm->flops() / (t.median_ms * 1e-3) / 1e9;
}

/// Steps 2 to 4 of the file comment for one built workload.
void measure(const Suite &s, const workloads::Entry &e, const ir::PrimFunc &f, const runtime::DimBindings &dims,
             const runtime::Executable &fn, const WorkloadFacts &facts, json &row) {
  std::mt19937_64 rng(11);
  std::vector<NDArray> inputs = runtime::make_random_args(f, dims, 5);
  workloads::prepare_inputs(e, inputs, rng);

  tuning::ComputedReference want = tuning::reference_for(f, inputs, dims, s.arch);
  row["reference"] = want.how;
  std::vector<NDArray> got = inputs;
  fn.run(got);
  const runtime::ChecksSummary checks = runtime::summarize_checks(runtime::check_outputs(f, got, want.ref));
  row["error_ratio"] = checks.worst_ratio;
  row["status"] = checks.ok() ? "ok" : "mismatch";
  if (!checks.ok()) row["mismatch"] = checks.failures;

  runtime::TimingResult t = fn.time(inputs, s.options.timing);
  double seconds = t.median_ms * 1e-3;
  row.update({{"median_ms", t.median_ms},
              {"min_ms", t.min_ms},
              {"max_ms", t.max_ms},
              {"repetitions", t.repetitions},
              {"l2_flushed", t.l2_flushed},
              {"gbps", facts.bytes / seconds / 1e9},
              {"fraction_of_copy", s.copy_gbps > 0 ? facts.bytes / seconds / 1e9 / s.copy_gbps : 0.0}});
  if (facts.flops > 0) row["gflops"] = facts.flops / seconds / 1e9;
  time_cublas_equivalent(s, facts, row);
  if (row.contains("cublas_ms")) row["fraction_of_cublas"] = row["cublas_ms"].get<double>() / t.median_ms;
}

json run_workload(const Suite &s, const workloads::Entry &e) {
  json row = {{"workload", e.name}, {"expected_rule", e.rule}, {"rule", ""}, {"sizes", sizes_text(e.full)}};
  try {
    ir::PrimFunc original = workloads::load_func(e);
    ir::PrimFunc f = analysis::specialize(original, e.specialized(e.full));
    runtime::DimBindings dims;
    for (const std::string &v : e.symbolic) dims[v] = e.full.at(v);
    WorkloadFacts facts = workload_facts(analysis::specialize(original, e.full));
    row.update({{"bytes", facts.bytes}, {"flops", facts.flops}, {"iterations", facts.iterations}});
    if (facts.gemm) row.update({{"cublas_gemm", facts.gemm->str()}, {"cublas_exact", facts.gemm_exact}});
    if (!facts.gemm_note.empty()) row["cublas_note"] = facts.gemm_note;

    auto t0 = std::chrono::steady_clock::now();
    rules::DefaultSchedule ds = rules::apply_default_schedule(f, s.arch);
    row.update({{"rule", ds.rule}, {"config", ds.config}, {"schedule_ms", ms_since(t0)}});
    t0 = std::chrono::steady_clock::now();
    runtime::CudaFunction fn = runtime::CudaFunction::build(ds.func, {.arch = s.arch.arch_flag()});
    row["build_ms"] = ms_since(t0);
    json kernels = json::array();
    for (const runtime::CompiledKernel &k : fn.kernels()) {
      const runtime::KernelResources *res = k.compiled.find_kernel(k.name);
      kernels.push_back({{"name", k.name},
                         {"nvrtc_ms", k.compiled.compile_ms},
                         {"registers", res ? res->registers : 0},
                         {"shared_bytes", res ? res->shared_bytes : 0},
                         {"spill_bytes", res ? res->spill_stores + res->spill_loads : 0}});
    }
    row["kernels"] = kernels;
    row["status"] = "compiled";
    if (!s.options.dry_run) measure(s, e, f, dims, *runtime::cuda_executable(fn), facts, row);
  } catch (const std::exception &ex) {
    row.update({{"status", "error"}, {"error", ex.what()}});
  }
  return row;
}

}  // namespace

runtime::TimingResult time_cublas_gemm(const runtime::Cublas &blas, const runtime::GemmDesc &g,
                                       const runtime::TimingOptions &timing) {
  std::mt19937_64 rng(17);
  NDArray a = random_array(g.a_dtype, g.a_transposed ? with_batch(g, g.k, g.m) : with_batch(g, g.m, g.k), rng);
  NDArray b = random_array(g.b_dtype, g.b_transposed ? with_batch(g, g.n, g.k) : with_batch(g, g.k, g.n), rng);
  runtime::DeviceBuffer da = runtime::DeviceBuffer::from_host(a), db = runtime::DeviceBuffer::from_host(b);
  runtime::DeviceBuffer dc(g.c_bytes());
  return blas.time(g, da, db, dc, timing);
}

json run_workload_suite(const SuiteOptions &o) {
  bool device = runtime::driver_status() == runtime::DriverStatus::Ok;
  if (!o.dry_run && !o.arch.empty())
    throw UserError("--arch is for dry runs: a measured run schedules for the device it runs on");
  std::vector<workloads::Entry> entries = select(workloads::load_manifest(), o.only);

  Suite s{o, o.arch.empty() && device ? runtime::detect_arch() : Arch::by_name(o.arch.empty() ? "h100" : o.arch), {}, 0};
  json report = run_environment(o.git);
  report["mode"] = o.dry_run ? "dry run" : "measured";
  report["arch"] = s.arch.fingerprint();
  if (!o.dry_run) {
    CopyBandwidth copy = measure_copy_bandwidth();
    s.copy_gbps = copy.gbps;
    report["copy"] = copy.to_json();
    try {
      s.blas.emplace(runtime::Cublas::load());
      report["cublas"] = runtime::Cublas::library().str();
    } catch (const runtime::CublasUnavailable &ex) {
      report["cublas"] = std::string("unavailable: ") + ex.what();
    }
  }
  report["workloads"] = json::array();
  for (const workloads::Entry &e : entries) {
    report["workloads"].push_back(run_workload(s, e));
    if (o.on_row) o.on_row(report["workloads"].back());
  }
  return report;
}

bool all_passed(const json &report) {
  for (const json &w : report.at("workloads"))
    if (w.at("status") != "ok" && w.at("status") != "compiled") return false;
  return true;
}

namespace {

std::string rule_text(const json &w) {
  std::string rule = w.at("rule").get<std::string>();
  std::string expected = w.at("expected_rule").get<std::string>();
  if (rule.empty()) return "— (expected " + expected + ")";
  return rule == expected ? rule : rule + " (expected " + expected + ")";
}

/// The value of `key` scaled and formatted; "–" when absent or zero (no flops).
std::string number(const json &w, const char *key, const char *format, double scale = 1) {
  return number_cell(w, key, format, scale, /*blank_zero=*/true);
}

std::string check_text(const json &w) {
  const std::string status = w.at("status");
  if (status == "error") return "error: " + w.at("error").get<std::string>();
  std::string ref = w.value("reference", "");
  if (status == "ok") return "ok (" + ref + ")";
  return fmt::format("MISMATCH {:.3g}x the bound ({})", w.at("error_ratio").get<double>(), ref);
}

/// Cells can hold compiler messages: keep the table a table.
std::string cell(const std::string &s) { return text_cell(s, 160); }

}  // namespace

std::string markdown_report(const json &report) {
  std::string out;
  bool dry = report.at("mode") == "dry run";
  out += fmt::format("# Workload suite ({}), {}\n\n", report.at("mode").get<std::string>(),
                     report.at("date").get<std::string>());
  out += fmt::format("Arch {}; {}; NVRTC {}; git {}\n", report.at("arch").get<std::string>(),
                     report.contains("device") ? report.at("device").get<std::string>() : "no device",
                     report.at("nvrtc").get<std::string>(), report.at("git").get<std::string>());
  out += fmt::format("Driver: {}\n", report.at("driver").get<std::string>());
  if (report.contains("copy"))
    out += fmt::format("Copy bandwidth (cuMemcpyDtoD, 1 GiB, read + write): **{:.0f} GB/s** median\n",
                       report.at("copy").at("gbps").get<double>());
  if (report.contains("cublas")) out += "cuBLAS: " + report.at("cublas").get<std::string>() + "\n";
  out += "\n";

  bool footnote = false;
  if (dry) {
    out += "| workload | rule | sizes | kernels | regs | schedule ms | build ms | MB in+out | GFLOP | cuBLAS equivalent |\n";
    out += "|---|---|---|---|---|---|---|---|---|---|\n";
  } else {
    out += "| workload | rule | sizes | check | median µs | GB/s | of copy | GFLOP/s | cuBLAS µs | of cuBLAS |\n";
    out += "|---|---|---|---|---|---|---|---|---|---|\n";
  }
  for (const json &w : report.at("workloads")) {
    std::string name = w.at("workload"), sizes = w.at("sizes");
    if (sizes.empty()) sizes = "(fixed)";
    std::string gemm = w.contains("cublas_gemm") ? w.at("cublas_gemm").get<std::string>() : "–";
    bool inexact = w.contains("cublas_gemm") && !w.at("cublas_exact").get<bool>();
    footnote = footnote || inexact;
    if (dry) {
      std::string regs = "–", kernels = "–";
      if (w.contains("kernels")) {
        kernels = std::to_string(w.at("kernels").size());
        regs.clear();
        for (const json &k : w.at("kernels")) regs += (regs.empty() ? "" : "/") + std::to_string(k.at("registers").get<int>());
      }
      std::string status = w.at("status") == "error" ? " **error: " + cell(w.at("error")) + "**" : "";
      out += fmt::format("| {} | {}{} | {} | {} | {} | {} | {} | {} | {} | {}{} |\n", name, rule_text(w), status,
                         sizes, kernels, regs, number(w, "schedule_ms", "{:.1f}"), number(w, "build_ms", "{:.0f}"),
                         number(w, "bytes", "{:.1f}", 1e-6), number(w, "flops", "{:.2f}", 1e-9), gemm,
                         inexact ? " *" : "");
    } else {
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {}{} | {} |\n", name, rule_text(w), sizes,
                         cell(check_text(w)), number(w, "median_ms", "{:.1f}", 1e3), number(w, "gbps", "{:.0f}"),
                         number(w, "fraction_of_copy", "{:.0f}%", 100), number(w, "gflops", "{:.0f}"),
                         number(w, "cublas_ms", "{:.1f}", 1e3), inexact ? " *" : "",
                         number(w, "fraction_of_cublas", "{:.0f}%", 100));
    }
  }
  if (footnote)
    out += "\n\\* cuBLAS computes the matrix product only (the workload does more, e.g. an epilogue or a "
           "dequantising prologue: see `cublas_note` in the JSON); it is the speed reference, not the "
           "correctness reference.\n";
  return out;
}

}  // namespace tessera::bench
