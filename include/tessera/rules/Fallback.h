//===- tessera/rules/Fallback.h - A correct kernel for any valid program ----===//
//
// The last rule: it matches every function and never refuses a valid one.
// It inlines what can be inlined, then schedules each top-level loop nest
// on its own (a function with several nests runs as one kernel per nest,
// lower::split_kernels, with its intermediates in global memory):
//   - a nest whose outer loops are parallel (analysis::why_not_parallel:
//     iterations touch disjoint data) has those loops fused and split over
//     blockIdx.x / threadIdx.x (`threads` per block); loops that start
//     elsewhere than 0 are bound as they are; everything inside (reductions,
//     loop-carried dependences, branches) runs serially in each thread;
//   - any other nest (a prefix sum) runs as one GPU thread, and statements
//     outside loops as their own one-thread kernel.
// Correct first: the specialised rules exist to be fast.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Rule.h"

namespace tessera::rules {

struct FallbackConfig final : Config {
  int64_t threads = 256;  ///< threads per block on the parallel path

  const char *rule() const override { return "fallback"; }
  Json to_json() const override;
  void validate(const Arch &arch) const override;
  static FallbackConfig from_json(const Json &j);
};

/// The fallback rule (last in all_rules()).
const Rule &fallback_rule();

}  // namespace tessera::rules
