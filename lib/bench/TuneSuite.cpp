//===- lib/bench/TuneSuite.cpp - `tessera bench`: fast_tune over a named suite --===//
#include "tessera/bench/TuneSuite.h"
#include "tessera/runtime/DetectArch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tessera/bench/BenchEnvironment.h"
#include "MarkdownCells.h"
#include "tessera/bench/WorkloadFacts.h"
#include "tessera/bench/WorkloadRunner.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/script/Parser.h"
#include "tessera/support/DataPaths.h"
#include "tessera/tune/FastTune.h"

namespace tessera::bench {

using json = nlohmann::json;

namespace {

/// The candidate that is the policy's first choice (possibly the default).
const tuning::CandidateReport *policy_top1(const tuning::TuneResult &r) {
  for (const tuning::CandidateReport &c : r.candidates)
    if (c.origin.rfind("policy #1", 0) == 0 && (c.origin.size() == 9 || c.origin[9] == ' ')) return &c;
  return nullptr;
}

/// The measured median of `c` in microseconds, or null.
json time_of(const tuning::CandidateReport *c) {
  if (!c || !c->measured || c->status != tuning::CandidateStatus::Ok) return nullptr;
  return c->time_us;
}

json run_one(const json &w, const Arch &arch, const TuneSuiteOptions &o, bool measure,
             const std::optional<runtime::Cublas> &blas, double copy_gbps) {
  json row = workload_row(w);
  try {
    ir::PrimFunc f = load_workload(w);
    WorkloadFacts facts = workload_facts(f);
    row["bytes"] = facts.bytes;
    row["flops"] = facts.flops;
    // No SASS summaries: the suite's tune times stay comparable with runs
    // before them (reading SASS costs ~0.45 s a workload without a GPU).
    tuning::TuneResult r =
        tuning::fast_tune(f, arch, {.topk = o.topk, .threads = o.threads, .measure = measure, .read_sass = false});
    const tuning::TunePhases &p = r.phases;
    row["rule"] = r.rule;
    row["status"] = "ok";
    row["measured"] = r.measured;
    row["tune_ms"] = p.total_ms;
    row["phases_ms"] = {{"policy", p.policy_ms},   {"schedule", p.schedule_ms},        {"codegen", p.codegen_ms},
                        {"nvrtc", p.nvrtc_ms},     {"compile_wall", p.compile_wall_ms}, {"reference", p.reference_ms},
                        {"measure", p.measure_ms}};
    int ok = 0;
    for (const tuning::CandidateReport &c : r.candidates) ok += c.status == tuning::CandidateStatus::Ok;
    row["candidates"] = r.candidates.size();
    row["candidates_ok"] = ok;
    row["winner"] = r.winner().origin;
    row["winner_config"] = json::parse(r.winner().config);
    // Every candidate with the policy's estimate beside its measured time:
    // what calibrating the policies' models needs (how far top-1 was from
    // the winner, and which configs the model misranked).
    json results = json::array();
    for (const tuning::CandidateReport &c : r.candidates)
      results.push_back({{"origin", c.origin},
                         {"config", c.config.empty() ? json() : json::parse(c.config)},
                         {"status", tuning::to_string(c.status)},
                         {"time_us", c.measured ? json(c.time_us) : json()},
                         {"policy_score_us", c.policy_score},
                         {"registers", c.registers},
                         {"shared_bytes", c.shared_bytes},
                         {"compile_ms", c.compile_ms}});
    row["candidate_results"] = std::move(results);
    if (!r.measured) {
      row["why_unmeasured"] = r.why_unmeasured;
      return row;
    }
    const tuning::CandidateReport *def = r.default_index >= 0 ? &r.candidates[r.default_index] : nullptr;
    row["default_us"] = time_of(def);
    row["top1_us"] = time_of(policy_top1(r));
    double best = r.winner().time_us;
    row["topk_us"] = best;
    if (double s = r.speedup_over_default(); s > 0) row["speedup_over_default"] = s;
    row["gbps"] = double(facts.bytes) / (best * 1e-6) / 1e9;
    if (copy_gbps > 0) row["fraction_of_copy"] = row["gbps"].get<double>() / copy_gbps;
    if (facts.flops > 0) row["gflops"] = facts.flops / (best * 1e-6) / 1e9;
    if (facts.gemm && blas) {
      runtime::TimingResult t = time_cublas_gemm(*blas, *facts.gemm, {});
      row["cublas_us"] = t.median_ms * 1e3;
      row["cublas_gemm"] = facts.gemm->str();
      row["fraction_of_cublas"] = t.median_ms * 1e3 / best;
    }
  } catch (const Error &e) {
    row["status"] = "error";
    row["error"] = e.what();
  }
  return row;
}

double geomean(const std::vector<double> &v) {
  if (v.empty()) return 0;
  double s = 0;
  for (double x : v) s += std::log(x);
  return std::exp(s / double(v.size()));
}

/// Suite-wide figures: median tune time, geomean speed-ups.
json summarize(const json &rows) {
  std::vector<double> tune, speedup, top1_over_default;
  for (const json &r : rows) {
    if (r.at("status") != "ok") continue;
    tune.push_back(r.at("tune_ms").get<double>());
    if (r.contains("speedup_over_default")) speedup.push_back(r.at("speedup_over_default").get<double>());
    if (r.value("default_us", json()).is_number() && r.value("top1_us", json()).is_number())
      top1_over_default.push_back(r.at("default_us").get<double>() / r.at("top1_us").get<double>());
  }
  json s{{"median_tune_ms", tune.empty() ? 0.0 : runtime::median(tune)}, {"workloads_ok", tune.size()}};
  if (!speedup.empty()) s["geomean_topk_over_default"] = geomean(speedup);
  if (!top1_over_default.empty()) s["geomean_top1_over_default"] = geomean(top1_over_default);
  return s;
}

}  // namespace

std::string source_path(const std::string &relative) {
  if (std::filesystem::path(relative).is_absolute() || std::filesystem::exists(relative)) return relative;
  return (support::data_root() / relative).string();
}

json read_json(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw UserError("cannot read '" + path + "'");
  try {
    return json::parse(in);
  } catch (const json::exception &e) {
    throw UserError(path + ": not valid JSON: " + e.what());
  }
}

bool have_device() { return runtime::driver_status() == runtime::DriverStatus::Ok && runtime::device_count() > 0; }

Arch suite_arch(const std::string &name) {
  return !name.empty() ? Arch::by_name(name) : have_device() ? runtime::detect_arch() : Arch::by_name("h100");
}

std::string find_suite(const std::string &name_or_path) {
  if (name_or_path.ends_with(".json")) return name_or_path;
  std::string dir = (support::data_root() / "bench" / "suites").string();
  std::string path = dir + "/" + name_or_path + ".json";
  if (std::filesystem::exists(path)) return path;
  std::set<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".json") names.insert(e.path().stem().string());
  std::string list;
  for (const std::string &n : names) list += (list.empty() ? "" : ", ") + n;
  throw UserError("no suite named '" + name_or_path + "' (suites: " + list + "; or give a .json file)");
}

