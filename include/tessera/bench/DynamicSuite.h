//===- tessera/bench/DynamicSuite.h - `tessera bench --suite dynamic`: regret curves ===//
//
// A dynamic suite is a suite file with "kind": "dynamic" whose workloads give
// ranges instead of sizes:
//   {"name": "qkv_m", "file": "workloads/matmul_nt_f16.py", "dims": {"n": 12288, "k": 4096},
//    "ranges": ["m=1:4096"], "hot": ["m=1"], "max_kernels": 8}
// For each: the plan (tune/DynamicPlan.h) and its time, and the predicted
// regret curve over the sweep of tuning::regret_sweep, against one kernel
// sized at the hint and power-of-two buckets (tuning::predict_regret):
// geomean, p95 and max of each. Without a GPU these are the cost model's
// predictions (what the report says); measured regret needs a device.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::bench {

struct DynamicSuiteOptions {
  std::string path;  ///< the suite file (find_suite)
  std::string arch;  ///< empty: the device's, else h100
  std::vector<std::string> only;
  std::string git = "unknown";
};

/// True when the suite file at `path` is a dynamic one.
bool is_dynamic_suite(const std::string &path);
nlohmann::json run_dynamic_suite(const DynamicSuiteOptions &options);
std::string dynamic_suite_markdown(const nlohmann::json &report);
/// One chart per one-symbol workload: regret against the size (log scale)
/// for the plan, one kernel and power-of-two buckets.
std::string dynamic_suite_svg(const nlohmann::json &report);
/// PREFIX.json, .md, .svg; returns the paths.
std::vector<std::string> write_dynamic_suite(const nlohmann::json &report, const std::string &prefix);

}  // namespace tessera::bench
