//===- lib/tune/Measure.h - Verifying and timing candidates on the device --===//
//
// Step 4 of fast_tune (tune/FastTune.h): one set of random inputs, the
// float64 reference with its error bounds (tune/Reference.h), then every
// built candidate run, checked and timed, and the leaders re-timed interleaved.
// Private to lib/tune.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tessera/runtime/Backend.h"
#include "tessera/tune/FastTune.h"

namespace tessera::tuning {

using Clock = std::chrono::steady_clock;

/// Milliseconds since `t` (the phase timings of fast_tune).
inline double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct MeasureStats {
  double reference_ms = 0, measure_ms = 0;
  std::string reference;  ///< what computed the reference (ComputedReference::how)
  /// Set when nothing could be measured at all (the inputs or the reference
  /// could not be made); the candidates are then untouched and fast_tune
  /// reports the run as unmeasured with this reason.
  std::string error;
  /// Where the candidates ran (CandidateMeasurer::isolation) and how many
  /// worker processes were started.
  std::string isolation;
  int workers_started = 0;
};

/// Fills status, measured, time_us and error_ratio of every report whose
/// function is built (fns[i] non-null; the others keep their failure): each
/// run and timed by its backend (runtime/Backend.h), checked against the
/// reference of `func`.
MeasureStats measure_candidates(const ir::PrimFunc &func, const Arch &arch, const TuneOptions &options,
                                const std::vector<CandidateReport *> &reports,
                                const std::vector<const runtime::Executable *> &fns);

/// Values for every symbolic shape variable of `func`: `dims` where given,
/// else `hint`.
runtime::DimBindings complete_dims(const ir::PrimFunc &func, const runtime::DimBindings &dims, int64_t hint);

/// Bytes of every buffer parameter of `func` with `dims` bound (a dimension
/// that stays symbolic counts as 1).
double argument_bytes(const ir::PrimFunc &func, const runtime::DimBindings &dims);


}  // namespace tessera::tuning
