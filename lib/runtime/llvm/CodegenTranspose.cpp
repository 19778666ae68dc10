//===- CodegenTranspose.cpp - A tile copied across its axes, in registers -===//
//
// The loop pair of a tiled transpose (cpu/CpuLoops.h's tile2d):
//
//   for i in range(m_i, m_i + V):              # serial or unrolled
//     for j in T.vectorized(m_j, m_j + V):
//       with T.block("B"):                     # bindings affine in i and j
//         T.where(...)                         # absent, or affine comparisons and-ed
//         B[...] = A[...]
//
// where the last index of B advances by one with one loop and A's with the
// other (every other index fixed along them). LLVM's loop vectorizer makes
// gathers or scatters of it: a third of memcpy's bandwidth on AVX-512. Here
// the tile is V vector loads along A's contiguous axis, log2(V) rounds of
// two-source shuffles (each swaps the off-diagonal blocks of every 2h x 2h
// block, h = V/2 .. 1), and V vector stores along B's contiguous axis.
//
// The same bits as the serial loops: the value is loaded and stored as it is
// (a float16 NaN keeps its payload, which Codegen.cpp leaves open), A and B are
// different buffers (parameters do not overlap: LlvmJit::run), and B's rows
// lie at least V elements apart, so no element is written twice. The tile
// takes this path at run time only when every check the loops make would
// pass: each index, binding and predicate operand is affine in (i, j) with
// constant coefficients (proven by the analyzer: e(x + 1) - e(x) simplifies
// to a constant), so its extreme values are at the tile's four corners, and a
// conjunction of affine comparisons holds on the whole tile when it holds at
// the corners. Otherwise the plain loops run, and fail where the interpreter
// fails, with its message.
//
// A block annotated kStreamingStoresAnnotation stores its rows with
// non-temporal stores when each is one aligned 64-byte line: a transpose's
// scattered rows then cost no read for ownership (2.5x on a 4096^2 float32
// transpose on the Xeon of bench/README.md).
//
//===----------------------------------------------------------------------===//
#include "Gen.h"

#include "tessera/ir/Annotation.h"
#include "tessera/ir/Op.h"

namespace tessera::runtime::detail {

namespace {

/// A power of two in [2, 64], or 0.
int64_t tile_extent(const Expr &e) {
  auto c = ir::as_const_int(e);
  return c && *c >= 2 && *c <= 64 && (*c & (*c - 1)) == 0 ? *c : 0;
}

/// The comparisons of a conjunction (false: some term is not a comparison).
bool comparisons(const Expr &e, std::vector<const ir::Binary *> &out) {
  const auto *b = e.as<ir::Binary>();
  if (!b) return false;
  if (b->op == ir::BinaryOp::And) return comparisons(b->a, out) && comparisons(b->b, out);
  switch (b->op) {
    case ir::BinaryOp::EQ:
    case ir::BinaryOp::LT:
    case ir::BinaryOp::LE:
    case ir::BinaryOp::GT:
    case ir::BinaryOp::GE:
      out.push_back(b);
      return true;
    default:
      return false;
  }
}

/// LLVM's signed comparison for one of comparisons()'.
llvm::CmpInst::Predicate signed_predicate(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::LT: return llvm::CmpInst::ICMP_SLT;
    case ir::BinaryOp::LE: return llvm::CmpInst::ICMP_SLE;
    case ir::BinaryOp::GT: return llvm::CmpInst::ICMP_SGT;
    case ir::BinaryOp::GE: return llvm::CmpInst::ICMP_SGE;
    default: return llvm::CmpInst::ICMP_EQ;
  }
}

/// One affine integer expression of the tile: its value at (m_i, m_j) plus
/// ci * (i - m_i) + cj * (j - m_j).
struct Affine {
  Expr e;
  int64_t ci = 0, cj = 0;
};

}  // namespace