SuiteSelection select_workloads(const std::string &suite_name, const std::vector<std::string> &only) {
  SuiteSelection out;
  std::string path = find_suite(suite_name);
  out.suite = read_json(path);
  if (!out.suite.contains("workloads") || !out.suite["workloads"].is_array())
    throw UserError(path + ": expected {\"suite\": ..., \"workloads\": [...]}");
  std::set<std::string> known;
  for (const json &w : out.suite["workloads"]) {
    if (!w.contains("name") || !w.contains("file")) throw UserError(path + ": a workload needs \"name\" and \"file\"");
    known.insert(w["name"].get<std::string>());
    if (only.empty() || std::count(only.begin(), only.end(), w["name"].get<std::string>()))
      out.workloads.push_back(w);
  }
  for (const std::string &n : only)
    if (!known.count(n)) throw UserError("suite '" + suite_name + "' has no workload '" + n + "'");
  return out;
}

json workload_row(const json &w) {
  return {{"workload", w.at("name")}, {"file", w.at("file")}, {"dims", w.value("dims", json::object())}};
}

void run_workloads(const std::vector<json> &workloads, double budget_s, json &report,
                   const std::function<json(const json &)> &run, const std::function<void(json &)> &after_each) {
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  const auto start = Clock::now();
  std::vector<double> done_s;
  report["workloads"] = json::array();
  for (const json &w : workloads) {
    const double elapsed = seconds_since(start);
    const double expected = done_s.empty() ? 0 : runtime::median(done_s);
    if (budget_s > 0 && elapsed + expected > budget_s) {
      json row = workload_row(w);
      row["status"] = "skipped";
      row["error"] = fmt::format("budget: {:.0f} s of {:.0f} s used, a workload takes about {:.0f} s", elapsed,
                                 budget_s, expected);
      report["workloads"].push_back(std::move(row));
    } else {
      report["workloads"].push_back(run(w));
      done_s.push_back(seconds_since(start) - elapsed);
    }
    after_each(report);
  }
}

