//===- rules/TensorCoreHopper.cpp - wgmma, TMA and warp specialisation ----===//
//
// The Hopper pieces of the tensor-core GEMM kernel (sm_90a): per K tile one
// wgmma per 16 (int8: 32) of K, committed, over 128-byte-swizzled tiles
// (ir/Wgmma.h; K-major, or MN-major for 16-bit operands whose M or N is
// contiguous); TMA fills completing on a ring of full barriers; the
// warp-specialised pipeline, a producer warpgroup and the consumers
// walking the block's output tiles (persistent: several) with one ring of
// full/empty barriers whose phases run on. And tma_refusal.
//
//===----------------------------------------------------------------------===//
#include "TensorCoreKernelBuilder.h"

namespace tessera::rules::detail {

using analysis::BlockInfo;
using namespace ir;

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
                           c_.tma_store ? tma_store_epilogue(ty, tx) : epilogue_steps(ty, tx)});
    std::vector<Stmt> consumer = {eval(Intrinsic::SetMaxNReg, {int32(kConsumerRegisters), int32(1)}), each_tile(tile)};
    if (c_.tma_store) consumer.push_back(retire_tma_stores(tx));
    return IfThenElse::make(eq(ty, i(groups_)), producer, Seq::make(consumer));
  }));
  return Seq::make(body);
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
  // Each warpgroup's m64 subtiles (c_.m64_per_group()): subtile mi of
  // warpgroup ty is the 64 rows from (ty * subtiles + mi) * 64, its
  // accumulators block_n / 2 further along per subtile.
  const int64_t subtiles = c_.m64_per_group();
  s.push_back(loop("ks", c_.block_k / c_.mma_k(), [&](Expr ks) {
    Expr k = ks * i(c_.mma_k());
    return loop("mi", subtiles, [&](Expr mi) {
      // The subtile's 64 rows of A, or its span.
      Expr span = ty * i(subtiles) + mi;
      Expr a = a_mn ? Load::make(a_shared_, {stage, span, k, i(0)}) : Load::make(a_shared_, {stage, span * i(64), k});
      Expr b = b_mn ? Load::make(b_shared_, {stage, i(0), k, i(0)}) : Load::make(b_shared_, {stage, i(0), k});
      return eval(Intrinsic::Wgmma, {StringImm::make(shape), Load::make(c_frag_, {ty, tx, mi * i(c_.block_n / 2)}), a,
                                     b, tx, int32(layout.swizzle_bytes), int32(layout.lbo), int32(layout.sbo),
                                     int32(a_mn), int32(b_mn)});
    });
  }));
  s.push_back(eval(Intrinsic::WgmmaCommit, {}));
  s.push_back(eval(Intrinsic::WgmmaWait, {int32(keep)}));
  return Seq::make(s);
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

std::string tensor_map_shape_refusal(const Buffer &b) {
  // A symbolic extent multiplies the strides outside it: taken as 1, each
  // stride is its constant factor, which must then be a multiple of 16
  // bytes for every size to keep it one.
  std::vector<int64_t> shape;
  bool symbolic = false;
  for (const Expr &d : b.shape()) {
    auto v = as_const_int(d);
    symbolic = symbolic || !v;
    shape.push_back(v.value_or(1));
  }
  std::string bad = ir::tma::check_tensor(shape, b.dtype().bytes());
  if (bad.empty() || !symbolic) return bad;
  return "with its symbolic extents taken as 1 (a stride must be a multiple of 16 bytes at every size): " + bad;
}

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
    if (!m.func.is_param_buffer(op.buffer)) return name + " is not a parameter of the function";
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
    if (std::string bad = tensor_map_shape_refusal(op.buffer); !bad.empty()) return name + ": " + bad;
  }
  return {};
}

}  // namespace tessera::rules::detail
