//===- rules/TensorCoreEpilogue.cpp - Accumulators to the output ----------===//
//
// The tensor-core GEMM kernel's epilogue: each lane's accumulators through
// the matched epilogue chain (cast, bias, activation, residual) into the
// output, masked at the edges, in column pairs where the output runs along N;
// or, warp specialised with tma_store, into shared slots that TMA stores.
//
//===----------------------------------------------------------------------===//
#include "TensorCoreKernelBuilder.h"

#include <set>

namespace tessera::rules::detail {

using analysis::BlockInfo;
using namespace ir;

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
  // warps hold 16 rows each of each of its m64 subtiles, in order
  // (ir/Wgmma.h's accumulator map is the mma.sync C map per warp and 8
  // columns).
  Expr w = c_.wgmma ? ty * i(4) + floordiv(tx, i(32)) : ty, l = c_.wgmma ? floormod(tx, i(32)) : tx;
  auto warp_row0 = [&](const Expr &mi) {
    if (c_.wgmma) return (ty * i(c_.m64_per_group()) + mi) * i(64) + floordiv(tx, i(32)) * i(16);
    return floordiv(w, i(c_.warps_n)) * i(c_.warp_m()) + mi * i(16);
  };
  return loop("mi", tiles_m, [&](Expr mi) {
    return loop("ni", tiles_n, [&](Expr ni) {
      return loop("e", pairs ? 2 : 4, [&](Expr e_outer) {
        Var h = var("h");
        Expr e = pairs ? e_outer * i(2) + h : e_outer;
        Expr row = m0_ + warp_row0(mi) + floordiv(l, i(4)) + floordiv(e, i(2)) * i(8);
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

const Buffer &output_buffer(const TensorCoreMatch &m) {
  return m.epilogue.empty() ? m.c.buffer : m.epilogue.back().store->buffer;
}

std::vector<int> output_iters(const TensorCoreMatch &m) {
  std::vector<int> out;
  if (m.epilogue.empty()) {
    for (size_t d = 0; d < m.c.indices.size(); ++d)
      out.push_back(m.c.indices[d].as<VarNode>() ? m.c.single_iter(static_cast<int>(d)) : -1);
    return out;
  }
  const EpilogueStep &last = m.epilogue.back();
  for (const Expr &index : last.store->indices) {
    int found = -1;
    if (const auto *v = index.as<VarNode>())
      for (size_t k = 0; k < last.iters.size(); ++k)
        if (last.iters[k].get() == v) found = last.matmul_iter[k];
    out.push_back(found);
  }
  return out;
}

std::string tma_store_refusal(const TensorCoreMatch &m, const TensorCoreConfig *c) {
  const Buffer &out = output_buffer(m);
  const std::string name = "the output '" + out.name() + "'";
  if (!m.func.is_param_buffer(out)) return name + " is not a parameter of the function";
  const DataType t = out.dtype();
  if (t.lanes() != 1 || t.is_bool() || t.is_handle() || t.bits() < 8 || t.bytes() > 8)
    return name + " is " + t.str() + ", which TMA does not copy";
  std::vector<int> iters = output_iters(m);
  if (iters.empty() || static_cast<int>(iters.size()) > ir::tma::kMaxDims)
    return name + " has " + std::to_string(iters.size()) + " dimensions (TMA stores 1 to 5)";
  std::set<int> allowed(m.batch.begin(), m.batch.end()), seen;
  allowed.insert({m.m, m.n});
  for (size_t d = 0; d < iters.size(); ++d)
    if (!allowed.count(iters[d]) || !seen.insert(iters[d]).second)
      return name + "'s dimension " + std::to_string(d) + " is not indexed by an iter of the matmul of its own";
  if (iters.back() != m.n || !seen.count(m.m)) return name + " is not indexed [.., m, .., n]";
  if (std::string bad = tensor_map_shape_refusal(out); !bad.empty()) return name + ": " + bad;
  if (c && c->block_n * t.bytes() % 128 != 0)
    return "block_n = " + std::to_string(c->block_n) + " is not a multiple of the " + std::to_string(128 / t.bytes()) +
           " " + t.str() + " elements of a 128-byte box row";
  return {};
}

Stmt KernelBuilder::retire_tma_stores(const Expr &tx) const {
  return IfThenElse::make(eq(floormod(tx, i(32)), i(0)),
                          eval(Intrinsic::TmaStoreWait, {make_int(DataType::int32(), 0)}));
}

Stmt KernelBuilder::tma_store_epilogue(const Expr &ty, const Expr &tx) const {
  const BlockInfo &blk = m_.info.blocks[m_.block];
  const Buffer &out = output_buffer(m_);
  const std::vector<int> iters = output_iters(m_);
  const int64_t bytes = out.dtype().bytes(), width = 128 / bytes, chunk = 16 / bytes;
  const int64_t boxes_per_row = c_.block_n / width, subtiles = c_.m64_per_group();
  const int64_t boxes = subtiles * boxes_per_row;
  // This warp: its 16 rows of each m64 subtile of the tile (the
  // warpgroup's warps in order; a wgmma kernel's warps_n is 1) and its slots.
  const Expr warp = ty * i(4) + floordiv(tx, i(32)), lane = floormod(tx, i(32));
  const Expr lane0 = eq(lane, i(0));
  const Expr g = floordiv(lane, i(4)), q = floormod(lane, i(4));
  auto int32 = [](int64_t v) { return make_int(DataType::int32(), v); };
  auto sync_warp = [&] { return eval(Intrinsic::SyncWarp, {}); };
  std::vector<Stmt> body;
  for (int64_t box = 0; box < boxes; ++box) {
    const int64_t mi = box / boxes_per_row, j = box % boxes_per_row, slot = box % 2;
    const Expr rows0 = m0_ + (ty * i(subtiles) + i(mi)) * i(64) + floordiv(tx, i(32)) * i(16);
    // The slot's last store (two boxes ago; with an odd count of boxes, the
    // previous tile's last one for box 0 too) must have read it.
    const int64_t keep = boxes % 2 == 1 && box == 0 ? 0 : 1;
    body.push_back(IfThenElse::make(lane0, eval(Intrinsic::TmaStoreWait, {int32(keep)})));
    body.push_back(sync_warp());
    // This lane's accumulators in the box: rows g and g + 8, column pairs
    // 2q of each of its 8-column tiles (ir/Wgmma.h), each 16-byte chunk of a
    // slot row XORed with the row % 8 (TMA's 128-byte swizzle).
    const Expr col0 = n0_ + i(j * width);
    body.push_back(loop("ni", width / 8, [&](Expr ni) {
      return loop("e", 4, [&](Expr e) {
        Expr r = g + floordiv(e, i(2)) * i(8), cb = ni * i(8) + q * i(2) + floormod(e, i(2));
        Expr row = rows0 + r, col = col0 + cb;
        Expr tile = i(mi * (c_.block_n / 8) + j * (width / 8)) + ni;
        const Stmt element = store_element(ty, tx, tile, e, row, col, blk);
        const auto *st = element.as<Store>();
        TESSERA_ICHECK(st) << "an epilogue element is a store";
        Expr at = bitwise_xor(floordiv(cb, i(chunk)), floormod(r, i(8))) * i(chunk) + floormod(cb, i(chunk));
        Stmt s = Store::make(c_slots_, st->value, {warp, i(slot), r, at});
        return IfThenElse::make(row < extent_m_ && col < extent_n_, s);
      });
    }));
    // The writes, visible to the TMA unit (the async proxy), then lane 0
    // stores the box.
    body.push_back(eval(Intrinsic::FenceProxyAsync, {}));
    body.push_back(sync_warp());
    std::vector<Expr> args = {Load::make(c_slots_, {warp, i(slot), i(0), i(0)}), BufferPtr::make(out), int32(128)};
    std::vector<Expr> coords;
    for (int it : iters) {
      args.push_back(int32(it == m_.m ? 16 : it == m_.n ? width : 1));
      if (it == m_.m) coords.push_back(rows0);
      else if (it == m_.n) coords.push_back(col0);
      else
        for (size_t b = 0; b < m_.batch.size(); ++b)
          if (m_.batch[b] == it) coords.push_back(batch_[b]);
    }
    for (const Expr &e : coords) args.push_back(cast(DataType::int32(), e));
    // Every box is stored, even one wholly past the output's edges (TMA
    // writes none of it): the waits count on the slots' stores alternating.
    body.push_back(IfThenElse::make(lane0, eval(Intrinsic::TmaStore, std::move(args))));
  }
  return Seq::make(body);
}

}  // namespace tessera::rules::detail
