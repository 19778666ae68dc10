//===- rules/TensorCoreKernel.cpp - The mma.sync GEMM kernel, built ---------===//
//
// build_tensor_core_kernel (TensorCoreMatch.h): the IR of the kernel
// MatmulTensorCore.h describes, from the match and the config: thread-bound
// loops, cp.async stages, ldmatrix and mma.sync over `warp` fragments, the
// epilogue at the accumulators. With `wgmma` (Hopper): warpgroups
// (threadIdx.y) of 128 lanes (threadIdx.x), the tiles stored at their
// 128-byte-swizzled places (ir/Wgmma.h; K-major, or MN-major for 16-bit
// operands whose M or N is contiguous) by the same cp.async pipeline, and
// per K tile one wgmma per 16 (int8: 32) of K, committed; the previous
// tile's group is waited for, then (after a barrier) its stage refilled
// while this tile's wgmma run. Fed by TMA and warp specialised, optionally
// persistent: a producer warpgroup and the consumers walk the block's
// output tiles with one ring of full/empty barriers whose phases run on.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <functional>

#include "TensorCoreMatch.h"

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/MmaFragments.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/Tma.h"
#include "tessera/ir/Wgmma.h"

namespace tessera::rules::detail {

using analysis::BlockInfo;
using namespace ir;

namespace {

/// setmaxnreg's counts for the warp-specialised kernel: the producer keeps
/// what issuing copies needs; the consumers take what the rest of the
/// register file allows (128 x 40 + 256 x 232 <= 65536 with two of them).
constexpr int64_t kProducerRegisters = 40, kConsumerRegisters = 232;

/// Builds the kernel body for one match and config (see the header).
class KernelBuilder {
 public:
  KernelBuilder(const TensorCoreMatch &m, const TensorCoreConfig &c) : m_(m), c_(c) {
    const BlockInfo &blk = m.info.blocks[m.block];
    it_ = blk.iters[m.m].var.dtype();
    extent_m_ = blk.iters[m.m].dom.extent;
    extent_n_ = blk.iters[m.n].dom.extent;
    extent_k_ = blk.iters[m.k].dom.extent;
    // In the kernel's index type: a block's iters may differ in width (an
    // int64 symbolic M beside a constant batch).
    for (int b : m.batch) batch_extents_.push_back(cast(it_, blk.iters[b].dom.extent));
    lanes_ = c.wgmma ? ir::wgmma::kWarpgroup : 32;
    groups_ = c.wgmma ? c.block_m / 64 : c.warps();
  }

  Stmt build();
  std::vector<Buffer> allocs() const {
    if (c_.warp_specialized) return {a_shared_, b_shared_, full_, empty_, c_frag_};
    if (c_.tma) return {a_shared_, b_shared_, full_, c_frag_};
    if (c_.wgmma) return {a_shared_, b_shared_, c_frag_};
    return {a_shared_, b_shared_, a_frag_, b_frag_, c_frag_};
  }

 private:
  Expr i(int64_t v) const { return make_int(it_, v); }
  Var var(const std::string &name) const { return Var(name, it_); }

  /// A loop over the warps (warpgroups) and lanes of the block around
  /// `body(ty, tx)`.
  Stmt threads(const std::function<Stmt(Expr, Expr)> &body) const {
    // Warp specialised: the producer warpgroup (ty == groups_) skips what
    // the consumers do.
    if (c_.warp_specialized)
      return all_threads([&](Expr ty, Expr tx) { return IfThenElse::make(ty < i(groups_), body(ty, tx)); });
    return all_threads(body);
  }
  /// The same over every warpgroup of the block, the producer's included.
  Stmt all_threads(const std::function<Stmt(Expr, Expr)> &body) const {
    Var ty = var("ty"), tx = var("tx");
    Stmt s = body(ty, tx);
    s = For::make(tx, i(0), i(lanes_), ForKind::ThreadBinding, s, "threadIdx.x");
    return For::make(ty, i(0), i(groups_ + (c_.warp_specialized ? 1 : 0)), ForKind::ThreadBinding, s,
                     "threadIdx.y");
  }
  /// Thread (0, 0) of the block, the one that issues the TMA copies.
  Expr first_thread(const Expr &ty, const Expr &tx) const { return logical_and(eq(ty, i(0)), eq(tx, i(0))); }
  Stmt loop(const std::string &name, int64_t extent, const std::function<Stmt(Expr)> &body,
            ForKind kind = ForKind::Unrolled) const {
    Var v = var(name);
    Stmt s = body(v);
    if (extent == 1) return substitute(s, {{v, i(0)}});
    return For::make(v, i(0), i(extent), kind, s);
  }
  static Stmt eval(Intrinsic op, std::vector<Expr> args) {
    return Evaluate::make(Call::make(DataType::int32(), op, std::move(args)));
  }

