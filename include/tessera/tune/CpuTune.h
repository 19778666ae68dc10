//===- tessera/tune/CpuTune.h - Every CPU schedule of a function, timed ----===//
//
// The CPU target's tuner (`tessera tune --target cpu`, `tessera bench
// --target cpu`): the function as it is, then each tiling of its matmul
// (cpu/CpuSchedule.h) or each loop order of its one loop nest
// (cpu/CpuLoops.h), built by the LLVM JIT (runtime/Backend.h; float32 and
// float64 multiply-adds fused, as NVRTC fuses them on the GPU), run on the
// same random inputs, checked against the float64 reference (runtime/
// Verify.h: the LLVM oracle when there is one) and timed on this machine's
// cores (runtime::llvm_jit_threads()).
//
//   CpuTuneResult r = tune_for_cpu(f, cpu::CpuArch::detect());
//   if (r.ok()) print(r.best().func), r.best().median_ms / r.plain_ms;
//
// With a database (CpuTuneOptions::db) the stored best of the same workload
// on the same CPU (cpu_tuning_key) is re-applied without tuning; else every
// candidate is tuned and appended, rule "cpu", config {"plain": true}, a
// CpuMatmulConfig's or a CpuLoopConfig's JSON, as the GPU tuner's records are.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "tessera/cpu/CpuLoops.h"
#include "tessera/cpu/CpuSchedule.h"
#include "tessera/ir/Func.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/tune/Database.h"

namespace tessera::tuning {

struct CpuCandidate {
  /// "plain (as written)", "matmul {config}" or "loops {config}".
  std::string name;
  std::optional<cpu::CpuMatmulConfig> config;
  std::optional<cpu::CpuLoopConfig> loops;
  ir::PrimFunc func;
  /// Built, ran and matched the reference.
  bool ok = false;
  /// Why not, when !ok.
  std::string error;
  double median_ms = NAN;
  /// The largest error / bound over the outputs (runtime::OutputCheck).
  double error_ratio = 0;
};

struct CpuTuneResult {
  /// Verified candidates fastest first, then the failures in their order.
  std::vector<CpuCandidate> candidates;
  /// The function as written (NAN when it failed).
  double plain_ms = NAN;
  /// What computed the reference ("llvm" or "interpreter").
  std::string reference;
  unsigned threads = 1;
  /// The one candidate is the database's stored best (nothing was timed now).
  bool from_db = false;
  /// Why the database was not used, or its best could not be re-applied ("" when it was, or none was given).
  std::string db_note;
  bool ok() const { return !candidates.empty() && candidates[0].ok; }
  const CpuCandidate &best() const { return candidates.at(0); }
};

/// The result as JSON (`tessera tune --target cpu --json`): each candidate's
/// name, config (the rule's JSON, null for the plain function), verdict,
/// error, median and error ratio, then the run's fields.
nlohmann::json to_json(const CpuTuneResult &r);

struct CpuTuneOptions {
  runtime::TimingOptions timing{.warmup_ms = 0, .measure_ms = 300, .min_reps = 3, .max_reps = 100};
  uint64_t seed = 1;
  /// Where to look up the stored best and to append what was measured (none: nullptr).
  Database *db = nullptr;
};

/// The database key of `f` timed on `arch`: the workload hash, "cpu/NAME/Cc/Vb/Tt"
/// (cores, vector bits, the JIT's threads), nvrtc and driver "none", this tessera.
TuningKey cpu_tuning_key(const ir::PrimFunc &f, const cpu::CpuArch &arch);

/// See the file comment. UserError when the LLVM JIT is not in this build or
/// `f` still has symbolic sizes (bind them first: analysis::specialize).
CpuTuneResult tune_for_cpu(const ir::PrimFunc &f, const cpu::CpuArch &arch, const CpuTuneOptions &options = {});

}  // namespace tessera::tuning
