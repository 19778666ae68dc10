//===- rules/TransposeTile.cpp - Transposes through a padded shared tile ---===//
#include "TransposeTile.h"

#include <algorithm>

#include "GemmSchedule.h"

#include "tessera/ir/Stmt.h"
#include "tessera/support/Error.h"

namespace tessera::rules::detail {

using analysis::Access;
using analysis::BlockInfo;
using schedule::BlockRef;
using schedule::LoopRef;
using schedule::Schedule;

namespace {

/// Same buffer, same plain indices (iter positions and constants).
bool same_indices(const Access &a, const Access &b) {
  if (a.dim_iters != b.dim_iters) return false;
  for (size_t d = 0; d < a.indices.size(); ++d)
    if (a.dim_iters[d].empty() && ir::as_const_int(a.indices[d]) != ir::as_const_int(b.indices[d]))
      return false;
  return true;
}

/// Dimensions of `a` that use iter `iter`.
int dims_using(const Access &a, int iter) {
  int n = 0;
  for (const auto &d : a.dim_iters) n += std::find(d.begin(), d.end(), iter) != d.end() ? 1 : 0;
  return n;
}

int loop_of(const BlockInfo &b, int iter) {
  for (size_t i = 0; i < b.loops.size(); ++i)
    if (b.loops[i].as<ir::For>()->loop_var.same_as(b.iters[iter].loop)) return static_cast<int>(i);
  return -1;
}

int64_t extent_of(const BlockInfo &b, int loop) {
  return ir::as_const_int(b.loops[loop].as<ir::For>()->extent).value_or(-1);
}

/// The position of `buffer` (by name) among the T.reads of `block`.
int64_t read_index(const Schedule &sch, const BlockRef &block, const std::string &buffer) {
  const auto &reads = sch.get(block).as<ir::Block>()->reads;
  for (size_t i = 0; i < reads.size(); ++i)
    if (reads[i].buffer.name() == buffer) return static_cast<int64_t>(i);
  TESSERA_ICHECK(false) << "block '" << block.name << "' does not read '" << buffer << "'";
  return -1;
}

}  // namespace

std::optional<TransposeAccess> find_transpose_access(const BlockInfo &out) {
  if (!out.trivial_binding || out.writes.size() != 1) return std::nullopt;
  const Access &write = out.writes[0];
  const int w = write.inner_iter();
  if (w < 0) return std::nullopt;
  TransposeAccess t;
  int r = -1;
  for (size_t i = 0; i < out.reads.size(); ++i) {
    const Access &a = out.reads[i];
    if (a.buffer.same_as(write.buffer)) continue;
    bool seen = false, one_index_list = true;
    for (size_t j = 0; j < out.reads.size(); ++j) {
      if (!out.reads[j].buffer.same_as(a.buffer)) continue;
      if (j < i) seen = true;
      one_index_list = one_index_list && same_indices(a, out.reads[j]);
    }
    if (seen || !one_index_list || !a.is_simple) continue;
    int inner = a.inner_iter();
    if (inner < 0 || inner == w || (r >= 0 && inner != r)) continue;
    if (dims_using(a, w) != 1 || dims_using(a, inner) != 1) continue;
    r = inner;
    t.staged.push_back(a.buffer.name());
    int64_t bytes = a.buffer.dtype().bytes();
    t.staged_bytes += bytes;
    t.elem_bytes = std::max(t.elem_bytes, bytes);
  }
  if (r < 0) return std::nullopt;
  t.loop_w = loop_of(out, w);
  t.loop_r = loop_of(out, r);
  if (t.loop_w < 0 || t.loop_r < 0) return std::nullopt;
  t.extent_w = extent_of(out, t.loop_w);
  t.extent_r = extent_of(out, t.loop_r);
  if (t.extent_w == 1 || t.extent_r == 1) return std::nullopt;
  return t;
}

void schedule_transpose_tile(Schedule &sch, const std::string &block, const TransposeAccess &access,
                             const TransposeTile &tile) {
  TESSERA_ICHECK(tile.tile >= 1 && tile.rows >= 1 && tile.tile % tile.rows == 0 && tile.pad >= 0 &&
                 tile.vector >= 1 && tile.tile % tile.vector == 0)
      << "bad transpose tile " << tile.tile << " x " << tile.rows << " + " << tile.pad << " / " << tile.vector;
  const int64_t lanes = tile.tile / tile.vector;  // threadIdx.x
  BlockRef out = sch.get_block(block);
  std::vector<LoopRef> loops = sch.get_loops(out);
  const auto nloops = static_cast<int>(loops.size());
  TESSERA_ICHECK(access.loop_w >= 0 && access.loop_w < nloops && access.loop_r >= 0 &&
                 access.loop_r < nloops && access.loop_w != access.loop_r)
      << "block '" << block << "' has no loops " << access.loop_w << " and " << access.loop_r;

  // The output: W and R tiled; R's tile is threadIdx.y x steps, W's threadIdx.x.
  std::vector<LoopRef> w = sch.split(loops[access.loop_w], {std::nullopt, tile.tile});
  std::optional<LoopRef> vec;
  LoopRef tx = w[1];
  if (tile.vector > 1) {
    std::vector<LoopRef> parts = sch.split(w[1], {lanes, tile.vector});
    tx = parts[0], vec = parts[1];
  }
  std::vector<LoopRef> r = sch.split(loops[access.loop_r], {std::nullopt, tile.tile});
  const int64_t steps = tile.tile / tile.rows;
  LoopRef ty = r[1];
  std::optional<LoopRef> step;
  if (steps > 1) {
    std::vector<LoopRef> parts = sch.split(r[1], {steps, tile.rows});
    step = parts[0], ty = parts[1];
  }
  std::vector<LoopRef> outer;
  for (int i = 0; i < nloops; ++i)
    outer.push_back(i == access.loop_w ? w[0] : i == access.loop_r ? r[0] : loops[i]);
  std::vector<LoopRef> order = outer;
  order.push_back(ty);
  order.push_back(tx);
  if (step) order.push_back(*step);
  if (vec) order.push_back(*vec);
  sch.reorder(order);
  LoopRef tiles = outer.size() == 1 ? outer[0] : sch.fuse(outer);

  // The staged inputs: one tile each, fetched along their contiguous R.
  const int64_t pitch = tile_pitch(tile.tile, access.extent_r);
  for (const std::string &buffer : access.staged) {
    BlockRef copy = sch.cache_read(out, read_index(sch, out, buffer), "shared");
    sch.compute_at(copy, tiles);
    std::vector<LoopRef> own = sch.get_loops(copy);
    auto at = std::find(own.begin(), own.end(), tiles);
    TESSERA_ICHECK(at != own.end()) << "copy '" << copy.name << "' is not under the tile loop";
    own.erase(own.begin(), at + 1);
    if (!own.empty()) {
      LoopRef fused = own.size() == 1 ? own[0] : sch.fuse(own);
      std::vector<std::optional<int64_t>> factors{std::nullopt, tile.rows, lanes};
      if (tile.vector > 1) factors.push_back(tile.vector);
      std::vector<LoopRef> parts = sch.split(fused, factors);
      if (tile.unroll) sch.unroll(parts[0]);
      sch.bind(parts[1], "threadIdx.y");
      sch.bind(parts[2], "threadIdx.x");
      if (tile.vector > 1) sch.vectorize(parts[3]);
    }
    if (tile.pad > 0) {
      int ndim = sch.get(copy).as<ir::Block>()->writes[0].buffer.ndim();
      // Row pitch exactly pitch + pad: the smallest multiple of it.
      sch.storage_align(copy, 0, ndim - 2, pitch + tile.pad, 0);
    }
  }
  sch.bind(tiles, "blockIdx.x");
  sch.bind(ty, "threadIdx.y");
  sch.bind(tx, "threadIdx.x");
  if (step && tile.unroll) sch.unroll(*step);
  if (vec) sch.vectorize(*vec);
}

int64_t choose_transpose_pad(const TransposeAccess &access, int64_t tile, int64_t rows, const Arch &arch,
                             int64_t vector) {
  const int64_t e = std::max<int64_t>(access.elem_bytes, 1);
  const int64_t banks = arch.memory.smem_banks, bank_bytes = arch.memory.smem_bank_bytes;
  const int64_t pitch = tile_pitch(tile, access.extent_r);
  const int64_t v = std::max<int64_t>(vector, 1), across = std::max<int64_t>(tile / v, 1);
  const int64_t lanes = std::min<int64_t>(std::max(arch.compute.warp_size, 1), across * rows);
  auto degrees = [&](int64_t pad) {
    std::vector<int64_t> reads, writes;
    for (int64_t l = 0; l < lanes; ++l) {
      // The stores' reads (one lane of the vector at a time): threadIdx.x =
      // l % across down W, `vector` rows apart, threadIdx.y along R.
      reads.push_back(((l % across) * v * (pitch + pad) + l / across) * e);
      // The fetch's writes: the copy's fused loop, row-major over the tile,
      // `vector` elements per thread (one at a time).
      int64_t at = l * v;
      writes.push_back(((at / pitch) * (pitch + pad) + at % pitch) * e);
    }
    return std::pair{bank_conflict_degree(reads, e, banks, bank_bytes),
                     bank_conflict_degree(writes, e, banks, bank_bytes)};
  };
  const int64_t window = banks * bank_bytes / e;
  return choose_pad(1, std::min(tile, std::max<int64_t>(window, 2)), degrees);
}

}  // namespace tessera::rules::detail
