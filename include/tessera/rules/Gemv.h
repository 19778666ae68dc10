//===- tessera/rules/Gemv.h - Matrix-vector products --------------------------===//
//
// Matches one reduction block `y[b, m] += W[m, k] * x[b, k]`: a "matrix"
// read that uses the row iter m and the reduce iter k (in either layout:
// W[m, k], k contiguous, is the inner reduction; W[k, m], m contiguous, the
// outer reduction), a "vector" read that uses k and an optional leading batch
// iter b of constant extent at most kGemvMaxBatch (low-batch decoding), not m;
// operands may be cast (float16 loads, float32 accumulation). Around it:
//   - a prologue: blocks before it that can be inlined, such as an int4
//     dequantisation `W[i, j] = ((Wq[i, j // 8] >> 4 * (j % 8)) & 15) - 8) *
//     scale[i, j // 128]`, which is inlined so that the packed words are
//     loaded once per step and decoded in registers;
//   - an epilogue: injective blocks after it over the output's (b, m) space
//     (a cast, a bias), computed by the thread block that owns the rows.
// A dot product (no m), a matmul (both operands with their own spatial
// iter) and batched gemvs whose batch indexes the matrix are declined with a
// reason.
//
// Inner reduction, per thread block `threads_y` rows, each reduced by
// `threads_x` threads (a cross-thread reduction over threadIdx.x); per step
// every thread takes `reduce_step * vector` contiguous k (chunks of adjacent
// threads adjacent: coalesced):
//
//   k = ((ko * threads_x + tx) * reduce_step + rs) * vector + v
//   for bx (blockIdx.x), ty (threadIdx.y): rows
//     [x_shared <- x, all threads, vector loads, once]           (x_in_shared)
//     for tx (threadIdx.x):
//       for ko:  W_local <- the step's weights (vector loads; packed words)
//                x_local <- the step's x
//                for rs, v, b (unrolled): partial[b] += W_local * x_local
//     all-reduce of partial[b] over tx (warp shuffles); acc (shared) <- total
//     epilogue: one thread per output element
//
// That staged form needs the partial sums in a nest of their own (the
// cross-thread lowering wants the reduction alone under its thread loop), so
// it goes through rfactor, which needs k constant and a multiple of
// threads_x * reduce_step * vector. Otherwise (a tail, or a symbolic k) the
// loads are direct and masked, with the batch loop outside the reduction.
// threads_x == 1 is one thread per row: a serial reduction with the staged
// loads and every b per weight load.
//
// Outer reduction, threads along m (coalesced rows of W):
//   - threads_y == 1: each thread owns `vector` adjacent m (vector loads of
//     W[k, m:m+vector], every b per load; with symbolic sizes they lie
//     threads_x apart) and reduces k serially, `reduce_step` k per step, in
//     registers;
//   - threads_y > 1: k is also split over threadIdx.y (each ty a contiguous
//     range; a cross-thread reduction through shared memory); a thread's
//     `vector` rows lie threads_x apart and are reduced in turn.
//
// Shapes that divide no tile are masked by the splits' predicates (k need not
// be a multiple of the vector, nor of the 8 nibbles of a packed word).
// Limits of the lowering the defaults respect: a cross-thread reduction over
// a symbolic k does not lower yet, so a symbolic k gets threads_x == 1
// (inner) or threads_y == 1 (outer).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Rule.h"

namespace tessera::rules {

/// The largest batch (low-batch gemv) the rule takes; beyond it the batch is
/// a matmul's N.
inline constexpr int64_t kGemvMaxBatch = 8;

struct GemvConfig final : Config {
  /// Inner: threads reducing one row (threadIdx.x). Outer: threads along m (threadIdx.x).
  int64_t threads_x = 32;
  /// Inner: rows per thread block (threadIdx.y). Outer: threads splitting k (threadIdx.y).
  int64_t threads_y = 4;
  /// Inner: contiguous k elements per vector load. Outer: rows per thread.
  int64_t vector = 8;
  /// Vector loads (inner) or k values (outer) each thread stages per step.
  int64_t reduce_step = 1;
  /// Unroll the per-step loops.
  bool unroll = true;
  /// Stage the whole vector x (every batch row) in shared memory once per
  /// thread block; needs a constant k.
  bool x_in_shared = false;

  const char *rule() const override { return "gemv"; }
  Json to_json() const override;
  /// Threads per block, vector and step sizes, and the registers the staged
  /// elements take (at most half of max_regs_per_thread for 32-bit elements).
  void validate(const Arch &arch) const override;
  static GemvConfig from_json(const Json &j);
};

/// The gemv rule (registered in all_rules()).
const Rule &gemv_rule();

}  // namespace tessera::rules
