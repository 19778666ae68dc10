//===- lib/lower/SimplifyDivision.cpp - Floor division to C division ---------===//
//
// TensorIR's `//` and `%` round toward minus infinity, C's toward zero. They
// agree when both operands are non-negative, which index arithmetic almost
// always is; proving it here keeps the generated code free of helper calls.
// Each division is first simplified with the loop ranges known.
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
    if (!in_simplified_) {
      // With the loop ranges known the division may drop a term or vanish:
      // (k_o * 512 + tx * 32 + v) // 128 with v < 32 is k_o * 4 + tx // 4,
      // the same for every v, which lets the compiler load once.
      Expr s = ana_.simplify(e);
      const auto *sb = s.as<Binary>();
      if (sb && (sb->op == BinaryOp::FloorDiv || sb->op == BinaryOp::FloorMod)) {
        e = s, b = sb;  // still one division: converted below
      } else if (!s.same_as(e)) {
        in_simplified_ = true;
        Expr out = mutate(s);
        in_simplified_ = false;
        return out;
      }
    }
    Expr zero = make_int(b->a.dtype(), 0);
    if (!ana_.can_prove(ge(b->a, zero)) || !ana_.can_prove(gt(b->b, zero))) return e;
    return Binary::make(b->op == BinaryOp::FloorDiv ? BinaryOp::Div : BinaryOp::Mod, b->a, b->b);
  }

 private:
  bool in_simplified_ = false;
};

}  // namespace

Stmt simplify_division(const Stmt &s) { return DivisionSimplifier().mutate(s); }

}  // namespace tessera::lower
