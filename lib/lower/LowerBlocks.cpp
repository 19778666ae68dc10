//===- lib/lower/LowerBlocks.cpp - Blocks to plain index arithmetic --------===//
//
//   for i in range(128):                         for i in range(128):
//     with T.block("C"):                           if i // 32 == 0 ... (simplified)
//       vi = T.axis.spatial(128, i)      ->        C[i] = ...
//       T.where(i < 100)                           (predicate and init as ifs)
//       C[vi] = ...
//
// Bindings are simplified under the ranges of the enclosing loops, which are
// known at this point (the analyzer is scoped per loop).
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

class BlockLowerer : public detail::LoopScopedMutator {
 protected:
  using LoopScopedMutator::visit_;

  Stmt visit_(const Block *op, const Stmt &) override {
    // Step 1. Iter vars -> simplified bindings.
    std::vector<std::pair<Var, Expr>> map;
    for (size_t i = 0; i < op->iter_vars.size(); ++i)
      map.emplace_back(op->iter_vars[i].var, ana_.simplify(op->bindings[i]));
    Stmt body = mutate(substitute(op->body, map));
    // Step 2. The init runs where every reduce iter var is at its minimum.
    if (op->init) {
      Expr first;
      for (size_t i = 0; i < op->iter_vars.size(); ++i) {
        const IterVar &iv = op->iter_vars[i];
        if (iv.kind != IterKind::Reduce) continue;
        Expr at_min = ana_.simplify(eq(map[i].second, iv.dom.min));
        first = first.defined() ? logical_and(first, at_min) : at_min;
      }
      Stmt init = mutate(substitute(*op->init, map));
      if (!first.defined() || is_const_int(first, 1)) body = Seq::make({init, body});
      else if (!is_const_int(first, 0)) body = Seq::make({IfThenElse::make(first, init), body});
    }
    // Step 3. The predicate guards everything, init included.
    Expr pred = ana_.simplify(substitute(op->predicate, map));
    if (is_const_int(pred, 1)) return body;
    return IfThenElse::make(pred, body);
  }
};

}  // namespace

Stmt lower_blocks(const Stmt &s) { return BlockLowerer().mutate(s); }

}  // namespace tessera::lower