ir::PrimFunc load_workload(const json &w) {
  ir::Module m = script::parse_file(source_path(w.at("file").get<std::string>()));
  if (m.funcs.size() != 1) throw UserError(w.at("file").get<std::string>() + ": expected one function");
  std::map<std::string, int64_t> dims = w.value("dims", std::map<std::string, int64_t>{});
  return dims.empty() ? m.funcs[0] : analysis::specialize(m.funcs[0], dims);
}

json run_tune_suite(const TuneSuiteOptions &o) {
  SuiteSelection sel = select_workloads(o.suite, o.only);
  const json &suite = sel.suite;
  const std::vector<json> &selected = sel.workloads;
  bool device = have_device();
  Arch arch = suite_arch(o.arch);
  bool measure = o.measure && device;
  json report = run_environment(o.git);
  report["suite"] = suite.value("suite", o.suite);
  report["description"] = suite.value("description", "");
  report["arch"] = arch.fingerprint();
  report["topk"] = o.topk;
  report["mode"] = measure ? "measured" : "compile only";
  report["host_threads"] = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  std::optional<runtime::Cublas> blas;
  double copy_gbps = 0;
  if (measure) {
    CopyBandwidth copy = measure_copy_bandwidth();
    copy_gbps = copy.gbps;
    report["copy"] = copy.to_json();
    try {
      blas.emplace(runtime::Cublas::load());
      report["cublas"] = runtime::Cublas::library().str();
    } catch (const runtime::CublasUnavailable &e) {
      report["cublas"] = std::string("unavailable: ") + e.what();
    }
  }
  run_workloads(
      selected, o.budget_s, report, [&](const json &w) { return run_one(w, arch, o, measure, blas, copy_gbps); },
      [&](json &partial) {
        partial["summary"] = summarize(partial["workloads"]);
        if (o.progress) o.progress(partial);
      });
  report["summary"] = summarize(report["workloads"]);
  return report;
}

namespace {

std::string num(const json &row, const char *key, const char *format, double scale = 1) {
  return number_cell(row, key, format, scale);
}

std::string cell(const std::string &s) { return text_cell(s, 120); }

}  // namespace

