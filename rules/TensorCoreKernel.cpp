//===- rules/TensorCoreKernel.cpp - The tensor-core GEMM kernel, built -----===//
//
// build_tensor_core_kernel (TensorCoreMatch.h): the thread block of the
// kernel MatmulTensorCore.h describes: thread-bound loops, cp.async stages,
// ldmatrix and mma.sync over `warp` fragments, and the order of the
// pieces for each kernel form (the Hopper ones in TensorCoreHopper.cpp,
// the epilogue in TensorCoreEpilogue.cpp).
//
//===----------------------------------------------------------------------===//
#include "TensorCoreKernelBuilder.h"

namespace tessera::rules::detail {

using analysis::BlockInfo;
using namespace ir;

Expr KernelBuilder::operand_load(const OperandInfo &op, const Expr &rows, const Expr &k) const {
  const BlockInfo &blk = m_.info.blocks[m_.block];
  std::vector<std::pair<Var, Expr>> map;
  for (size_t b = 0; b < m_.batch.size(); ++b) map.push_back({blk.iters[m_.batch[b]].var, batch_[b]});
  bool is_a = op.buffer.same_as(m_.a.buffer);
  map.push_back({blk.iters[is_a ? m_.m : m_.n].var, rows});
  map.push_back({blk.iters[m_.k].var, k});
  std::vector<Expr> idx;
  for (const Expr &e : op.access.indices) idx.push_back(substitute(e, map));
  return inline_producers(Load::make(op.buffer, idx));
}

Expr KernelBuilder::inline_producers(const Expr &e) const {
  class Inliner : public IRMutator {
   public:
    explicit Inliner(const TensorCoreMatch &m) : m_(m) {}
    Expr visit_(const Load *op, const Expr &self) override {
      auto it = m_.producers.find(op->buffer.get());
      if (it == m_.producers.end()) return IRMutator::visit_(op, self);
      std::vector<std::pair<Var, Expr>> map;
      for (size_t d = 0; d < op->indices.size(); ++d) map.push_back({it->second.dim_vars[d], mutate(op->indices[d])});
      return mutate(substitute(it->second.store->value, map));
    }

   private:
    const TensorCoreMatch &m_;
  };
  return Inliner(m_).mutate(e);
}

/// Copies K tile `k_tile` of operand `op` into stage `stage` of `tile`: the
/// tile is [rows][block_k] when K is contiguous, else [block_k][rows].
Stmt KernelBuilder::load_tile(const OperandInfo &op, Buffer tile, bool is_a, const Expr &stage,
                              const Expr &k_tile) const {
  const int64_t rows = is_a ? c_.block_m : c_.block_n;
  const Expr row0 = is_a ? m0_ : n0_;
  const Expr row_extent = is_a ? extent_m_ : extent_n_;
  const int64_t sr = op.k_inner ? rows : c_.block_k, sc = op.k_inner ? c_.block_k : rows;
  // wgmma reads 16-bit M- or N-major tiles as they are (mn_major); another
  // non-K-major operand is transposed on its way in, element by element
  // (read along its contiguous rows, stored across the tile's).
  const bool as_mn_major = mn_major(op, rows);
  const bool transpose = c_.wgmma && !op.k_inner && !as_mn_major;
  // The widest piece every row start keeps aligned (4 bytes at least for cp.async).
  int64_t v = 1;
  bool async = false;  // cp.async pieces of v elements, else one element at a time
  for (int64_t bytes : {16, 8, 4}) {
    if (transpose) break;
    int64_t w = bytes / c_.in_bytes;
    if (!op.elementwise && op.contig % w == 0 && sc % w == 0) {
      v = w, async = true;
      break;
    }
  }
  const int64_t chunks = sr * sc / v, per_thread = (chunks + c_.threads() - 1) / c_.threads();
  const Expr k0 = k_tile * i(c_.block_k);
  return threads([&](Expr ty, Expr tx) {
    return loop("c", per_thread, [&](Expr it) {
      Expr q = it * i(c_.threads()) + ty * i(lanes_) + tx;
      Expr r = floordiv(q, i(sc / v)), col = floormod(q, i(sc / v)) * i(v);
      Expr row = op.k_inner ? row0 + r : row0 + col, k = op.k_inner ? k0 + col : k0 + r;
      Expr valid = row < row_extent && k < extent_k_;
      // wgmma's tiles: each 128-byte row's 16-byte chunks XORed with the row % 8.
      const int64_t chunk = 16 / c_.in_bytes;
      auto swizzled = [&](const Expr &row_in_tile, const Expr &k_in_tile) {
        return bitwise_xor(floordiv(k_in_tile, i(chunk)), floormod(row_in_tile, i(8))) * i(chunk) +
               floormod(k_in_tile, i(chunk));
      };
      std::vector<Expr> at = {stage, r, c_.wgmma ? swizzled(r, col) : col};
      if (transpose) at = {stage, col, swizzled(col, r)};
      // MN-major: K row r of the span holding MN element col.
      if (as_mn_major) at = {stage, floordiv(col, i(64)), r, swizzled(r, floormod(col, i(64)))};
      Expr dst = Load::make(tile, at);
      Stmt s;
      if (async) {
        Expr bytes = i(v * c_.in_bytes);
        s = eval(Intrinsic::CpAsync, {dst, operand_load(op, row, k), cast(DataType::int32(), bytes),
                                      select(valid, cast(DataType::int32(), bytes), make_int(DataType::int32(), 0))});
      } else {
        s = Store::make(tile, if_then_else(valid, operand_load(op, row, k), make_const(tile.dtype(), 0)), at);
      }
      if (chunks % c_.threads() != 0) s = IfThenElse::make(q < i(chunks), s);
      return s;
    });
  });
}

/// One mma-K slice of the warp tile (16 16-bit, 32 8-bit or 8 tf32
/// elements): the fragments, then mma.sync.
Stmt KernelBuilder::compute_slice(const Expr &stage, int64_t kk) const {
  const int64_t tiles_m = c_.warp_m() / 16, tiles_n = c_.warp_n() / 8;
  const Expr k0 = i(kk * c_.mma_k());
  auto warp_m0 = [&](Expr ty) { return floordiv(ty, i(c_.warps_n)) * i(c_.warp_m()); };
  auto warp_n0 = [&](Expr ty) { return floormod(ty, i(c_.warps_n)) * i(c_.warp_n()); };
  std::vector<Stmt> s;
  if (c_.in_bytes == 4) {
    // tf32: ldmatrix moves 16-bit units, so each lane loads its own fragment
    // elements (the m16n8k8 maps of ir/MmaFragments.h, g = lane / 4, t =
    // lane % 4) and rounds them as the program does.
    auto element = [&](const OperandInfo &op, Buffer tile, const Expr &row, const Expr &k) {
      Expr at = op.k_inner ? Load::make(tile, {stage, row, k}) : Load::make(tile, {stage, k, row});
      return Call::make(DataType::float32(), Intrinsic::RoundToTf32, {at});
    };
    s.push_back(threads([&](Expr ty, Expr tx) {
      return loop("mi", tiles_m, [&](Expr mi) {
        return loop("e", 4, [&](Expr e) {  // a_e at (g + 8 (e % 2), t + 4 (e / 2))
          Expr row = warp_m0(ty) + mi * i(16) + floordiv(tx, i(4)) + floormod(e, i(2)) * i(8);
          Expr k = k0 + floormod(tx, i(4)) + floordiv(e, i(2)) * i(4);
          return Store::make(a_frag_, element(m_.a, a_shared_, row, k), {ty, tx, mi * i(4) + e});
        });
      });
    }));
    s.push_back(threads([&](Expr ty, Expr tx) {
      return loop("ni", tiles_n, [&](Expr ni) {
        return loop("e", 2, [&](Expr e) {  // b_e at (t + 4 e, g)
          Expr col = warp_n0(ty) + ni * i(8) + floordiv(tx, i(4));
          Expr k = k0 + floormod(tx, i(4)) + e * i(4);
          return Store::make(b_frag_, element(m_.b, b_shared_, col, k), {ty, tx, ni * i(2) + e});
        });
      });
    }));
  } else {
    const int64_t unit = 2 / c_.in_bytes;  // elements per 16-bit ldmatrix unit
    // Lane l gives row l % 8 of matrix l / 8.
    auto ldmatrix = [&](const OperandInfo &op, Buffer tile, Buffer frag, Expr ty, Expr tx, Expr row0, Expr out) {
      Expr j = floordiv(tx, i(8)), rr = floormod(tx, i(8));
      bool is_a = tile.same_as(a_shared_);
      // A's matrices: (row 8 (j % 2), k 8 (j / 2)); B's: (row 8 (j / 2), k 8 (j % 2)).
      Expr row_off = is_a ? floormod(j, i(2)) * i(8) : floordiv(j, i(2)) * i(8);
      Expr k_off = is_a ? floordiv(j, i(2)) * i(8 * unit) : floormod(j, i(2)) * i(8 * unit);
      Expr src = op.k_inner ? Load::make(tile, {stage, row0 + row_off + rr, k0 + k_off})
                            : Load::make(tile, {stage, k0 + k_off + rr, row0 + row_off});
      return eval(Intrinsic::Ldmatrix, {make_int(DataType::int32(), op.k_inner ? 0 : 1),
                                        make_int(DataType::int32(), 4), Load::make(frag, {ty, tx, out}), src, tx});
    };
    // A: one x4 per m16 tile; B: one x4 per pair of n8 tiles.
    s.push_back(threads([&](Expr ty, Expr tx) {
      return loop("mi", tiles_m, [&](Expr mi) {
        return ldmatrix(m_.a, a_shared_, a_frag_, ty, tx, warp_m0(ty) + mi * i(16), mi * i(a_per_lane_));
      });
    }));
    s.push_back(threads([&](Expr ty, Expr tx) {
      return loop("nj", tiles_n / 2, [&](Expr nj) {
        return ldmatrix(m_.b, b_shared_, b_frag_, ty, tx, warp_n0(ty) + nj * i(16), nj * i(2 * b_per_lane_));
      });
    }));
  }
  s.push_back(threads([&](Expr ty, Expr tx) {
    return loop("mi", tiles_m, [&](Expr mi) {
      return loop("ni", tiles_n, [&](Expr ni) {
        return eval(Intrinsic::MmaSync, {StringImm::make(mma_shape_),
                                         Load::make(c_frag_, {ty, tx, (mi * i(tiles_n) + ni) * i(4)}),
                                         Load::make(a_frag_, {ty, tx, mi * i(a_per_lane_)}),
                                         Load::make(b_frag_, {ty, tx, ni * i(b_per_lane_)}), tx});
      });
    });
  }));
  return Seq::make(s);
}

Stmt KernelBuilder::build() {
  const DataType in = m_.in_dtype;
  const int64_t pad = c_.pad;
  // tf32 rows stored K-outer: twice the padding (see MatmulTensorCore.h).
  const int64_t outer_pad = c_.in_bytes == 4 ? 2 * pad : pad;
  auto tile_shape = [&](const OperandInfo &op, int64_t rows) -> std::vector<Expr> {
    if (mn_major(op, rows)) return {i(c_.stages), i(rows / 64), i(c_.block_k), i(64)};
    return op.k_inner || c_.wgmma ? std::vector<Expr>{i(c_.stages), i(rows), i(c_.block_k + pad)}
                      : std::vector<Expr>{i(c_.stages), i(c_.block_k), i(rows + outer_pad)};
  };
  a_shared_ = Buffer::make("A_shared", in, tile_shape(m_.a, c_.block_m), "shared");
  b_shared_ = Buffer::make("B_shared", in, tile_shape(m_.b, c_.block_n), "shared");
  const int64_t tiles_m = c_.warp_m() / 16, tiles_n = c_.warp_n() / 8;
  const DataType acc = in.is_int() ? DataType::int32() : c_.acc_bytes == 2 ? DataType::float16() : DataType::float32();
  mma_shape_ = "m16n8k" + std::to_string(c_.mma_k());
  std::string why;
  auto variant = mma::find_mma_variant(mma_shape_, in, acc, &why);
  TESSERA_ICHECK(variant) << why;
  a_per_lane_ = variant->a_per_lane(), b_per_lane_ = variant->b_per_lane();
  a_frag_ = Buffer::make("A_frag", in, {i(c_.warps()), i(32), i(tiles_m * a_per_lane_)}, "warp");
  b_frag_ = Buffer::make("B_frag", in, {i(c_.warps()), i(32), i(tiles_n * b_per_lane_)}, "warp");
  // wgmma: a warpgroup's 128 lanes hold block_n / 2 accumulators each (the
  // same tiles_m * tiles_n * 4 for its 16-row warps).
  c_frag_ = Buffer::make("C_frag", acc, {i(groups_), i(lanes_), i(tiles_m * tiles_n * 4)}, "warp");
  if (c_.tma_store) {
    const DataType out = output_buffer(m_).dtype();
    c_slots_ = Buffer::make("C_slots", out, {i(c_.warps()), i(2), i(16), i(128 / out.bytes())}, "shared");
  }
  full_ = Buffer::make("full", DataType::uint(64), {i(c_.stages)}, "shared");
  empty_ = Buffer::make("empty", DataType::uint(64), {i(c_.stages)}, "shared");

  Var bz = var("bz"), by = var("by"), bx = var("bx");
  block_ = bx;
  tiles_y_ = floordiv(extent_m_ + i(c_.block_m - 1), i(c_.block_m));
  tiles_x_ = floordiv(extent_n_ + i(c_.block_n - 1), i(c_.block_n));
  // Persistent: the tile is a number (batch outermost) that each block's
  // loop sets; else blockIdx.z, y and x (x alone when rasterized).
  Expr z = bz, in_batch = bx, row_tile = by, col_tile = bx;
  if (c_.persistent > 0) {
    tile_ = var("tile");
    Expr per_batch = tiles_y_ * tiles_x_;
    total_tiles_ = per_batch;
    for (const Expr &e : batch_extents_) total_tiles_ = total_tiles_ * e;
    z = floordiv(tile_, per_batch), in_batch = floormod(tile_, per_batch);
    row_tile = floordiv(in_batch, tiles_x_), col_tile = floormod(in_batch, tiles_x_);
  }
  // Batch iters, the last fastest.
  batch_.assign(batch_extents_.size(), Expr());
  for (size_t b = batch_extents_.size(); b-- > 0;) {
    batch_[b] = b == 0 ? z : floormod(z, batch_extents_[b]);
    z = floordiv(z, batch_extents_[b]);
  }
  if (c_.raster > 0) {
    // Rasterized: the tiles are walked in panels of `raster` tile rows,
    // column by column, so the blocks running together share A rows and B
    // columns in L2.
    Expr per_panel = i(c_.raster) * tiles_x_, first = floordiv(in_batch, per_panel) * i(c_.raster);
    Expr rows_here = min(tiles_y_ - first, i(c_.raster)), in_panel = floormod(in_batch, per_panel);
    m0_ = (first + floormod(in_panel, rows_here)) * i(c_.block_m);
    n0_ = floordiv(in_panel, rows_here) * i(c_.block_n);
  } else {
    m0_ = row_tile * i(c_.block_m);
    n0_ = col_tile * i(c_.block_n);
  }

  std::vector<Stmt> body;
  const int64_t S = c_.stages;
  Expr k_tiles = floordiv(extent_k_ + i(c_.block_k - 1), i(c_.block_k));
  if (c_.warp_specialized) {
    // The consumers' accumulators live in their branch only: the producer,
    // down to 40 registers, holds none of them.
    body.push_back(warp_specialized_pipeline(k_tiles));
    return finish(Seq::make(body), bz, by, bx);
  }
  body.push_back(threads([&](Expr ty, Expr tx) { return zero_accumulators(ty, tx); }));
  if (c_.tma) {
    body.push_back(tma_pipeline(k_tiles));
    body.push_back(epilogue());
    return finish(Seq::make(body), bz, by, bx);
  }
  for (int64_t s = 0; s + 1 < S; ++s) {
    body.push_back(load_tile(m_.a, a_shared_, true, i(s), i(s)));
    body.push_back(load_tile(m_.b, b_shared_, false, i(s), i(s)));
    body.push_back(eval(Intrinsic::CpAsyncCommit, {}));
  }
  {
    Var ko = var("ko");
    std::vector<Stmt> step;
    step.push_back(eval(Intrinsic::CpAsyncWait, {make_int(DataType::int32(), S - 2)}));
    // What cp.async wrote reaches wgmma (the async proxy) through a fence.
    if (c_.wgmma) step.push_back(threads([&](Expr, Expr) { return eval(Intrinsic::FenceProxyAsync, {}); }));
    step.push_back(eval(Intrinsic::SyncThreads, {}));
    Expr next = ko + i(S - 1), next_stage = floormod(next, i(S));
    Expr stage = floormod(ko, i(S));
    auto refill = [&] {
      step.push_back(load_tile(m_.a, a_shared_, true, next_stage, next));
      step.push_back(load_tile(m_.b, b_shared_, false, next_stage, next));
      step.push_back(eval(Intrinsic::CpAsyncCommit, {}));
    };
    if (c_.wgmma) {
      // This tile's wgmma run while the stage read one tile ago (retired by
      // the wait, in every warpgroup by the barrier) is refilled.
      step.push_back(wgmma_tile(stage, 1));
      step.push_back(eval(Intrinsic::SyncThreads, {}));
      refill();
    } else {
      refill();
      for (int64_t kk = 0; kk < c_.block_k / c_.mma_k(); ++kk) step.push_back(compute_slice(stage, kk));
    }
    body.push_back(For::make(ko, i(0), k_tiles, ForKind::Serial, Seq::make(step)));
  }
  if (c_.wgmma)
    body.push_back(threads([&](Expr, Expr) { return eval(Intrinsic::WgmmaWait, {make_int(DataType::int32(), 0)}); }));
  body.push_back(eval(Intrinsic::CpAsyncWait, {make_int(DataType::int32(), 0)}));
  body.push_back(epilogue());
  return finish(Seq::make(body), bz, by, bx);
}

Stmt KernelBuilder::finish(Stmt body, const Var &bz, const Var &by, const Var &bx) const {
  // What the kernel touches, whole: A, B and the epilogue's other inputs; the output.
  std::vector<BufferRegion> reads;
  auto add_read = [&](const Buffer &b) {
    if (m_.producers.count(b.get())) return;
    for (const BufferRegion &r : reads)
      if (r.buffer.same_as(b)) return;
    reads.push_back(BufferRegion::full(b));
  };
  for (const Buffer &b : {m_.a.buffer, m_.b.buffer}) add_read(b);
  for (const BufferNode *node : m_.producer_order)
    pre_order_visit(Evaluate::make(m_.producers.at(node).store->value), [&](const Expr &e) {
      if (const auto *l = e.as<Load>()) add_read(l->buffer);
    }, nullptr);
  Buffer out = m_.c.buffer;
  for (const EpilogueStep &st : m_.epilogue) {
    pre_order_visit(Evaluate::make(st.store->value), [&](const Expr &e) {
      const auto *l = e.as<Load>();
      if (!l || l->buffer.same_as(m_.c.buffer)) return;
      for (const EpilogueStep &earlier : m_.epilogue)
        if (l->buffer.same_as(earlier.store->buffer)) return;
      add_read(l->buffer);
    }, nullptr);
    out = st.store->buffer;
  }
  // Swizzled tiles: their chunks XOR-permuted at lowering (lower::swizzle_shared_buffers).
  Annotations ann;
  if (c_.swizzle && !c_.wgmma) ann[kSwizzleAnnotation] = AnnValue::List{a_shared_.name(), b_shared_.name()};
  Stmt kernel = Block::make("matmul_tensor_core", {}, {}, Expr(), reads, {BufferRegion::full(out)}, allocs(),
                            std::nullopt, body, ann);
  if (c_.persistent > 0) {
    // Persistent blocks: as many as the config gives, or tiles.
    return For::make(bx, i(0), arith::simplify(min(i(c_.persistent), total_tiles_)), ForKind::ThreadBinding, kernel,
                     "blockIdx.x");
  }
  if (c_.raster > 0) {
    kernel = For::make(bx, i(0), tiles_y_ * tiles_x_, ForKind::ThreadBinding, kernel, "blockIdx.x");
  } else {
    kernel = For::make(bx, i(0), tiles_x_, ForKind::ThreadBinding, kernel, "blockIdx.x");
    kernel = For::make(by, i(0), tiles_y_, ForKind::ThreadBinding, kernel, "blockIdx.y");
  }
  if (!batch_extents_.empty()) {
    Expr total = batch_extents_[0];
    for (size_t b = 1; b < batch_extents_.size(); ++b) total = total * batch_extents_[b];
    kernel = For::make(bz, i(0), total, ForKind::ThreadBinding, kernel, "blockIdx.z");
  }
  return kernel;
}

Stmt build_tensor_core_kernel(const TensorCoreMatch &m, const TensorCoreConfig &c) { return KernelBuilder(m, c).build(); }

}  // namespace tessera::rules::detail
