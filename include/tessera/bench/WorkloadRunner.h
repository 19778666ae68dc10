//===- tessera/bench/WorkloadRunner.h - The workload corpus at full size on a GPU ---===//
//
// Every workload of workloads/workloads.json at its FULL size, as the rules
// schedule it without a policy:
//   1. specialise the sizes (the variables the manifest keeps symbolic stay
//      symbolic), rules::apply_default_schedule for the Arch, and build it
//      with runtime::CudaFunction (lower, CUDA C, NVRTC cubin);
//   2. run it on random inputs and check every output against the float64
//      reference of the unscheduled function with its rounding-error bounds
//      (tune/Reference.h: the interpreter when small, else the fallback
//      rule's float64 kernel on the device; runtime/Verify.h decides);
//   3. time it (KernelTimer: warm-up, median, L2 flushed when the buffers fit),
//      and time cuBLAS on its GEMM equivalent (if any) the same way;
//   4. derive the achieved bandwidth (unique input and output bytes over the
//      median) as a fraction of the device's copy bandwidth, measured once,
//      and for matrix products the GFLOP/s and the fraction of cuBLAS's speed
//      (cuBLAS time / tessera time: 1 is parity).
// A dry run stops after step 1 (no device needed: the Arch is a preset) and
// records schedule and build times, so everything up to the cubin is testable
// on a machine without a GPU.
//
//   SuiteOptions o{.dry_run = true, .only = {"add_f16", "matmul_nt_f16"}};
//   nlohmann::json report = run_workload_suite(o);
//   std::cout << markdown_report(report);
//
// A failing workload (a schedule, build or launch error, a wrong result) is
// recorded in its row ("status") and the others still run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tessera/runtime/Cublas.h"
#include "tessera/runtime/KernelTimer.h"

namespace tessera::bench {

struct SuiteOptions {
  /// Schedule and compile only; no device is used.
  bool dry_run = false;
  /// The Arch preset a dry run schedules and compiles for; empty: the
  /// device's when there is one, else "h100". A measured run always uses
  /// runtime::detect_arch() (UserError when this is set).
  std::string arch;
  /// Names of the workloads to run; empty: all. An unknown name is a
  /// UserError listing the known ones.
  std::vector<std::string> only;
  /// Recorded in the report.
  std::string git = "unknown";
  /// For every timed kernel, tessera's and cuBLAS's.
  runtime::TimingOptions timing;
  /// Called with each workload's row as it is done (the suite's progress:
  /// a run cut short by a time limit still shows what it measured).
  std::function<void(const nlohmann::json &row)> on_row;
};

/// Runs the suite (see the file comment) and returns the report: the run
/// environment (BenchEnvironment.h), "mode" ("measured" or "dry run"),
/// "arch", and for a measured run "copy" and "cublas", then "workloads": one
/// object per workload with at least "workload", "expected_rule", "rule",
/// "sizes" and "status" ("ok", "compiled" in a dry run, "mismatch" or "error"
/// with "error"). A measured run needs a usable driver (RuntimeError otherwise).
nlohmann::json run_workload_suite(const SuiteOptions &options);

/// The report as Markdown: a header (date, device, driver, NVRTC, git, copy
/// bandwidth, cuBLAS) and one table row per workload.
std::string markdown_report(const nlohmann::json &report);

/// Times cuBLAS on `g` with random operands of its dtypes and shapes.
runtime::TimingResult time_cublas_gemm(const runtime::Cublas &blas, const runtime::GemmDesc &g,
                                       const runtime::TimingOptions &timing);

/// True when every workload's status is "ok" or "compiled".
bool all_passed(const nlohmann::json &report);

}  // namespace tessera::bench