std::string tune_suite_markdown(const json &report) {
  std::ostringstream out;
  bool measured = report.at("mode") == "measured";
  out << "# tessera bench: " << report.value("suite", "") << " (" << report.value("mode", "") << ")\n\n";
  out << report.value("description", "") << "\n\n";
  out << "- date " << report.value("date", "") << ", git " << report.value("git", "") << ", NVRTC "
      << report.value("nvrtc", "") << ", driver: " << report.value("driver", "") << "\n";
  out << "- device: " << report.value("device", std::string("none")) << "; tuned for " << report.value("arch", "")
      << ", top-" << report.value("topk", 0) << " + the default config, " << report.value("host_threads", 0)
      << " compile threads\n";
  if (report.contains("copy"))
    out << "- measured copy bandwidth: " << num(report["copy"], "gbps", "{:.0f}") << " GB/s; cuBLAS: "
        << report.value("cublas", "") << "\n";
  const json &s = report.at("summary");
  out << "- median tune time " << num(s, "median_tune_ms", "{:.0f}") << " ms over " << s.value("workloads_ok", 0)
      << " workloads";
  if (s.contains("geomean_topk_over_default"))
    out << "; geomean speed-up over the default config: top-k " << num(s, "geomean_topk_over_default", "{:.2f}")
        << "x, policy top-1 " << num(s, "geomean_top1_over_default", "{:.2f}") << "x";
  out << "\n\n";
  if (measured) {
    out << "| workload | rule | tune ms | default us | top-1 us | top-k us | vs default | cuBLAS us | GB/s | of copy "
           "| GFLOP/s | of cuBLAS | ok/cands |\n";
    out << "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  } else {
    out << "| workload | rule | tune ms | policy ms | schedule ms | codegen ms | NVRTC ms (sum) | compile wall ms | "
           "ok/cands |\n";
    out << "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  }
  for (const json &r : report.at("workloads")) {
    std::string name = r.at("workload");
    if (r.at("status") != "ok") {
      out << "| " << name << " | " << r.value("status", "error") << ": " << cell(r.value("error", "")) << " |\n";
      continue;
    }
    std::string cands = fmt::format("{}/{}", r.value("candidates_ok", 0), r.value("candidates", 0));
    if (measured) {
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", name,
                         r.value("rule", ""), num(r, "tune_ms", "{:.0f}"), num(r, "default_us", "{:.1f}"),
                         num(r, "top1_us", "{:.1f}"), num(r, "topk_us", "{:.1f}"),
                         num(r, "speedup_over_default", "{:.2f}x"), num(r, "cublas_us", "{:.1f}"),
                         num(r, "gbps", "{:.0f}"), num(r, "fraction_of_copy", "{:.0f}%", 100),
                         num(r, "gflops", "{:.0f}"), num(r, "fraction_of_cublas", "{:.0f}%", 100), cands);
    } else {
      const json &p = r.at("phases_ms");
      out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", name, r.value("rule", ""),
                         num(r, "tune_ms", "{:.0f}"), num(p, "policy", "{:.1f}"), num(p, "schedule", "{:.0f}"),
                         num(p, "codegen", "{:.0f}"), num(p, "nvrtc", "{:.0f}"), num(p, "compile_wall", "{:.0f}"),
                         cands);
    }
  }
  if (!measured)
    out << "\nNothing was measured on a device (" << report.value("device", std::string("no device"))
        << "): the times are the compile path only, policy + scheduling + codegen + NVRTC.\n";
  return out.str();
}

