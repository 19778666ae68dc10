//===- tessera/rules/Elementwise.h - Injective programs: plain or tiled ----===//
//
// Matches functions whose blocks are all spatial (elementwise, broadcast,
// reshape/transpose-like copies, fused chains): every block but the last
// must be inlinable into its consumers, and the last must be injective
// with a trivial binding (loops starting at 0, one per iter var). The
// producers are inlined, then the output block is scheduled in one of two
// forms, chosen by the config's `transpose_tile`:
//
// Plain form (transpose_tile = 0): the output's loops are fused and split as
//
//   bx (blockIdx.x) / per_thread / tx (threadIdx.x, `threads`) / v (vectorized, `vector`)
//
// so consecutive threads touch consecutive `vector`-element chunks of the
// output (coalesced), each thread does `per_thread` chunks strided by a whole
// block (unrolled when `unroll`). A tail that does not fill the last block is
// masked by the split's predicate.
//
// Tiled form (transpose_tile = T > 0), for a transpose-like access: an input
// whose contiguous (last) dimension is indexed by another iter (R) than the
// output's contiguous one (W), and that also uses W:
//
//   B[v_j, v_i] = A[v_i, v_j]        W = i, R = j; the plain form's stores stride
//
// A thread block takes a T x T tile of (W, R). Each such input is staged in
// shared memory (A_shared, rows along R padded by `transpose_pad` elements
// against bank conflicts), fetched with threadIdx.x along R (coalesced
// loads); then threadIdx.x runs along W for the stores (coalesced), reading
// A_shared down its columns:
//
//   blockIdx.x   the other loops and the W, R tile loops, fused
//     A_shared <- A tile:         threadIdx.y (tile_rows) x T / tile_rows steps, threadIdx.x (T) along R
//     __syncthreads()
//     B[..] = f(A_shared[w, r]):  threadIdx.y (tile_rows) x T / tile_rows steps along R, threadIdx.x (T) along W
//
// Inputs that do not use W (a bias along R) are broadcasts to the warp and
// are read directly. Tiles past the edges are masked (nothing has to divide;
// extents may be symbolic). default_config picks the tiled form when the match
// found a transpose-like access, the plain form otherwise.
//
// Config (JSON, all fields required):
//   plain: {"rule": "elementwise", "threads": 256, "vector": 4, "per_thread": 1, "unroll": true,
//           "transpose_tile": 0, "tile_rows": 0, "transpose_pad": 0, "staged_bytes": 0}
//   tiled: {"rule": "elementwise", "threads": 256, "vector": 1, "per_thread": 1, "unroll": true,
//           "transpose_tile": 32, "tile_rows": 8, "transpose_pad": 1, "staged_bytes": 4}
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>

#include "tessera/rules/Rule.h"

namespace tessera::rules {

struct ElementwiseConfig final : Config {
  /// Threads per block. Plain form: any count the arch allows. Tiled form:
  /// must equal transpose_tile x tile_rows.
  int64_t threads = 256;
  /// Plain form: contiguous elements per thread and step (1, 2, 4, 8, 16).
  /// Tiled form: elements per global load (along R) and store (along W),
  /// dividing transpose_tile; threadIdx.x is transpose_tile / vector.
  int64_t vector = 1;
  /// Plain form: steps per thread (>= 1). Tiled form: must be 1 (the steps
  /// are transpose_tile / tile_rows).
  int64_t per_thread = 1;
  /// Unroll the per-thread steps (both forms).
  bool unroll = true;
  /// 0: the plain form. Else the tiled form's tile edge T, a power of two in
  /// [8, 128]: W and R elements per thread block (T x T outputs), threadIdx.x
  /// extent times `vector`. Needs a match with a transpose-like access (elementwise_transpose).
  int64_t transpose_tile = 0;
  /// Tiled form: threadIdx.y extent, dividing transpose_tile (each thread does
  /// transpose_tile / tile_rows rows of the tile). Plain form: must be 0.
  int64_t tile_rows = 0;
  /// Tiled form: elements added to each row of a staged tile in shared memory,
  /// in [0, transpose_tile) (1 for 4-byte elements removes the 32-way bank
  /// conflicts of the column reads; tiled_elementwise_config picks it from the
  /// arch's bank model). Plain form: must be 0.
  int64_t transpose_pad = 0;
  /// Workload fact (copied from the match, as default_config does): bytes per
  /// tile element over all staged inputs (4 for one float32 input), 0 when
  /// the match found no transpose-like access. Used by the tiled form only.
  int64_t staged_bytes = 0;

  const char *rule() const override { return "elementwise"; }
  Json to_json() const override;
  /// Threads per block, vector width, steps; the tiled form's tile, rows,
  /// pad, the fields it fixes, and its shared memory against the arch's
  /// opt-in maximum. The plain form's tile fields must be 0.
  void validate(const Arch &arch) const override;
  static ElementwiseConfig from_json(const Json &j);

  bool is_tiled() const { return transpose_tile > 0; }
  /// Shared memory the tiled form takes: transpose_tile x (transpose_tile +
  /// transpose_pad) x staged_bytes (an upper bound; 0 for the plain form).
  int64_t shared_bytes() const;
};

/// The elementwise rule (registered in all_rules()).
const Rule &elementwise_rule();

/// What an elementwise match found about a transpose-like access (for
/// policies sizing the tiled form).
struct ElementwiseTranspose {
  int64_t extent_w = -1;      ///< extent of the output's contiguous loop W, -1 when symbolic
  int64_t extent_r = -1;      ///< extent of the loop R indexing the staged inputs' contiguous dimension
  int64_t staged_inputs = 0;  ///< inputs staged in shared memory
  int64_t staged_bytes = 0;   ///< ElementwiseConfig::staged_bytes for this match
};

/// The transpose-like access of `m` (a Match from elementwise_rule().match;
/// another rule's is a ConfigError), or nullopt: then only the plain form
/// applies (apply() refuses transpose_tile > 0 with a ConfigError).
std::optional<ElementwiseTranspose> elementwise_transpose(const Match &m);

/// The tiled-form config for `m` with tile edge `tile` and `tile_rows`:
/// threads = tile / vector x tile_rows, per_thread = 1, unroll, the pad the
/// arch's bank model prefers and staged_bytes. Not validated. ConfigError
/// when `m` has no transpose-like access.
ElementwiseConfig tiled_elementwise_config(const Match &m, int64_t tile, int64_t tile_rows, const Arch &arch,
                                           int64_t vector = 1);

}  // namespace tessera::rules
