//===- tessera/rules/GeneralReduction.h - Several reductions of one row -----===//
//
// Matches the "reduce a row, then use it on the same row" programs: softmax,
// RMSNorm, layer norm. Once the elementwise blocks are inlined (exp(x - max),
// the mean, the reciprocal RMS, ...), the function must be
//
//   R_1, ..., R_n   reductions (n >= 1) over the row axes, each reducing a
//                   contiguous axis into an intermediate T_k[rows]
//   L               the last block, injective over [rows, cols], reading
//                   the T_k at its row axes (a broadcast over the columns)
//
// e.g. softmax after inlining: row_max (SR), row_sum (SR), B (SS).
//
// The schedule gives each row (or each of `rows_per_block` rows, one per
// threadIdx.y) to one thread block:
//
//   L:   row loops fused -> bx (blockIdx.x) / ry (threadIdx.y)
//        col loops fused -> c_t (threadIdx.x, `threads_x`) / c_o / c_u
//                           (unrolled, `unroll`) / c_v (vectorized, `vector`)
//   R_k: compute_at under the row loop (ry, or bx), its reduce loops fused and
//        split the same way: k_t (threadIdx.x, a cross-thread reduction:
//        per-thread partials, warp shuffles, shared memory) / k_o / k_u / k_v
//        (unrolled, annotated ir::kVectorLoadsAnnotation: one vector load of
//        `vector` elements where lowering proves it aligned)
//
// so each thread block reads its row once per block R_k and once for L, all
// loads coalesced (consecutive threads, consecutive elements), and the T_k
// never leave the chip: "local" (`local_intermediates`, the default: the
// all-reduce leaves the total in every thread, and lowering compacts the
// buffer to one element per thread, a register) or "shared" (one thread
// writes the total, a barrier, all read it). Shapes that do not divide the
// splits are masked by the splits' predicates; when the vector divides the
// row, the tail predicate covers whole vectors (a block around the vector
// loop: blockize) so that lowering keeps the vector accesses. The rows may
// be symbolic.
//
// Declined (with the reason): no reduction; a last block that is itself a
// reduction or has no axis beyond the rows (the reduction rule's pattern); a
// block between the reductions that can be neither inlined nor reduced; a
// contraction (matmul); a reduction along a non-contiguous axis, or an L
// whose contiguous axis is a row axis (column-wise normalisation: not
// coalesced this way); a symbolic reduce extent (compute_at bounds its loop
// by the int32 range, not by the extent).
//
// Not yet: elementwise per-row blocks (the mean, rsqrt) are inlined into
// every consumer, recomputed per element rather than once per row.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Rule.h"

namespace tessera::rules {

struct GeneralReductionConfig final : Config {
  int64_t threads_x = 256;       ///< threads per row (threadIdx.x), splitting every block's column loop
  int64_t rows_per_block = 1;    ///< rows per thread block, one per threadIdx.y
  int64_t vector = 1;            ///< elements per vector access, in every block (1, 2, 4, 8, 16)
  int64_t unroll = 4;            ///< the per-thread serial loops are split by this and unrolled (1: not)
  bool local_intermediates = true;   ///< per-row values in "local" (every thread a copy) instead of "shared"

  const char *rule() const override { return "general_reduction"; }
  Json to_json() const override;
  /// threads_x and rows_per_block within the threads and registers of a
  /// block, vector a power of two of at most memory.max_vector_bytes, unroll
  /// in [1, 64]. (A vector wider in bytes than one load, or not dividing the
  /// row, becomes scalar code in lowering, never a wrong answer.)
  void validate(const Arch &arch) const override;
  static GeneralReductionConfig from_json(const Json &j);
};

/// The general_reduction rule (registered in all_rules()).
const Rule &general_reduction_rule();

}  // namespace tessera::rules
