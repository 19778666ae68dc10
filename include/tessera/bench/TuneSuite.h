//===- tessera/bench/TuneSuite.h - `tessera bench`: fast_tune over a named suite ----===//
//
// A suite is a JSON file in bench/suites/ (or any path):
//   {"suite": "llm_decode", "description": "...",
//    "workloads": [{"name": "gemv_f16_4096x4096", "file": "workloads/gemv_f16.py",
//                   "dims": {"m": 4096, "k": 4096}}, ...]}
// (files relative to the repository). For every workload, at its sizes:
//   - fast_tune with the policy's top-k, timed as a whole: the tune time
//     (wall, compile + verification + timing) and its phases;
//   - the times of the rule's default config, of the policy's top-1 (what a
//     tuner without measurements would pick) and of the winner of the top-k,
//     and the speed-up of the winner over the default;
//   - cuBLAS on the equivalent GEMM where there is one (WorkloadFacts.h);
//   - achieved bandwidth (unique bytes / time) as a fraction of the measured
//     device-to-device copy bandwidth, and for matrix products GFLOP/s and
//     the fraction of cuBLAS's speed.
// Without a device (or with measure = false) it stops at the cubin: tune
// times and their split between policy, scheduling, codegen and NVRTC are
// still real measurements of the compile path, and nothing else is reported.
//
//   TuneSuiteOptions o{.suite = "seed004", .topk = 20};
//   nlohmann::json report = run_tune_suite(o);
//   write_tune_suite(report, "bench/results/2026-11-21-h100");  // .json .md .svg
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"

namespace tessera::bench {

struct TuneSuiteOptions {
  /// A name in bench/suites/ ("seed004", "llm_decode", "smoke") or a .json path.
  std::string suite = "seed004";
  /// The Arch to tune for; empty: the device's (Arch::detect) when there is
  /// one, else h100 (compile only).
  std::string arch;
  int64_t topk = 20;
  /// Verify and time on the device (when there is one).
  bool measure = true;
  /// Workload names to run; empty: all (an unknown name is a UserError).
  std::vector<std::string> only;
  unsigned threads = 0;
  std::string git = "unknown";
  /// Wall-clock budget for the whole suite in seconds (0: none). A workload
  /// is not started when the time left is less than the median tune time of
  /// the workloads done so far; it gets "status": "skipped" with the reason.
  double budget_s = 0;
  /// Called with the report so far after every workload (for writing partial
  /// results that survive a killed run); may be empty.
  std::function<void(const nlohmann::json &report)> progress;
};

/// A workload file named in a suite: as given when it exists or is absolute,
/// else relative to support::data_root().
std::string source_path(const std::string &relative);
/// A JSON file; UserError when it cannot be read or is not JSON.
nlohmann::json read_json(const std::string &path);
/// Whether a CUDA device is usable here.
bool have_device();
/// The Arch a suite runs for: `name` (a preset) when given, else the
/// device's, else h100.
Arch suite_arch(const std::string &name);
/// The suite file for a name or path; UserError listing the known suites.
std::string find_suite(const std::string &name_or_path);

/// A suite file's JSON and the workloads of it to run: all, or those named in
/// `only` (UserError for a name the suite lacks, or a malformed suite).
struct SuiteSelection {
  nlohmann::json suite;
  std::vector<nlohmann::json> workloads;
};
SuiteSelection select_workloads(const std::string &suite_name_or_path, const std::vector<std::string> &only);
/// A suite workload's function with its "dims" bound (analysis::specialize).
ir::PrimFunc load_workload(const nlohmann::json &workload);
/// {"workload", "file", "dims"} of a suite workload: the start of its row.
nlohmann::json workload_row(const nlohmann::json &workload);
/// Appends to report["workloads"], in order, the row `run` gives for each
/// workload, or, once a budget (seconds; 0: none) has less left than the
/// median time of the workloads run so far, a row with "status": "skipped"
/// and the reason; `after_each(report)` after every row.
void run_workloads(const std::vector<nlohmann::json> &workloads, double budget_s, nlohmann::json &report,
                   const std::function<nlohmann::json(const nlohmann::json &)> &run,
                   const std::function<void(nlohmann::json &)> &after_each);

/// Runs the suite; see the file comment. A workload that fails (no candidate
/// survives, a load error) gets "status": "error" with the message, and the
/// others still run; one left out for the budget gets "status": "skipped".
nlohmann::json run_tune_suite(const TuneSuiteOptions &options);

/// The report as a Markdown document: the environment and one table row per workload.
std::string tune_suite_markdown(const nlohmann::json &report);

/// A bar chart (SVG): per workload, the default config, the policy's top-1
/// and the top-k winner as a fraction of the ceiling (copy bandwidth, or
/// cuBLAS for matrix products) when measured, else the tune time split into
/// its phases.
std::string tune_suite_svg(const nlohmann::json &report);

/// Writes PREFIX.json (the report), PREFIX.md and PREFIX.svg (directories
/// created); returns the three paths. UserError when one cannot be written.
std::vector<std::string> write_report(const std::string &prefix, const nlohmann::json &report,
                                      const std::string &markdown, const std::string &svg);
/// Writes PREFIX.json, PREFIX.md and PREFIX.svg (directories created);
/// returns the three paths.
std::vector<std::string> write_tune_suite(const nlohmann::json &report, const std::string &prefix);

}  // namespace tessera::bench
