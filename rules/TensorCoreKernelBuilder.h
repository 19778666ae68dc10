//===- rules/TensorCoreKernelBuilder.h - The GEMM kernel builder, inside ----===//
//
// KernelBuilder: the IR of the kernel MatmulTensorCore.h describes, for one
// match and config; build_tensor_core_kernel (TensorCoreMatch.h) runs it.
// Its pieces live in three files, by what they build:
//   TensorCoreKernel.cpp    the block, cp.async stages, ldmatrix + mma.sync
//   TensorCoreHopper.cpp    wgmma, TMA fills, the warp-specialised pipeline
//   TensorCoreEpilogue.cpp  the accumulators through the epilogue to the output
// Internal to the rules library.
//
//===----------------------------------------------------------------------===//
#pragma once

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

/// setmaxnreg's counts for the warp-specialised kernel (MatmulTensorCore.h).
inline constexpr int64_t kProducerRegisters = TensorCoreConfig::kProducerRegisters;
inline constexpr int64_t kConsumerRegisters = TensorCoreConfig::kConsumerRegisters;

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
    groups_ = c.wgmma ? c.warps() / 4 : c.warps();
  }

  Stmt build();
  std::vector<Buffer> allocs() const {
    // (tma_store's slots, 4 KB per warp, keep the barriers after them: the
    // tiles and slots stay on 1024-byte boundaries of the pool.)
    if (c_.tma_store) return {a_shared_, b_shared_, c_slots_, full_, empty_, c_frag_};
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
  /// The same through TMA stores (c_.tma_store): warp by warp, box by box
  /// through the warp's two shared slots.
  Stmt tma_store_epilogue(const Expr &ty, const Expr &tx) const;
  /// Lane 0 of each consumer warp waits until its stores have read their slots.
  Stmt retire_tma_stores(const Expr &tx) const;
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
  /// tma_store: [consumer warp][slot][16 rows][128 bytes of output elements].
  Buffer c_slots_;
  /// TMA: one mbarrier per stage, completing when the stage's boxes land;
  /// warp specialised, another completing when the consumers release it.
  Buffer full_, empty_;
  /// The mma.sync form ("m16n8k16", ...) and its A and B elements per lane.
  std::string mma_shape_;
  int64_t a_per_lane_ = 0, b_per_lane_ = 0;
  /// Lanes per threadIdx.y step (32, or a warpgroup's 128) and their count.
  int64_t lanes_ = 32, groups_ = 1;
};

}  // namespace tessera::rules::detail