bool Gen::transposed_tile(const ir::For &f) {
  // ---- the shape of the loops, statically ----
  const int64_t v = tile_extent(f.extent);
  if (!v || (f.for_kind != ir::ForKind::Serial && f.for_kind != ir::ForKind::Unrolled)) return false;
  const auto *g = f.body.as<ir::For>();
  if (!g || g->for_kind != ir::ForKind::Vectorized || tile_extent(g->extent) != v || parallel_.count(g))
    return false;
  const ir::Block *blk = g->body.as<ir::Block>();
  const ir::Stmt &leaf = blk ? blk->body : g->body;
  if (blk && (blk->init || !blk->allocs.empty())) return false;
  const auto *st = leaf.as<ir::Store>();
  const auto *ld = st ? st->value.as<ir::Load>() : nullptr;
  if (!ld || ld->buffer.get() == st->buffer.get() || ld->buffer.dtype() != st->buffer.dtype()) return false;
  const DataType t = st->buffer.dtype();
  if (t.is_bool() || t.lanes() != 1 || t.bits() % 8 != 0 || t.bytes() * v > 64) return false;

  // The loop variables must not wrap over the tile.
  if (!counter_fits(f) || !counter_fits(*g)) return false;
  // The static tests and the run-time one under the tile's facts (i and j
  // over their ranges); the two paths after them under the enclosing ones.
  Value *ok = b_.getTrue(), *mi = nullptr, *row_a = nullptr, *row_b = nullptr;
  struct Flat {
    Value *origin, *di, *dj;
  } to{}, from{};
  {
    arith::Analyzer::Scope facts(ana_);
    ana_.bind(f.loop_var, ir::Range{f.min, f.extent});
    ana_.bind(g->loop_var, ir::Range{g->min, g->extent});
    std::vector<std::pair<ir::Var, Expr>> binding_of;
    if (blk)
      for (size_t k = 0; k < blk->iter_vars.size(); ++k)
        binding_of.emplace_back(blk->iter_vars[k].var, blk->bindings[k]);
    auto step = [&](const Expr &e, const ir::Var &x) -> std::optional<int64_t> {
      const Expr next = ir::substitute(e, {{x, ir::add(x, ir::make_int(x.dtype(), 1))}});
      return ir::as_const_int(ana_.simplify(ir::sub(next, e)));
    };
    bool affine_ok = true;
    auto affine = [&](const Expr &in_block) {
      Affine a{binding_of.empty() ? in_block : ir::substitute(in_block, binding_of)};
      const auto ci = fits(a.e) ? step(a.e, f.loop_var) : std::nullopt;
      const auto cj = ci ? step(a.e, g->loop_var) : std::nullopt;
      if (!cj) affine_ok = false;
      a.ci = ci.value_or(0), a.cj = cj.value_or(0);
      return a;
    };
    std::vector<Affine> store_at, load_at, bindings;
    for (const Expr &e : st->indices) store_at.push_back(affine(e));
    for (const Expr &e : ld->indices) load_at.push_back(affine(e));
    std::vector<const ir::Binary *> terms;
    std::vector<std::pair<Affine, Affine>> sides;
    if (blk) {
      for (const Expr &e : blk->bindings) bindings.push_back(affine(e));
      if (blk->predicate.defined() && !ir::is_const_int(blk->predicate, 1)) {
        if (!comparisons(blk->predicate, terms)) return false;
        for (const ir::Binary *c : terms) sides.emplace_back(affine(c->a), affine(c->b));
      }
    }
    if (!affine_ok || store_at.empty() || load_at.empty()) return false;
    // Which loop each buffer is contiguous along: its last index advances by
    // one, the others stay.
    auto along = [](const std::vector<Affine> &idx, bool outer) {
      for (size_t d = 0; d < idx.size(); ++d)
        if ((outer ? idx[d].ci : idx[d].cj) != (d + 1 == idx.size() ? 1 : 0)) return false;
      return true;
    };
    const bool store_along_j = along(store_at, false) && along(load_at, true);
    if (!store_along_j && !(along(store_at, true) && along(load_at, false))) return false;

    // ---- the run-time test: every check of the loops passes on the tile ----
    mi = to_i64(expr(f.min), f.min.dtype());
    Value *mj = to_i64(expr(g->min), g->min.dtype());
    bind(f.loop_var, cast_int(mi, DataType::int64(), f.loop_var.dtype()));
    bind_wide(f.loop_var, mi);
    bind(g->loop_var, cast_int(mj, DataType::int64(), g->loop_var.dtype()));
    bind_wide(g->loop_var, mj);
    auto origin = [&](const Affine &a) { return wide(a.e); };
    // The value at corner (x, y) of the tile, x and y in {0, V - 1}.
    auto corner = [&](Value *at_origin, const Affine &a, int64_t x, int64_t y) {
      return b_.CreateAdd(at_origin, b_.getInt64(uint64_t(a.ci * x + a.cj * y)), "", false, /*HasNSW=*/true);
    };
    const int64_t corners[4][2] = {{0, 0}, {0, v - 1}, {v - 1, 0}, {v - 1, v - 1}};
    for (size_t k = 0; k < bindings.size(); ++k) {
      const ir::IterVar &iv = blk->iter_vars[k];
      Value *lo = to_i64(expr(iv.dom.min), iv.dom.min.dtype());
      Value *hi = b_.CreateAdd(lo, to_i64(expr(iv.dom.extent), iv.dom.extent.dtype()));
      Value *x0 = origin(bindings[k]);
      for (const auto &c : corners) {
        Value *x = corner(x0, bindings[k], c[0], c[1]);
        ok = b_.CreateAnd(ok, b_.CreateAnd(b_.CreateICmpSGE(x, lo), b_.CreateICmpSLT(x, hi)));
      }
    }
    for (size_t k = 0; k < terms.size(); ++k) {
      Value *a0 = origin(sides[k].first), *b0 = origin(sides[k].second);
      for (const auto &c : corners) {
        Value *a = corner(a0, sides[k].first, c[0], c[1]), *b = corner(b0, sides[k].second, c[0], c[1]);
        ok = b_.CreateAnd(ok, b_.CreateICmp(signed_predicate(terms[k]->op), a, b));
      }
    }
    // A buffer's flat offset at the origin and its steps along i and j, the
    // indices checked against the shape at the corners (and the offsets
    // against the storage of explicit strides, whose last one must be 1).
    auto flat = [&](const ir::Buffer &b, const std::vector<Affine> &idx) {
      Buf &buf = buffer(b);
      Flat out{b_.getInt64(0), b_.getInt64(0), b_.getInt64(0)};
      for (size_t d = 0; d < idx.size(); ++d) {
        Value *x0 = origin(idx[d]);
        for (const auto &c : corners)
          ok = b_.CreateAnd(ok, b_.CreateICmpULT(corner(x0, idx[d], c[0], c[1]), buf.shape[d]));
        out.origin = b_.CreateAdd(out.origin, b_.CreateMul(x0, buf.strides[d]));
        out.di = b_.CreateAdd(out.di, b_.CreateMul(b_.getInt64(uint64_t(idx[d].ci)), buf.strides[d]));
        out.dj = b_.CreateAdd(out.dj, b_.CreateMul(b_.getInt64(uint64_t(idx[d].cj)), buf.strides[d]));
      }
      if (buf.storage) {
        ok = b_.CreateAnd(ok, b_.CreateICmpEQ(buf.strides.back(), b_.getInt64(1)));
        for (const auto &c : corners) {
          Value *off = b_.CreateAdd(out.origin, b_.CreateAdd(b_.CreateMul(out.di, b_.getInt64(c[0])),
                                                             b_.CreateMul(out.dj, b_.getInt64(c[1]))));
          ok = b_.CreateAnd(ok, b_.CreateICmpULT(off, buf.storage));
        }
      }
      return out;
    };
    to = flat(st->buffer, store_at), from = flat(ld->buffer, load_at);
    // The rows of B: V apart at least, so that no element is written twice.
    row_b = store_along_j ? to.di : to.dj, row_a = store_along_j ? from.dj : from.di;
    ok = b_.CreateAnd(ok,
                      b_.CreateICmpSGE(b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, row_b, b_.getFalse()),
                                       b_.getInt64(uint64_t(v))));
    unbind(f.loop_var), unbind_wide(f.loop_var);
    unbind(g->loop_var), unbind_wide(g->loop_var);
  }

  BasicBlock *fast = BasicBlock::Create(ctx_, "transpose", fn_),
             *slow = BasicBlock::Create(ctx_, "transpose.loops", fn_);
  BasicBlock *join = BasicBlock::Create(ctx_, "transpose.end", fn_);
  b_.CreateCondBr(ok, fast, slow, llvm::MDBuilder(ctx_).createBranchWeights(1 << 10, 1));

  // ---- the tile in registers ----
  b_.SetInsertPoint(fast);
  Type *lane = b_.getIntNTy(unsigned(t.bits()));
  auto *vec = llvm::FixedVectorType::get(lane, unsigned(v));
  const llvm::Align align(size_t(t.bytes()));
  std::vector<Value *> rows;
  for (int64_t k = 0; k < v; ++k) {
    Value *off = b_.CreateAdd(from.origin, b_.CreateMul(row_a, b_.getInt64(uint64_t(k))));
    auto *load = b_.CreateAlignedLoad(vec, b_.CreateGEP(lane, buffer(ld->buffer).data, off), align);
    note_access(load, ld->buffer);
    rows.push_back(load);
  }
  for (int64_t h = v / 2; h >= 1; h /= 2) {
    std::vector<int> upper, lower;
    for (int64_t l = 0; l < v; ++l) {
      upper.push_back(int((l & h) == 0 ? l : v + l - h));
      lower.push_back(int((l & h) == 0 ? l + h : v + l));
    }
    for (int64_t p = 0; p < v; ++p)
      if ((p & h) == 0) {
        Value *a = rows[size_t(p)], *b = rows[size_t(p + h)];
        rows[size_t(p)] = b_.CreateShuffleVector(a, b, upper);
        rows[size_t(p + h)] = b_.CreateShuffleVector(a, b, lower);
      }
  }
  Value *b_data = buffer(st->buffer).data;
  auto store_rows = [&](bool streaming) {
    for (int64_t k = 0; k < v; ++k) {
      Value *off = b_.CreateAdd(to.origin, b_.CreateMul(row_b, b_.getInt64(uint64_t(k))));
      auto *store = b_.CreateAlignedStore(rows[size_t(k)], b_.CreateGEP(lane, b_data, off),
                                          streaming ? llvm::Align(64) : align);
      if (streaming)
        store->setMetadata(llvm::LLVMContext::MD_nontemporal,
                           llvm::MDNode::get(ctx_, {llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
      note_access(store, st->buffer);
    }
    b_.CreateBr(join);
  };
  // Streaming stores (kStreamingStoresAnnotation) when each row is a whole,
  // aligned cache line of 64 bytes; else ordinary ones.
  if (blk && blk->annotations.count(ir::kStreamingStoresAnnotation) && t.bytes() * v == 64) {
    Value *first = b_.CreatePtrToInt(b_.CreateGEP(lane, b_data, to.origin), i64_);
    Value *aligned = b_.CreateICmpEQ(
        b_.CreateAnd(b_.CreateOr(first, b_.CreateMul(row_b, b_.getInt64(uint64_t(t.bytes())))),
                     b_.getInt64(63)),
        b_.getInt64(0));
    BasicBlock *stream = BasicBlock::Create(ctx_, "transpose.stream", fn_);
    BasicBlock *cached = BasicBlock::Create(ctx_, "transpose.cached", fn_);
    b_.CreateCondBr(aligned, stream, cached);
    b_.SetInsertPoint(stream);
    store_rows(true);
    b_.SetInsertPoint(cached);
  }
  store_rows(false);

  // ---- else the loops as written ----
  b_.SetInsertPoint(slow);
  counted_loop(f, mi, b_.getInt64(0), b_.getInt64(uint64_t(v)));
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  return true;
}

}  // namespace tessera::runtime::detail
