//===- lib/tune/CpuTune.cpp - Every CPU schedule of a function, timed -------===//
#include "tessera/tune/CpuTune.h"

#include <algorithm>
#include <functional>

#include "tessera/runtime/Backend.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Verify.h"
#include "tessera/support/Error.h"

namespace tessera::tuning {

CpuTuneResult tune_for_cpu(const ir::PrimFunc &f, const cpu::CpuArch &arch, const CpuTuneOptions &options) {
  std::unique_ptr<runtime::Backend> llvm = runtime::make_backend("llvm", {.fuse_multiply_add = true});
  if (std::string why = llvm->unavailable(); !why.empty()) throw UserError("the CPU target needs the LLVM JIT: " + why);
  if (!f.shape_vars().empty())
    throw UserError("the CPU target times '" + f.name() + "' at given sizes: bind '" + f.shape_vars()[0].name() +
                    "' (and the other symbolic sizes) with --dim");
  CpuTuneResult result;
  result.threads = runtime::llvm_jit_threads();
  std::vector<CpuCandidate> &cands = result.candidates;
  cands.push_back({.name = "plain (as written)", .func = f});
  // A candidate the schedule fails for keeps the reason, and is not run.
  auto add = [&](CpuCandidate cand, const std::function<ir::PrimFunc()> &schedule) {
    try {
      cand.func = schedule();
    } catch (const Error &e) {
      cand.error = e.what();
    }
    cands.push_back(std::move(cand));
  };
  for (const cpu::CpuMatmulConfig &c : cpu::cpu_matmul_candidates(f, arch))
    add({.name = "matmul " + c.str(), .config = c}, [&] { return cpu::schedule_for_cpu(f, arch, c).func; });
  for (const cpu::CpuLoopConfig &c : cpu::cpu_loop_candidates(f))
    add({.name = "loops " + c.str(), .loops = c}, [&] { return cpu::schedule_loops_for_cpu(f, c); });

  std::vector<runtime::NDArray> inputs = runtime::make_random_args(f, {}, options.seed);
  runtime::Oracle used = runtime::Oracle::Auto;
  runtime::Reference want = runtime::compute_reference(f, inputs, runtime::Oracle::Auto, &used);
  result.reference = runtime::oracle_name(used);
  for (CpuCandidate &c : cands) {
    if (!c.error.empty()) continue;
    try {
      std::unique_ptr<runtime::Executable> exe = llvm->build(c.func);
      std::vector<runtime::NDArray> args = inputs;
      exe->run(args);
      const runtime::ChecksSummary checks = runtime::summarize_checks(runtime::check_outputs(f, args, want));
      c.error_ratio = checks.worst_ratio;
      c.ok = checks.ok();
      if (!c.ok) c.error = "wrong: " + checks.failures;
      if (c.ok) c.median_ms = exe->time(args, options.timing).median_ms;
    } catch (const Error &e) {
      c.ok = false;
      c.error = e.what();
    }
  }
  result.plain_ms = cands[0].ok ? cands[0].median_ms : NAN;
  std::stable_sort(cands.begin(), cands.end(), [](const CpuCandidate &a, const CpuCandidate &b) {
    return a.ok != b.ok ? a.ok : (a.ok && a.median_ms < b.median_ms);
  });
  return result;
}

}  // namespace tessera::tuning
