//===- lib/codegen/PromoteBFloat16.cpp - bfloat16 arithmetic in float -----===//
//
// Post-order: operands are rewritten first, so every bfloat16 operation reads
// values already rounded to bfloat16, as the native instructions would.
// bfloat16 constants become float constants of the same (exact) value.
//
//===----------------------------------------------------------------------===//
#include "PromoteBFloat16.h"

#include "tessera/ir/Functor.h"

namespace tessera::codegen::detail {

namespace {

using namespace tessera::ir;

const DataType kFloat = DataType::float32();

bool is_bf16(const Expr &e) { return e.dtype().is_bfloat16(); }

/// `e`, a bfloat16 value, as a float.
Expr widen(const Expr &e) {
  if (const auto *f = e.as<FloatImm>()) return FloatImm::make(kFloat, f->value);
  return Cast::make(kFloat, e);
}

/// Math intrinsics computed in the operand type (not selection or bit moves).
bool is_arithmetic(Intrinsic op) {
  if (is_async_or_warp_statement(op)) return false;  // addresses, not values
  switch (op) {
    case Intrinsic::IfThenElse:
    case Intrinsic::Reinterpret:
    case Intrinsic::MaxValue:
    case Intrinsic::MinValue:
    case Intrinsic::SyncThreads:
    case Intrinsic::Assume: return false;
    default: return true;
  }
}

class BFloat16Promoter : public IRMutator {
 protected:
  Expr visit_(const Binary *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const auto *b = e.as<Binary>();
    if (!b || !is_bf16(b->a)) return e;
    Expr r = Binary::make(b->op, widen(b->a), widen(b->b));
    return is_comparison(b->op) ? r : Cast::make(b->dtype, r);
  }

  Expr visit_(const Unary *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const auto *u = e.as<Unary>();
    if (!u || u->op != UnaryOp::Neg || !is_bf16(u->a)) return e;
    return Cast::make(u->dtype, Unary::make(UnaryOp::Neg, widen(u->a)));
  }

  Expr visit_(const Call *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const auto *c = e.as<Call>();
    if (!c || !is_arithmetic(c->op) || c->args.empty() || !is_bf16(c->args[0])) return e;
    std::vector<Expr> args;
    for (const Expr &a : c->args) args.push_back(is_bf16(a) ? widen(a) : a);
    Expr r = Call::make(c->dtype.is_bfloat16() ? kFloat : c->dtype, c->op, args);
    return c->dtype.is_bfloat16() ? Cast::make(c->dtype, r) : r;
  }
};

}  // namespace

Stmt promote_bfloat16_to_float(const Stmt &s) { return BFloat16Promoter().mutate(s); }

}  // namespace tessera::codegen::detail