std::string tune_suite_svg(const json &report) {
  bool measured = report.at("mode") == "measured";
  std::vector<const json *> rows;
  for (const json &r : report.at("workloads"))
    if (r.at("status") == "ok") rows.push_back(&r);
  const int label_w = 230, bar_w = 520, row_h = measured ? 40 : 22, top = 50;
  int height = top + int(rows.size()) * row_h + 40;
  std::ostringstream svg;
  svg << fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      label_w + bar_w + 120, height);
  std::string title = measured ? "fraction of the ceiling (copy bandwidth; cuBLAS for matrix products)"
                               : "tune time up to the cubin (ms): policy, schedule, codegen, NVRTC";
  svg << fmt::format("<text x=\"10\" y=\"20\" font-size=\"14\">tessera bench {} on {}: {}</text>\n",
                     report.value("suite", ""), report.value("device", std::string("no device")), title);
  if (measured) {
    const char *names[] = {"default", "policy top-1", "top-k"};
    const char *colors[] = {"#bbbbbb", "#6fa8dc", "#1c4587"};
    for (int k = 0; k < 3; ++k)
      svg << fmt::format("<rect x=\"{}\" y=\"30\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"39\">{}</text>\n",
                         label_w + k * 110, colors[k], label_w + k * 110 + 14, names[k]);
    for (size_t i = 0; i < rows.size(); ++i) {
      const json &r = *rows[i];
      int y = top + int(i) * row_h;
      svg << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_w - 6, y + 20,
                         r.at("workload").get<std::string>());
      // Fraction of the ceiling for a time t: cuBLAS time / t, or achieved / copy bandwidth.
      auto fraction = [&](const char *key) -> double {
        if (!r.contains(key) || !r.at(key).is_number()) return 0;
        double t = r.at(key).get<double>();
        if (r.contains("cublas_us")) return r.at("cublas_us").get<double>() / t;
        if (r.contains("fraction_of_copy"))
          return r.at("fraction_of_copy").get<double>() * r.at("topk_us").get<double>() / t;
        return 0;
      };
      const char *keys[] = {"default_us", "top1_us", "topk_us"};
      for (int k = 0; k < 3; ++k) {
        double f = fraction(keys[k]);
        int w = int(std::min(f, 1.5) / 1.5 * bar_w);
        svg << fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"11\" fill=\"{}\"/>"
                           "<text x=\"{}\" y=\"{}\">{:.0f}%</text>\n",
                           label_w, y + 4 + k * 12, w, colors[k], label_w + w + 4, y + 13 + k * 12, f * 100);
      }
    }
    int x1 = label_w + bar_w * 2 / 3;
    svg << fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"black\" stroke-dasharray=\"4\"/>"
                       "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">100%</text>\n",
                       x1, top, height - 30, height - 16);
  } else {
    const char *keys[] = {"policy", "schedule", "codegen", "nvrtc"};
    const char *colors[] = {"#e69138", "#6aa84f", "#3d85c6", "#674ea7"};
    double most = 1;
    for (const json *r : rows) {
      double sum = 0;
      for (const char *k : keys) sum += r->at("phases_ms").value(k, 0.0);
      most = std::max(most, sum);
    }
    for (int k = 0; k < 4; ++k)
      svg << fmt::format("<rect x=\"{}\" y=\"30\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"39\">{} (CPU ms)</text>\n",
                         label_w + k * 120, colors[k], label_w + k * 120 + 14, keys[k]);
    for (size_t i = 0; i < rows.size(); ++i) {
      const json &r = *rows[i];
      int y = top + int(i) * row_h;
      svg << fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_w - 6, y + 14,
                         r.at("workload").get<std::string>());
      double x = label_w;
      for (int k = 0; k < 4; ++k) {
        double w = r.at("phases_ms").value(keys[k], 0.0) / most * bar_w;
        svg << fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"14\" fill=\"{}\"/>\n", x, y + 3, w,
                           colors[k]);
        x += w;
      }
      svg << fmt::format("<text x=\"{:.1f}\" y=\"{}\">wall {:.0f} ms</text>\n", x + 4, y + 14,
                         r.value("tune_ms", 0.0));
    }
  }
  svg << "</svg>\n";
  return svg.str();
}

std::vector<std::string> write_report(const std::string &prefix, const json &report, const std::string &markdown,
                                      const std::string &svg) {
  std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::vector<std::pair<std::string, std::string>> files = {
      {prefix + ".json", report.dump(1) + "\n"}, {prefix + ".md", markdown}, {prefix + ".svg", svg}};
  std::vector<std::string> paths;
  for (const auto &[path, text] : files) {
    std::ofstream f(path);
    f << text;
    if (!f) throw UserError("cannot write '" + path + "'");
    paths.push_back(path);
  }
  return paths;
}

std::vector<std::string> write_tune_suite(const json &report, const std::string &prefix) {
  return write_report(prefix, report, tune_suite_markdown(report), tune_suite_svg(report));
}

}  // namespace tessera::bench
