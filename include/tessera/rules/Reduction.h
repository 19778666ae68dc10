//===- tessera/rules/Reduction.h - One reduction, threads across it ---------===//
//
// Matches a function that is, once its elementwise blocks are inlined, one
// reduction block (any combiner the analysis recognises and threads can
// combine: + * max min, & | ^ on integers) followed by optional epilogue
// blocks over the same outputs (a cast, a scale: injective over the
// reduction's spatial iters, no broadcast):
//
//   for i, k in T.grid(rows, cols):
//     with T.block("B"): B[vi] = T.max(B[vi], A[vi, vk])     # + init
//
// The layout of the dominant read (the read with the most iters) decides the
// mapping, so that consecutive threads touch consecutive addresses:
//
// Inner reduction (the reduce axis is contiguous: row sum, row max, gemv):
// spatial loops fused, reduce loops fused (the contiguous one innermost), then
//   bx (blockIdx.x) / ry (threadIdx.y, `threads_y` rows side by side)
//     / k_t (threadIdx.x, `threads_x`) / k_o (serial) / k_u (unrolled, `unroll`)
//     / k_v (unrolled, `vector`)
// with vk = ((k_o * unroll + k_u) * threads_x + k_t) * vector + k_v: each row
// is reduced by a group of `threads_x` threads (a cross-thread reduction:
// per-thread partials, then warp shuffles / shared memory, lib/lower), each
// thread striding over the row `vector` contiguous elements at a time, so
// that a warp's loads are coalesced and each is one vector access (k_v is
// annotated ir::kVectorLoadsAnnotation; lowering keeps scalar loads where it
// cannot prove a vector aligned, e.g. a symbolic row length).
//
// Outer reduction (a spatial axis is contiguous: column sum):
//   bx (blockIdx.x) / s_t (threadIdx.x, `threads_x` x `vector` outputs) /
//     k_t (threadIdx.y, `threads_y` threads splitting the reduction) / k_o / k_u
//       / s_v (vectorized, `vector` adjacent outputs: a row segment per load)
// consecutive threads own consecutive outputs (coalesced), each reduces its
// share of the reduce axis serially; with threads_y > 1 the shares meet in a
// cross-thread step over threadIdx.y. Without one (threads_y = 1) the init
// is hoisted out of the reduce loop (decompose_reduction).
//
// Epilogues are computed under the row loop (reverse_compute_at): inner
// under ry (or bx), outer under s_t, each in a unit loop split over the
// reduce thread axis (threadIdx.x inner, threadIdx.y outer) so that only the
// first of the threads that reduced an element stores its epilogue (no two
// threads store one element). The reduced value they read lives in
// per-thread "local" memory (`local_intermediates`, the default: the
// all-reduce leaves the total in every thread, lowering compacts the buffer
// to one element, a register: no shared memory, no barrier), or in "shared"
// memory (one thread writes it, a barrier, all read it). Shapes that do not
// divide the splits are masked by the splits' predicates; symbolic extents
// are kept, but a symbolic reduce extent stays within one thread (threads_x
// = 1 inner, threads_y = 1 outer; other values are a ConfigError from
// apply): threads splitting it might all be masked, an empty reduction that
// the cross-thread lowering cannot reproduce.
//
// Declined (with the reason): several reduction blocks (general_reduction),
// an epilogue that broadcasts the reduced value over more axes
// (general_reduction) or reads it at other than its own iters, a
// contraction whose operands are reused along two output axes (matmul,
// conv2d), anything guarded or not bound one-to-one to loops from 0.
//
// An outer `vector` needs threads_y > 1: the cross-thread lowering keeps
// s_v in place with an array of per-thread partials (one register each).
// Not yet: a long symbolic row is reduced by one thread.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Rule.h"

namespace tessera::rules {

struct ReductionConfig final : Config {
  /// Inner: threads reducing one row together (threadIdx.x). Outer: threads
  /// along the contiguous output axis (threadIdx.x).
  int64_t threads_x = 256;
  /// Inner: rows reduced side by side in a block, one group of threads_x
  /// each (threadIdx.y). Outer: threads splitting the reduce axis
  /// (threadIdx.y, a cross-thread step); 1 = each thread reduces alone.
  int64_t threads_y = 1;
  /// The per-thread serial reduce loop is split by this and the inner part
  /// unrolled (1: not unrolled).
  int64_t unroll = 4;
  /// Contiguous elements each thread reads per step, one vector access (a
  /// power of two; 1: scalar): inner along the row, outer along the outputs
  /// (then threads_y > 1). Optional in JSON (1 when absent: configs stored
  /// before it existed).
  int64_t vector = 1;
  /// The reduced value an epilogue reads lives in per-thread "local" memory
  /// (true) or in "shared" memory (false). Unused without an epilogue.
  bool local_intermediates = true;

  const char *rule() const override { return "reduction"; }
  Json to_json() const override;
  /// threads_x and threads_y in [1, max threads], their product within the
  /// threads and registers of a block, unroll in [1, 64].
  void validate(const Arch &arch) const override;
  static ReductionConfig from_json(const Json &j);
};

/// The reduction rule (registered in all_rules()).
const Rule &reduction_rule();

}  // namespace tessera::rules
