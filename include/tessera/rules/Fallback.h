//===- tessera/rules/Fallback.h - A correct kernel for any valid program ----===//
//
// The last rule: it matches every function and never refuses a valid one.
// It inlines what can be inlined, then
//   - when the body is one loop nest whose outer loops are parallel
//     (analysis::why_not_parallel: iterations touch disjoint data), fuses
//     those loops and splits them over blockIdx.x / threadIdx.x (`threads`
//     per block); loops that start elsewhere than 0 are bound as they are;
//     everything inside (reductions, loop-carried dependences, branches)
//     runs serially in each thread;
//   - otherwise (statements outside blocks, several loop nests, no parallel
//     loop: a prefix sum) runs the whole function as one GPU thread, with
//     its intermediate buffers in thread-local memory.
// Correct first: the specialised rules exist to be fast.
//
// Not yet: functions with several loop nests and large intermediates need
// one kernel per nest (a multi-kernel lowering); the fallback says so with a
// UserError when the intermediates exceed `max_local_bytes`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Rule.h"

namespace tessera::rules {

struct FallbackConfig final : Config {
  int64_t threads = 256;             ///< threads per block on the parallel path
  int64_t max_local_bytes = 262144;  ///< intermediates one thread may hold on the serial path (CUDA allows 512 KiB of local memory per thread)

  const char *rule() const override { return "fallback"; }
  Json to_json() const override;
  void validate(const Arch &arch) const override;
  static FallbackConfig from_json(const Json &j);
};

/// The fallback rule (last in all_rules()).
const Rule &fallback_rule();

}  // namespace tessera::rules
