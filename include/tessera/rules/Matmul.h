//===- tessera/rules/Matmul.h - Shared-memory tiled GEMM on CUDA cores -----===//
//
// Matches a function with exactly one reduction block that
// analysis::match_matmul accepts (C[b.., i, j] += A[..] * B[..], layouts nn,
// nt, tn, tt, batched, operands possibly cast, e.g. float16 inputs into a
// float32 accumulator), one iter per M, N and K role, trivially bound, plus
// any number of inlinable prologue blocks producing A or B (a cast, a
// dequantisation) and an elementwise epilogue chain consuming C (the cast
// back to float16, bias + ReLU). Extents may be symbolic.
//
// The schedule is the classic SIMT GEMM (rules/GemmSchedule.h has the loop
// structure): a thread block computes block_m x block_n outputs with
// (block_m / thread_m) x (block_n / thread_n) threads, threadIdx.x along N;
// each thread owns a contiguous thread_m x thread_n accumulator tile in
// registers. Per K step of block_k, the block's A and B tiles are fetched
// into shared memory by all threads in `vector_a` / `vector_b`-element
// chunks (coalesced, vector moves when aligned), B in K-major layout (for
// "nt"/"tt" transposed on the way in, so that each thread's B slice is one
// contiguous vector load, `pad_b` elements added to its rows against bank
// conflicts of the transposing stores); A row-major [M, K] (a warp reads one
// broadcast row when threadIdx.x covers a warp; `pad_a` pads rows against
// conflicts otherwise) or, when A is stored [K, M] ("tn"/"tt"), K-major with
// a register fragment like B. The epilogue is computed on the registers
// and stored `vector_c` elements at a time. Tiles past the edges (shapes
// that divide nothing, symbolic m) are masked by predicates.
//
// Config, with the workload facts validate() needs (element sizes) copied
// from the match by default_config:
//   {"rule": "matmul", "block_m": 64, "block_n": 128, "block_k": 16,
//    "thread_m": 8, "thread_n": 4, "vector_a": 4, "vector_b": 4,
//    "vector_c": 4, "pad_a": 0, "pad_b": 0, "unroll": true, "stages": 1,
//    "a_bytes": 4, "b_bytes": 4, "acc_bytes": 4}
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Rule.h"

namespace tessera::rules {

struct MatmulConfig final : Config {
  int64_t block_m = 64;   ///< output rows per thread block
  int64_t block_n = 128;  ///< output columns per thread block
  int64_t block_k = 16;   ///< K step: reduction elements staged in shared memory at a time
  int64_t thread_m = 8;   ///< output rows per thread (divides block_m)
  int64_t thread_n = 4;   ///< output columns per thread (divides block_n)
  int64_t vector_a = 4;   ///< A elements per thread and fetch step (1, 2, 4, 8, 16)
  int64_t vector_b = 4;   ///< B elements per thread and fetch step (1 when B is transposed on the way in)
  int64_t vector_c = 4;   ///< output elements per store (divides thread_n)
  int64_t pad_a = 0;      ///< elements added to each row of the A tile in shared memory
  int64_t pad_b = 0;      ///< elements added to each row of the (K-major) B tile
  bool unroll = true;     ///< unroll the loop over the K step
  /// Shared-memory tiles in flight: 1 fetches each K step's tiles, then
  /// computes on them; S > 1 (cp.async, Ampere and later) copies the tiles
  /// of step t + S - 1 while step t computes, in S buffers (GemmSchedule.h).
  int64_t stages = 1;
  static constexpr int64_t kMaxStages = 4;
  int64_t a_bytes = 4;    ///< workload fact: bytes per A element (2 for float16)
  int64_t b_bytes = 4;    ///< workload fact: bytes per B element
  int64_t acc_bytes = 4;  ///< workload fact: bytes per accumulator element

  const char *rule() const override { return "matmul"; }
  Json to_json() const override;
  /// Threads, shared memory (A and B tiles with their padding, at their
  /// element sizes) against the opt-in maximum, registers per thread and per
  /// block, vector widths against the widest move, and consistency.
  void validate(const Arch &arch) const override;
  static MatmulConfig from_json(const Json &j);

  int64_t threads() const { return (block_m / thread_m) * (block_n / thread_n); }
  /// validate() without the shared memory check, errors under `rule` (the
  /// conv2d config checks its GEMM view this way and sizes its own tiles).
  void check_common(const char *rule, const Arch &arch) const;
  /// Shared memory the tiles take, every stage's (an upper bound with the padding).
  int64_t shared_bytes() const;
  /// Registers per thread, estimated: accumulators, fragments, fetch chunks and
  /// 40 for addresses and loop state (ptxas: 85 to 90 for 8 x 4 float32 tiles);
  /// with stages > 1, one per fetch move under 4 bytes (held across a step).
  int64_t registers() const;
};

/// The matmul rule (registered in all_rules()).
const Rule &matmul_rule();

/// Completes a tiling for the matmul rule's match `m` as default_config
/// completes its own: from block_m/n/k and thread_m/n of `c`, sets vector_a,
/// vector_b and vector_c to the widest moves the operands' layouts, row
/// lengths and tile rows allow (1 for B transposed on the way in, 1 for a
/// symbolic contiguous extent), each at most its value in `c` when that is
/// positive (0: no cap), then pad_a and pad_b (multiples of the vectors: the
/// fewest shared-memory bank conflicts for the compute reads, then the fetch
/// stores). A policy varies the tiling and calls this, and narrows a vector
/// when its multiples leave no conflict-free pad (policies/GemmPolicy.cpp).
/// ConfigError when `m` is another rule's match.
void fit_matmul_layout(const Match &m, const Arch &arch, MatmulConfig &c);

}  // namespace tessera::rules