  /// The element of `op` at matmul iter values (batch from the block, row, k),
  /// its producers inlined.
  Expr operand_load(const OperandInfo &op, const Expr &rows, const Expr &k) const;
  Expr inline_producers(const Expr &e) const;
  Stmt load_tile(const OperandInfo &op, Buffer tile, bool is_a, const Expr &stage, const Expr &k_tile) const;
  Stmt compute_slice(const Expr &stage, int64_t kk) const;
  /// TMA: one thread announces the bytes of K tile `k_tile`'s two boxes on
  /// stage `stage`'s barrier and copies them, when the tile exists.
  Stmt tma_fill(const Expr &stage, const Expr &k_tile, const Expr &k_tiles) const;
  /// The box copy of K tile `k_tile` of `op` into stage `stage` of `tile`.
  Stmt tma_box(const OperandInfo &op, const Buffer &tile, bool is_a, const Expr &stage, const Expr &k_tile) const;
  /// The wgmma of one K tile, committed; then a wait until at most `keep`
  /// groups are in flight.
  Stmt wgmma_tile(const Expr &stage, int64_t keep) const;
  /// The same as thread (ty, tx) of a warpgroup runs it.
  Stmt wgmma_steps(const Expr &stage, int64_t keep, const Expr &ty, const Expr &tx) const;
  /// The announcement and copies of K tile `k_tile` into stage `stage`.
  Stmt tma_copies(const Expr &stage, const Expr &k_tile) const;
  /// The warp-specialised pipeline (c_.warp_specialized, see MatmulTensorCore.h).
  Stmt warp_specialized_pipeline(const Expr &k_tiles) const;
  /// Thread (0, 0) initialises each stage's full barrier (one arrival: the
  /// copier's) and, warp specialised, its empty one (one per consumer
  /// warp); then the block's barrier.
  Stmt init_barriers() const;
  /// Every thread waits until `barrier[stage]` has completed phase `phase`
  /// (counted from 0: its parity is what the wait names).
  Stmt wait_phase(const Buffer &barrier, const Expr &stage, const Expr &phase) const {
    return eval(Intrinsic::MbarrierWait,
                {Load::make(barrier, {stage}), cast(DataType::int32(), floormod(phase, i(2)))});
  }
  Stmt epilogue() const;
  /// The epilogue as thread (ty, tx) runs it.
  Stmt epilogue_steps(const Expr &ty, const Expr &tx) const;
  /// Thread (ty, tx)'s accumulators set to zero.
  Stmt zero_accumulators(const Expr &ty, const Expr &tx) const {
    const int64_t n = c_.warp_m() / 16 * (c_.warp_n() / 8) * 4;
    return loop("e", n, [&](Expr e) { return Store::make(c_frag_, make_const(c_frag_.dtype(), 0), {ty, tx, e}); });
  }
  /// TMA's pipeline (c_.tma): the stages' mbarriers initialised, S - 1 tiles
  /// in flight, then per K tile a wait for its stage's phase, its wgmma, a
  /// barrier and the refill of the stage the previous tile read.
  Stmt tma_pipeline(const Expr &k_tiles) const;
  /// The thread block around `body`: its reads and writes, allocations and
  /// the blockIdx loops.
  Stmt finish(Stmt body, const Var &bz, const Var &by, const Var &bx) const;
  /// wgmma reads `op` (of `rows` M or N rows per tile) MN-major from its
  /// tile: it is not K-major, 16-bit (the types wgmma transposes) and its
  /// rows fill whole 128-byte spans. Its tile is then [stages][rows / 64]
  /// [block_k][64]: K rows of 128 bytes, the spans LBO = block_k x 128
  /// bytes apart. A K-major tile is [stages][rows][block_k].
  bool mn_major(const OperandInfo &op, int64_t rows) const {
    return c_.wgmma && !op.k_inner && ir::wgmma::can_be_mn_major(m_.in_dtype) && rows % 64 == 0;
  }
  /// The output's innermost index is the N iter (a pair of columns is contiguous).
  bool output_runs_along_n() const;
  Stmt store_element(const Expr &ty, const Expr &tx, const Expr &tile, const Expr &e, const Expr &row, const Expr &col,
                     const BlockInfo &blk) const;

