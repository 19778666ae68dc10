//===- CodegenIndex.cpp - Index arithmetic the analyzer proves -------------===//
//
// What the JIT knows of the program's integers, and what it does with it.
// Gen keeps an arith::Analyzer of the enclosing loops (each variable over its
// range), block iter vars (over their domains, once their check passed) and
// block predicates (inside the block). With it:
//
//   - an integer index expression none of whose sub-expressions can leave
//     its dtype (`computed_bound`, interval arithmetic of our own: the
//     analyzer's bounds assume that already) is computed in int64 with no-signed-wrap flags
//     (`wide`): the value the interpreter computes, in a form LLVM's scalar
//     evolution sees through (the loop counters are int64 already), so the
//     addresses of neighbouring elements differ by constants;
//   - a bounds check or an iter var's domain check the analyzer proves is
//     not emitted (the interpreter's check could not fail there).
//
// Without both, the accumulators of a tiled matmul stay in memory: a store
// that a failing check may skip cannot be kept in a register across the
// loop, nor one whose address LLVM cannot tell from its neighbours'.
//
//===----------------------------------------------------------------------===//
#include "Gen.h"

#include <algorithm>

#include "tessera/ir/Op.h"

namespace tessera::runtime::detail {

namespace {

/// A positive constant, or 0.
int64_t positive_constant(const Expr &e) {
  auto c = ir::as_const_int(e);
  return c && *c > 0 ? *c : 0;
}

}  // namespace

std::optional<arith::IntBound> Gen::computed_bound(const Expr &e) const {
  // Interval arithmetic of our own, in 128 bits: the analyzer's const_bound
  // assumes no overflow (it clamps to the type), which is what is in question.
  const DataType t = e.dtype();
  if (!t.is_int() || t.lanes() != 1 || t.bits() > 64) return std::nullopt;
  using Wide = __int128;
  auto make = [&](Wide lo, Wide hi) -> std::optional<arith::IntBound> {
    const arith::IntBound type = arith::IntBound::of_dtype(t);
    if (lo < Wide(type.min) || hi > Wide(type.max)) return std::nullopt;
    return arith::IntBound{int64_t(lo), int64_t(hi)};
  };
  switch (e.kind()) {
    case ir::NodeKind::IntImm: return arith::IntBound::constant(e.as<ir::IntImm>()->value);
    case ir::NodeKind::Var: {
      // A variable always holds a value of its type; the facts may narrow it.
      const arith::IntBound b = ana_.const_bound(e), type = arith::IntBound::of_dtype(t);
      return arith::IntBound{std::max(b.min, type.min), std::min(b.max, type.max)};
    }
    case ir::NodeKind::Cast: {
      auto inner = computed_bound(e.as<ir::Cast>()->value);
      if (!inner) return std::nullopt;
      return make(inner->min, inner->max);
    }
    case ir::NodeKind::Binary: {
      const auto *b = e.as<ir::Binary>();
      if (b->a.dtype() != t || b->b.dtype() != t) return std::nullopt;
      auto x = computed_bound(b->a);
      if (!x) return std::nullopt;
      const Wide x0 = x->min, x1 = x->max;
      if (const int64_t c = positive_constant(b->b); c > 0) {
        auto floor_div = [&](Wide v) { return v >= 0 ? v / c : -((-v + c - 1) / c); };
        switch (b->op) {
          case ir::BinaryOp::FloorDiv: return make(floor_div(x0), floor_div(x1));
          case ir::BinaryOp::Div: return make(x0 / c, x1 / c);
          case ir::BinaryOp::FloorMod: return make(0, c - 1);
          case ir::BinaryOp::Mod: return make(x0 < 0 ? -(c - 1) : 0, x1 > 0 ? c - 1 : 0);
          default: break;
        }
      }
      auto y = computed_bound(b->b);
      if (!y) return std::nullopt;
      const Wide y0 = y->min, y1 = y->max;
      switch (b->op) {
        case ir::BinaryOp::Add: return make(x0 + y0, x1 + y1);
        case ir::BinaryOp::Sub: return make(x0 - y1, x1 - y0);
        case ir::BinaryOp::Mul: {
          const Wide p[] = {x0 * y0, x0 * y1, x1 * y0, x1 * y1};
          return make(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
        }
        case ir::BinaryOp::Min: return make(std::min(x0, y0), std::min(x1, y1));
        case ir::BinaryOp::Max: return make(std::max(x0, y0), std::max(x1, y1));
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

Value *Gen::wide(const Expr &e) {
  switch (e.kind()) {
    case ir::NodeKind::IntImm: return b_.getInt64(uint64_t(e.as<ir::IntImm>()->value));
    case ir::NodeKind::Var: {
      const auto *v = e.as<ir::VarNode>();
      if (auto it = wide_vars_.find(v); it != wide_vars_.end() && !it->second.empty() && it->second.back())
        return it->second.back();
      return to_i64(var(v), e.dtype());
    }
    case ir::NodeKind::Cast: return wide(e.as<ir::Cast>()->value);
    case ir::NodeKind::Binary: {
      const auto *b = e.as<ir::Binary>();
      Value *x = wide(b->a);
      switch (b->op) {
        case ir::BinaryOp::Add: return b_.CreateAdd(x, wide(b->b), "", false, /*HasNSW=*/true);
        case ir::BinaryOp::Sub: return b_.CreateSub(x, wide(b->b), "", false, /*HasNSW=*/true);
        case ir::BinaryOp::Mul: return b_.CreateMul(x, wide(b->b), "", false, /*HasNSW=*/true);
        case ir::BinaryOp::Min: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, wide(b->b));
        case ir::BinaryOp::Max: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, wide(b->b));
        default: break;
      }
      // Division by a positive constant c: unsigned when the dividend is
      // known not to be negative (every kind of division agrees there),
      // else the program's own division in int64 (its checks fold away).
      Value *c = b_.getInt64(uint64_t(positive_constant(b->b)));
      const bool quotient = b->op == ir::BinaryOp::FloorDiv || b->op == ir::BinaryOp::Div;
      if (computed_bound(b->a)->min >= 0) return quotient ? b_.CreateUDiv(x, c) : b_.CreateURem(x, c);
      return divide(b->op, DataType::int64(), x, c);
    }
    default: break;
  }
  throw InternalError("LLVM JIT: wide() of an expression fits() refuses");
}

Value *Gen::index_value(const Expr &e) {
  if (!fits(e)) return to_i64(expr(e), e.dtype());
  // In the enclosing loops' variables (an iter var stands for its binding):
  // `vj // 64` of vj = j0 * 64 + j1 is j0, which LLVM could not tell.
  if (e.kind() != ir::NodeKind::Var && e.kind() != ir::NodeKind::IntImm) {
    Expr s = ana_.simplify(e);
    if (s.dtype() == e.dtype() && fits(s)) return wide(s);
  }
  return wide(e);
}

bool Gen::proven_within(const Expr &e, const Expr &lo, const Expr &extent) const {
  if (!fits(e)) return false;
  // In e's type when the three share it (the analyzer's proofs of `i < n`
  // are symbolic), else in int64.
  const DataType t = lo.dtype() == e.dtype() && extent.dtype() == e.dtype() ? e.dtype() : DataType::int64();
  auto as_t = [&](const Expr &x) { return x.dtype() == t ? x : ir::cast(t, x); };
  return ana_.can_prove(ir::ge(as_t(e), as_t(lo))) && ana_.can_prove(ir::lt(as_t(e), ir::add(as_t(lo), as_t(extent))));
}

}  // namespace tessera::runtime::detail
