//===- tessera/bench/CpuSuite.h - `tessera bench --target cpu`: a suite on the CPU --===//
//
// The CPU target's benchmark (issue 17): for every workload of a suite (the
// format of TuneSuite.h; bench/suites/cpu.json by default), at its sizes,
//   - every CPU schedule verified and timed by the LLVM JIT on this
//     machine's cores (tune/CpuTune.h): the function as written ("plain")
//     and the fastest, with the speed-up;
//   - the physical ceilings measured in the same run: a float32 matrix
//     product by Eigen on the same threads (rows of C split over them) for
//     each workload that is one (WorkloadFacts.h's GEMM, float32 or float64
//     operands), and the bandwidth of a large memcpy on the same threads,
//     which memory-bound workloads (no flops) are judged against.
//
//   nlohmann::json report = run_cpu_suite({.suite = "cpu"});
//   write_cpu_suite(report, "bench/results/2026-11-27-cpu");   // .json .md .svg
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tessera::bench {

struct CpuSuiteOptions {
  std::string suite = "cpu";
  /// A CPU preset or "host" (cpu/CpuArch.h).
  std::string cpu = "host";
  std::vector<std::string> only;
  std::string git = "unknown";
  /// Seconds for the whole suite (0: none), as TuneSuiteOptions::budget_s.
  double budget_s = 0;
  std::function<void(const nlohmann::json &report)> progress;
};

/// The bandwidth of std::memcpy of `bytes` split over `threads` threads:
/// 2 * bytes (read + write) / the median time, in GB/s.
double measure_memcpy_gbps(size_t bytes, unsigned threads);

/// Runs the suite on this CPU; a workload that fails gets "status": "error"
/// and the others still run.
nlohmann::json run_cpu_suite(const CpuSuiteOptions &options);
std::string cpu_suite_markdown(const nlohmann::json &report);
/// Writes PREFIX.json, PREFIX.md and PREFIX.svg (speed-ups over the plain
/// function, and the fractions of the ceilings); the paths written.
std::vector<std::string> write_cpu_suite(const nlohmann::json &report, const std::string &prefix);

}  // namespace tessera::bench
