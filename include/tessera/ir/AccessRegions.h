//===- tessera/ir/AccessRegions.h - Inferring a block's reads and writes ---===//
//
// When a block does not spell out T.reads/T.writes, its regions are inferred
// from the loads and stores in its init and body, as TensorIR does:
//   - an access A[vi, vk] at block iter vars gives the point region
//     A[vi:vi+1, vk:vk+1];
//   - indices that use loops or let-variables defined inside the block are
//     relaxed over those loops' ranges (lower and upper bounds of sums,
//     differences, products with constants, floordiv/floormod by constants,
//     min/max); an index that cannot be bounded covers the whole dimension;
//   - several accesses of one buffer merge into their bounding box when their
//     bounds are comparable (same expression plus different constants), else
//     the dimension is the whole extent;
//   - a buffer allocated inside the block is not reported; a buffer both read
//     and written appears in both lists, except in a block with T.init(),
//     whose reads leave out the buffers it writes (TVM's rule: a matmul reads
//     A and B, so `cache_read(block, 0, ...)` is A); order is first appearance.
// Nested blocks contribute their own (already inferred or written) regions,
// relaxed over the loops between the two blocks.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <utility>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/ir/Stmt.h"

namespace tessera::ir {

struct AccessRegions {
  std::vector<BufferRegion> reads;
  std::vector<BufferRegion> writes;
};

/// The regions that `init` and `body` access, excluding buffers in `allocs`.
AccessRegions infer_access_regions(const std::optional<Stmt> &init, const Stmt &body,
                                   const std::vector<Buffer> &allocs);

/// TVM's rule for the reads of a block with T.init(): `reads` without the
/// buffers in `writes`.
std::vector<BufferRegion> reads_with_init(std::vector<BufferRegion> reads, const std::vector<BufferRegion> &writes);

/// The reads of a block that loses its T.init() (decompose_reduction's update
/// block, blockize's inner block): what it writes and did not list, then `reads`.
std::vector<BufferRegion> reads_without_init(const std::vector<BufferRegion> &reads,
                                             const std::vector<BufferRegion> &writes);

/// True when `s` stores into `b` anywhere (a Store of that buffer, by
/// identity, or a warp-level statement writing through an element of it).
bool stores_to(const Stmt &s, const Buffer &b);

/// For each parameter of `f`, whether it is a buffer `f` stores into (an
/// output, or a buffer updated in place).
std::vector<bool> written_params(const PrimFunc &f);

/// `end - min` for a half-open range, folded to a constant when the two differ
/// by one and kept free of `+ 0` and `- 0` otherwise. Used for region slices
/// (`A[k * 32:k * 32 + 32]` has extent 32) and loop extents (`range(1, n)`).
///   extent_between(k * 32, k * 32 + 32) == 32;  extent_between(0, n) is n
Expr extent_between(const Expr &min, const Expr &end);

}  // namespace tessera::ir
