//===- rules/TransposeTile.h - Transposes through a padded shared tile -----===//
//
// Private to rules/: the elementwise rule's tiled form. An injective output
// block whose input is read with its contiguous dimension indexed by another
// iter than the output's contiguous one (a transpose-like access)
//
//   B[v_j, v_i] = A[v_i, v_j]        output contiguous along i (W), A along j (R)
//
// cannot coalesce both sides with one thread mapping. The tiled form stages
// a tile x tile piece of A in shared memory, each side walked along its own
// contiguous dimension:
//
//   blockIdx.x  every other loop and the W, R tile loops, fused
//     A_shared <- A tile     (cache_read + compute_at; the copy's loops fused
//                             and split step / threadIdx.y / threadIdx.x, so
//                             threadIdx.x runs along R: coalesced loads)
//     threadIdx.y (tile_rows) x step (tile / tile_rows, unrolled) over R,
//     threadIdx.x (tile / vector) x vec (vector, vectorized) over W:
//       B[..] = f(A_shared[w, r])   (coalesced stores, `vector` wide)
// and the fetch's threadIdx.x moves `vector` elements of R per load.
//
// The store side reads A_shared down a column, tile + pad elements apart:
// rows padded by `pad` elements (storage_align) are bank-conflict free. The
// splits and compute_at mask tiles past the edges, so nothing has to divide
// and extents may be symbolic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/arch/Arch.h"
#include "tessera/schedule/Schedule.h"

namespace tessera::rules::detail {

/// The transpose-like access of an output block (see the file comment).
struct TransposeAccess {
  int loop_w = -1;                  ///< the output's contiguous iter's loop (position in BlockInfo::loops)
  int loop_r = -1;                  ///< the loop of the iter indexing the staged inputs' contiguous dimension
  int64_t extent_w = -1;            ///< that loop's extent, -1 when symbolic
  int64_t extent_r = -1;            ///< likewise
  std::vector<std::string> staged;  ///< the inputs staged in shared memory, in read order
  int64_t staged_bytes = 0;  ///< the sum of their element sizes (bytes per tile element in shared memory)
  int64_t elem_bytes = 0;    ///< the widest of their element sizes (the bank model's access size)
};

/// The transpose-like access of `out` (the output block once the producers
/// are inlined): the inputs read with every index a plain iter, the last one
/// the same iter R, that also use the output's contiguous iter W (an input
/// that does not use W is a broadcast along the stores: one address per
/// warp, nothing to stage), are not the output and are read at one index
/// list. nullopt when there is none, or when the W or R loop has extent 1.
std::optional<TransposeAccess> find_transpose_access(const analysis::BlockInfo &out);

/// The tile's shape.
struct TransposeTile {
  int64_t tile = 32;   ///< W and R elements per thread block
  int64_t rows = 8;    ///< threadIdx.y extent; tile / rows R elements per thread
  int64_t pad = 1;     ///< elements added to each shared row (0: none)
  bool unroll = true;  ///< unroll the per-thread steps
  /// Contiguous elements each thread moves at once on both global sides:
  /// the fetch reads `vector` elements along R in one load, the store writes
  /// `vector` along W in one store (its shared reads down a column stay
  /// scalar). threadIdx.x is tile / vector wide.
  int64_t vector = 1;
};

/// Schedules `block` (the output block, producers already inlined) in `sch`
/// as the file comment says. Throws ScheduleError when a primitive refuses.
void schedule_transpose_tile(schedule::Schedule &sch, const std::string &block, const TransposeAccess &access,
                             const TransposeTile &tile);

/// The pad (elements, below min(tile, one bank row of elements)) with the
/// fewest bank conflicts in the tile's column reads, then its row writes,
/// by the arch's bank model; the smallest among equals.
int64_t choose_transpose_pad(const TransposeAccess &access, int64_t tile, int64_t rows, const Arch &arch,
                             int64_t vector = 1);

}  // namespace tessera::rules::detail