  const TensorCoreMatch &m_;
  const TensorCoreConfig &c_;
  DataType it_;
  Expr extent_m_, extent_n_, extent_k_;
  std::vector<Expr> batch_extents_;
  /// Batch iter values, row and column tile origins (set by build()).
  std::vector<Expr> batch_;
  Expr m0_, n0_;
  /// Output tiles along M and N (set by build()); persistent: all of them.
  Expr tiles_y_, tiles_x_, total_tiles_;
  /// blockIdx.x's variable; persistent: the tile number m0_, n0_ and batch_
  /// are written in (each block's loop substitutes its tiles).
  Var block_, tile_;
  Buffer a_shared_, b_shared_, a_frag_, b_frag_, c_frag_;
  /// TMA: one mbarrier per stage, completing when the stage's boxes land;
  /// warp specialised, another completing when the consumers release it.
  Buffer full_, empty_;
  /// The mma.sync form ("m16n8k16", ...) and its A and B elements per lane.
  std::string mma_shape_;
  int64_t a_per_lane_ = 0, b_per_lane_ = 0;
  /// Lanes per threadIdx.y step (32, or a warpgroup's 128) and their count.
  int64_t lanes_ = 32, groups_ = 1;
};

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

Stmt KernelBuilder::tma_box(const OperandInfo &op, const Buffer &tile, bool is_a, const Expr &stage,
                            const Expr &k_tile) const {
  const BlockInfo &blk = m_.info.blocks[m_.block];
  const Var &row_iter = blk.iters[is_a ? m_.m : m_.n].var;
  const int64_t rows = is_a ? c_.block_m : c_.block_n;
  // A K-major tile is one box of rows x block_k; an MN-major one (wgmma's
  // transposed read) one box of block_k x 64 per 64-element span of its rows.
  const bool spans = mn_major(op, rows);
  std::vector<Stmt> copies;
  for (int64_t span = 0; span < (spans ? rows / 64 : 1); ++span) {
    std::vector<Expr> box, coord;
    for (const Expr &index : op.access.indices) {
      const auto *v = index.as<VarNode>();
      TESSERA_ICHECK(v) << "tma_refusal let through an index that is not an iter";
      if (v == row_iter.get()) {
        box.push_back(i(spans ? 64 : rows));
        coord.push_back((is_a ? m0_ : n0_) + i(span * 64));
      } else if (v == blk.iters[m_.k].var.get()) {
        box.push_back(i(c_.block_k));
        coord.push_back(k_tile * i(c_.block_k));
      } else {
        box.push_back(i(1));
        for (size_t b = 0; b < m_.batch.size(); ++b)
          if (v == blk.iters[m_.batch[b]].var.get()) coord.push_back(batch_[b]);
      }
    }
    Expr dst = spans ? Load::make(tile, {stage, i(span), i(0), i(0)}) : Load::make(tile, {stage, i(0), i(0)});
    std::vector<Expr> args = {dst, Load::make(full_, {stage}), BufferPtr::make(op.buffer),
                              make_int(DataType::int32(), 128)};
    for (const Expr &e : box) args.push_back(cast(DataType::int32(), e));
    for (const Expr &e : coord) args.push_back(cast(DataType::int32(), e));
    copies.push_back(eval(Intrinsic::TmaLoad, std::move(args)));
  }
  return Seq::make(copies);
}

Stmt KernelBuilder::tma_copies(const Expr &stage, const Expr &k_tile) const {
  const int64_t bytes = (c_.block_m + c_.block_n) * c_.block_k * c_.in_bytes;
  return Seq::make({eval(Intrinsic::MbarrierArriveExpectTx, {Load::make(full_, {stage}), make_int(DataType::int32(), bytes)}),
                    tma_box(m_.a, a_shared_, true, stage, k_tile), tma_box(m_.b, b_shared_, false, stage, k_tile)});
}

Stmt KernelBuilder::tma_fill(const Expr &stage, const Expr &k_tile, const Expr &k_tiles) const {
  return threads([&](Expr ty, Expr tx) {
    return IfThenElse::make(logical_and(first_thread(ty, tx), k_tile < k_tiles), tma_copies(stage, k_tile));
  });
}

Stmt KernelBuilder::init_barriers() const {
  auto int32 = [](int64_t v) { return make_int(DataType::int32(), v); };
  Stmt init = all_threads([&](Expr ty, Expr tx) {
    return IfThenElse::make(first_thread(ty, tx), loop("s", c_.stages, [&](Expr s) {
      Stmt full = eval(Intrinsic::MbarrierInit, {Load::make(full_, {s}), int32(1)});
      if (!c_.warp_specialized) return full;
      return Seq::make({full, eval(Intrinsic::MbarrierInit, {Load::make(empty_, {s}), int32(4 * groups_)})});
    }, ForKind::Serial));
  });
  return Seq::make({init, eval(Intrinsic::SyncThreads, {})});
}

Stmt KernelBuilder::warp_specialized_pipeline(const Expr &k_tiles) const {
  const int64_t S = c_.stages, P = c_.persistent;
  auto int32 = [](int64_t v) { return make_int(DataType::int32(), v); };
  // Persistent: this block's output tiles block_, block_ + P, ...; the
  // fills (and the stages' phases) count on across them. Else its one tile.
  Var ti = var("ti");
  auto each_tile = [&](Stmt s) {
    if (P == 0) return substitute(s, {{ti, i(0)}});
    Expr count = floordiv(total_tiles_ - block_ + i(P - 1), i(P));
    return For::make(ti, i(0), count, ForKind::Serial, substitute(s, {{tile_, block_ + ti * i(P)}}));
  };
  const Expr before = ti * k_tiles;  // the fills of the block's earlier tiles
  std::vector<Stmt> body;
  body.push_back(init_barriers());
  body.push_back(all_threads([&](Expr ty, Expr tx) {
    // The producer: fill g (K tile kp of this tile) into stage g % S once
    // the consumers released that stage's previous fill (g - S, the
    // stage's (g / S - 1)-th release).
    Var kp = var("kp");
    Expr g = before + kp;
    Stmt wait_empty = IfThenElse::make(g >= i(S), wait_phase(empty_, floormod(g, i(S)), floordiv(g, i(S)) - i(1)));
    Stmt produce = For::make(kp, i(0), k_tiles, ForKind::Serial,
                             Seq::make({wait_empty, tma_copies(floormod(g, i(S)), kp)}));
    Stmt producer = Seq::make({eval(Intrinsic::SetMaxNReg, {int32(kProducerRegisters), int32(0)}),
                               IfThenElse::make(eq(tx, i(0)), each_tile(produce))});
    // The consumers: wait for fill g's boxes, run its wgmma (the previous
    // fill's group retiring), then each warp releases the previous fill's
    // stage; the tile's last stage once its wgmma retired, before the
    // epilogue (so the producer may fill every stage meanwhile).
    Var ko = var("ko");
    Expr f = before + ko;
    const Expr lane0 = eq(floormod(tx, i(32)), i(0));
    auto release = [&](const Expr &fill) {
      return eval(Intrinsic::MbarrierArrive, {Load::make(empty_, {floormod(fill, i(S))})});
    };
    Stmt consume = For::make(
        ko, i(0), k_tiles, ForKind::Serial,
        Seq::make({wait_phase(full_, floormod(f, i(S)), floordiv(f, i(S))), wgmma_steps(floormod(f, i(S)), 1, ty, tx),
                   IfThenElse::make(logical_and(ko > i(0), lane0), release(f - i(1)))}));
    Stmt tile = Seq::make({zero_accumulators(ty, tx), consume, eval(Intrinsic::WgmmaWait, {int32(0)}),
                           IfThenElse::make(logical_and(k_tiles > i(0), lane0), release(before + k_tiles - i(1))),
                           epilogue_steps(ty, tx)});
    Stmt consumer = Seq::make({eval(Intrinsic::SetMaxNReg, {int32(kConsumerRegisters), int32(1)}), each_tile(tile)});
    return IfThenElse::make(eq(ty, i(groups_)), producer, consumer);
  }));
  return Seq::make(body);
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

Stmt KernelBuilder::wgmma_tile(const Expr &stage, int64_t keep) const {
  return threads([&](Expr ty, Expr tx) { return wgmma_steps(stage, keep, ty, tx); });
}

Stmt KernelBuilder::wgmma_steps(const Expr &stage, int64_t keep, const Expr &ty, const Expr &tx) const {
  const std::string shape = "m64n" + std::to_string(c_.block_n) + "k" + std::to_string(c_.mma_k());
  // The 128-byte layout: rows of 128 bytes, 8-row groups 1024 bytes apart
  // (SBO); an MN-major tile's 64-element spans block_k rows apart (LBO,
  // which K-major tiles ignore).
  const bool a_mn = mn_major(m_.a, c_.block_m), b_mn = mn_major(m_.b, c_.block_n);
  const ir::wgmma::SmemLayout layout{128, a_mn || b_mn ? c_.block_k * 128 : 16, 1024};
  auto int32 = [](int64_t v) { return make_int(DataType::int32(), v); };
  std::vector<Stmt> s;
  s.push_back(eval(Intrinsic::WgmmaFence, {}));
  s.push_back(loop("ks", c_.block_k / c_.mma_k(), [&](Expr ks) {
    Expr k = ks * i(c_.mma_k());
    // This warpgroup's 64 rows of A: rows ty * 64 on, or span ty.
    Expr a = a_mn ? Load::make(a_shared_, {stage, ty, k, i(0)}) : Load::make(a_shared_, {stage, ty * i(64), k});
    Expr b = b_mn ? Load::make(b_shared_, {stage, i(0), k, i(0)}) : Load::make(b_shared_, {stage, i(0), k});
    return eval(Intrinsic::Wgmma, {StringImm::make(shape), Load::make(c_frag_, {ty, tx, i(0)}), a, b, tx,
                                   int32(layout.swizzle_bytes), int32(layout.lbo), int32(layout.sbo),
                                   int32(a_mn), int32(b_mn)});
  }));
  s.push_back(eval(Intrinsic::WgmmaCommit, {}));
  s.push_back(eval(Intrinsic::WgmmaWait, {int32(keep)}));
  return Seq::make(s);
}

/// The accumulators through the epilogue into the output, masked at the edges.
Stmt KernelBuilder::epilogue() const {
  return threads([&](Expr ty, Expr tx) { return epilogue_steps(ty, tx); });
}

Stmt KernelBuilder::epilogue_steps(const Expr &ty, const Expr &tx) const {
  const BlockInfo &blk = m_.info.blocks[m_.block];
  const int64_t tiles_m = c_.warp_m() / 16, tiles_n = c_.warp_n() / 8;
  // Each lane holds column pairs (2t, 2t + 1): stored as one 2-wide vector
  // when the output runs along N and N is even (the pair is in or out together).
  auto n_extent = as_const_int(extent_n_);
  const bool pairs = n_extent && *n_extent % 2 == 0 && output_runs_along_n();
  // The warp within the block and the lane within the warp: a warpgroup's
  // warps hold 16 rows each, in order (ir/Wgmma.h's accumulator map is the
  // mma.sync C map per warp and 8 columns).
  Expr w = c_.wgmma ? ty * i(4) + floordiv(tx, i(32)) : ty, l = c_.wgmma ? floormod(tx, i(32)) : tx;
  return loop("mi", tiles_m, [&](Expr mi) {
    return loop("ni", tiles_n, [&](Expr ni) {
      return loop("e", pairs ? 2 : 4, [&](Expr e_outer) {
        Var h = var("h");
        Expr e = pairs ? e_outer * i(2) + h : e_outer;
        Expr row = m0_ + floordiv(w, i(c_.warps_n)) * i(c_.warp_m()) + mi * i(16) + floordiv(l, i(4)) +
                   floordiv(e, i(2)) * i(8);
        Expr col = n0_ + floormod(w, i(c_.warps_n)) * i(c_.warp_n()) + ni * i(8) + floormod(l, i(4)) * i(2) +
                   floormod(e, i(2));
        Stmt store = store_element(ty, tx, mi * i(tiles_n) + ni, e, row, col, blk);
        if (!pairs) return IfThenElse::make(row < extent_m_ && col < extent_n_, store);
        Expr col0 = substitute(col, {{h, i(0)}}), row0 = substitute(row, {{h, i(0)}});
        return IfThenElse::make(row0 < extent_m_ && col0 < extent_n_,
                                For::make(h, i(0), i(2), ForKind::Vectorized, store));
      });
    });
  });
}

bool KernelBuilder::output_runs_along_n() const {
  if (m_.epilogue.empty()) return m_.c.single_iter(static_cast<int>(m_.c.indices.size()) - 1) == m_.n;
  const EpilogueStep &last = m_.epilogue.back();
  const auto *v = last.store->indices.back().as<VarNode>();
  for (size_t i = 0; v && i < last.iters.size(); ++i)
    if (last.iters[i].get() == v) return last.matmul_iter[i] == m_.n;
  return false;
}

/// Accumulator element `e` of tile `tile` through the epilogue, stored at (row, col).
Stmt KernelBuilder::store_element(const Expr &ty, const Expr &tx, const Expr &tile, const Expr &e, const Expr &row,
                                  const Expr &col, const BlockInfo &blk) const {
  // Matmul iter -> value at this element.
  std::vector<Expr> at(blk.iters.size());
  for (size_t b = 0; b < m_.batch.size(); ++b) at[m_.batch[b]] = batch_[b];
  at[m_.m] = row;
  at[m_.n] = col;
  Expr value = Load::make(c_frag_, {ty, tx, tile * i(4) + e});
  if (value.dtype() != m_.acc_dtype) value = cast(m_.acc_dtype, value);
  if (m_.epilogue.empty()) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < m_.c.indices.size(); ++d) idx.push_back(at[m_.c.single_iter(static_cast<int>(d))]);
    return Store::make(m_.c.buffer, value, idx);
  }
  Stmt store;
  // The accumulator and each step's result at this element, by buffer: a
  // step's loads of any of them (matched at this element) are these values.
  std::vector<std::pair<Buffer, Expr>> known = {{m_.c.buffer, value}};
  class ReplaceLoads : public IRMutator {
   public:
    explicit ReplaceLoads(const std::vector<std::pair<Buffer, Expr>> &known) : known_(known) {}
    Expr visit_(const Load *op, const Expr &self) override {
      for (const auto &[b, v] : known_)
        if (op->buffer.same_as(b)) return v;
      return IRMutator::visit_(op, self);
    }

