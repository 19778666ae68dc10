//===- LoopScopedMutator.h - A mutator that knows the loop ranges --------===//
//
// Private to lib/lower. Passes that simplify or prove facts about index
// expressions derive from LoopScopedMutator: while a loop's body is visited,
// `ana_` knows the loop variable's range, and forgets it afterwards.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"

namespace tessera::lower::detail {

class LoopScopedMutator : public ir::IRMutator {
 protected:
  using ir::IRMutator::visit_;
  ir::Stmt visit_(const ir::For *op, const ir::Stmt &self) override {
    arith::Analyzer::Scope scope(ana_);
    ana_.bind(op->loop_var, ir::Range{op->min, op->extent});
    return ir::IRMutator::visit_(op, self);
  }

  arith::Analyzer ana_;
};

}  // namespace tessera::lower::detail
