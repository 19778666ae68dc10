//===- lib/lower/SimplifyDivision.cpp - Floor division to C division ---------===//
//
// TensorIR's `//` and `%` round toward minus infinity, C's toward zero. They
// agree when both operands are non-negative, which index arithmetic almost
// always is; proving it here keeps the generated code free of helper calls.
//
//===----------------------------------------------------------------------===//
#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"
#include "LoopScopedMutator.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

class DivisionSimplifier : public detail::LoopScopedMutator {
 protected:
  using LoopScopedMutator::visit_;

  Stmt visit_(const LetStmt *op, const Stmt &self) override {
    arith::Analyzer::Scope scope(ana_);
    if (op->value.dtype().is_integer()) ana_.bind_value(op->var, op->value);
    return IRMutator::visit_(op, self);
  }

  Expr visit_(const Binary *op, const Expr &self) override {
    Expr e = IRMutator::visit_(op, self);
    const auto *b = e.as<Binary>();
    if (!b || !b->a.dtype().is_integer()) return e;
    if (b->op != BinaryOp::FloorDiv && b->op != BinaryOp::FloorMod) return e;
    Expr zero = make_int(b->a.dtype(), 0);
    if (!ana_.can_prove(ge(b->a, zero)) || !ana_.can_prove(gt(b->b, zero))) return e;
    return Binary::make(b->op == BinaryOp::FloorDiv ? BinaryOp::Div : BinaryOp::Mod, b->a, b->b);
  }
};

}  // namespace

Stmt simplify_division(const Stmt &s) { return DivisionSimplifier().mutate(s); }

}  // namespace tessera::lower
