//===- tessera/rules/Elementwise.h - Injective programs, one thread per chunk -===//
//
// Matches functions whose blocks are all spatial (elementwise, broadcast,
// reshape/transpose-like copies, fused chains): every block but the last
// must be inlinable into its consumers, and the last must be injective
// with a trivial binding (loops starting at 0, one per iter var). The
// schedule inlines the producers, fuses the output's loops and splits the
// fused loop as
//
//   bx (blockIdx.x) / per_thread / tx (threadIdx.x, `threads`) / v (vectorized, `vector`)
//
// so consecutive threads touch consecutive `vector`-element chunks
// (coalesced), each thread does `per_thread` chunks strided by a whole block
// (unrolled when `unroll`). A tail that does not fill the last block is
// masked by the split's predicate.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Rule.h"

namespace tessera::rules {

struct ElementwiseConfig final : Config {
  int64_t threads = 256;    ///< threads per block
  int64_t vector = 1;       ///< contiguous elements per thread and step (1, 2, 4, 8, 16)
  int64_t per_thread = 1;   ///< steps per thread
  bool unroll = true;       ///< unroll the per-thread loop

  const char *rule() const override { return "elementwise"; }
  Json to_json() const override;
  void validate(const Arch &arch) const override;
  static ElementwiseConfig from_json(const Json &j);
};

/// The elementwise rule (registered in all_rules()).
const Rule &elementwise_rule();

}  // namespace tessera::rules