   private:
    const std::vector<std::pair<Buffer, Expr>> &known_;
  };
  for (const EpilogueStep &st : m_.epilogue) {
    std::vector<std::pair<Var, Expr>> map;
    for (size_t v = 0; v < st.iters.size(); ++v) map.push_back({st.iters[v], at[st.matmul_iter[v]]});
    Expr folded = inline_producers(ReplaceLoads(known).mutate(substitute(st.store->value, map)));
    std::vector<Expr> idx;
    for (const Expr &x : st.store->indices) idx.push_back(substitute(x, map));
    known.emplace_back(st.store->buffer, folded);
    store = Store::make(st.store->buffer, folded, idx);
  }
  return store;
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

Stmt KernelBuilder::tma_pipeline(const Expr &k_tiles) const {
  const int64_t S = c_.stages;
  std::vector<Stmt> body;
  body.push_back(init_barriers());
  for (int64_t s = 0; s + 1 < S; ++s) body.push_back(tma_fill(i(s), i(s), k_tiles));
  Var ko = var("ko");
  const Expr stage = floormod(ko, i(S)), next = ko + i(S - 1);
  std::vector<Stmt> step;
  // The fill of K tile ko is stage's (ko / S)-th: it completes that phase.
  step.push_back(threads([&](Expr, Expr) { return wait_phase(full_, stage, floordiv(ko, i(S))); }));
  // This tile's wgmma run while the stage read one tile ago (retired by the
  // wait, in every warpgroup by the barrier) is refilled.
  step.push_back(wgmma_tile(stage, 1));
  step.push_back(eval(Intrinsic::SyncThreads, {}));
  step.push_back(tma_fill(floormod(next, i(S)), next, k_tiles));
  body.push_back(For::make(ko, i(0), k_tiles, ForKind::Serial, Seq::make(step)));
  body.push_back(threads([&](Expr, Expr) { return eval(Intrinsic::WgmmaWait, {make_int(DataType::int32(), 0)}); }));
  return Seq::make(body);
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

}  // namespace

std::string tma_refusal(const TensorCoreMatch &m, const TensorCoreConfig *c) {
  const BlockInfo &blk = m.info.blocks[m.block];
  for (bool is_a : {true, false}) {
    const OperandInfo &op = is_a ? m.a : m.b;
    const std::string name = std::string(is_a ? "A" : "B") + " ('" + op.buffer.name() + "')";
    // wgmma reads a 16-bit M- or N-major tile as it is, in spans of 64
    // elements of its rows: TMA copies one box per span.
    if (!op.k_inner && !ir::wgmma::can_be_mn_major(m.in_dtype))
      return name + " is not K-major (only 16-bit tiles are read M- or N-major)";
    if (!op.k_inner && c && (is_a ? c->block_m : c->block_n) % 64 != 0)
      return name + " is not K-major and block_" + (is_a ? "m" : "n") +
             " is not a multiple of 64 (its tile would be transposed on its way in)";
    if (op.elementwise || m.producers.count(op.buffer.get()))
      return name + " is computed or unaligned (its tile is copied element by element)";
    bool param = false;
    for (const Var &p : m.func.params()) param = param || m.func.buffer_of(p).same_as(op.buffer);
    if (!param) return name + " is not a parameter of the function";
    const auto &idx = op.access.indices;
    if (static_cast<int>(idx.size()) > ir::tma::kMaxDims) return name + " has more than 5 dimensions";
    const VarNode *row = blk.iters[is_a ? m.m : m.n].var.get(), *k = blk.iters[m.k].var.get();
    std::vector<const VarNode *> allowed = {row, k};
    for (int b : m.batch) allowed.push_back(blk.iters[b].var.get());
    std::vector<const VarNode *> seen;
    for (size_t d = 0; d < idx.size(); ++d) {
      const auto *v = idx[d].as<VarNode>();
      if (!v || std::find(allowed.begin(), allowed.end(), v) == allowed.end() ||
          std::find(seen.begin(), seen.end(), v) != seen.end())
        return name + "'s dimension " + std::to_string(d) + " is not indexed by an iter of the matmul of its own";
      seen.push_back(v);
    }
    // The contiguous dimension is K (K-major) or the row iter (MN-major).
    const VarNode *inner = op.k_inner ? k : row;
    if (idx.empty() || idx.back().as<VarNode>() != inner ||
        std::find(seen.begin(), seen.end(), op.k_inner ? row : k) == seen.end())
      return name + " is not indexed [.., row, k] or [.., k, row]";
    std::vector<int64_t> shape;
    for (const Expr &d : op.buffer.shape())
      if (auto v = as_const_int(d)) shape.push_back(*v);
    if (shape.size() == op.buffer.shape().size())
      if (std::string bad = ir::tma::check_tensor(shape, op.buffer.dtype().bytes()); !bad.empty())
        return name + ": " + bad;
  }
  return {};
}

Stmt build_tensor_core_kernel(const TensorCoreMatch &m, const TensorCoreConfig &c) { return KernelBuilder(m, c).build(); }

}  // namespace tessera::rules::detail
