//===- tessera/ir/Functor.h - Visitor and mutator bases --------------------===//
//
// IRVisitor walks expressions and statements; IRMutator rebuilds them. Both
// dispatch on the node kind (no RTTI) with one overridable `visit_` per node
// kind from NodeKinds.def. The defaults recurse into every child; a mutator's
// defaults return the original handle when no child changed, so unchanged
// subtrees stay shared (Halide's `with_*` rule).
//
//   struct CountLoads : IRVisitor {
//     int n = 0;
//     void visit_(const Load *op) override { ++n; IRVisitor::visit_(op); }
//   };
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>

#include "tessera/ir/Stmt.h"

namespace tessera::ir {

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  virtual void visit(const Expr &e);
  virtual void visit(const Stmt &s);

 protected:
  virtual void visit_(const IntImm *op);
  virtual void visit_(const FloatImm *op);
  virtual void visit_(const VarNode *op);
  virtual void visit_(const Binary *op);
  virtual void visit_(const Unary *op);
  virtual void visit_(const Select *op);
  virtual void visit_(const Cast *op);
  virtual void visit_(const Load *op);
  virtual void visit_(const Call *op);
  virtual void visit_(const Let *op);
  virtual void visit_(const StringImm *op);
  virtual void visit_(const BufferPtr *op);
  virtual void visit_(const OpaqueCall *op);

  virtual void visit_(const For *op);
  virtual void visit_(const Block *op);
  virtual void visit_(const Store *op);
  virtual void visit_(const Seq *op);
  virtual void visit_(const IfThenElse *op);
  virtual void visit_(const LetStmt *op);
  virtual void visit_(const Evaluate *op);

  /// Visits the min and extent of every range of a region.
  void visit_region(const BufferRegion &r);
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;
  virtual Expr mutate(const Expr &e);
  virtual Stmt mutate(const Stmt &s);
  /// Called for every buffer reference (loads, stores, regions, allocations).
  /// The default keeps the buffer.
  virtual Buffer mutate_buffer(const Buffer &b) { return b; }

 protected:
  // `self` is the handle of `op`, returned when nothing changes.
  virtual Expr visit_(const IntImm *op, const Expr &self);
  virtual Expr visit_(const FloatImm *op, const Expr &self);
  virtual Expr visit_(const VarNode *op, const Expr &self);
  virtual Expr visit_(const Binary *op, const Expr &self);
  virtual Expr visit_(const Unary *op, const Expr &self);
  virtual Expr visit_(const Select *op, const Expr &self);
  virtual Expr visit_(const Cast *op, const Expr &self);
  virtual Expr visit_(const Load *op, const Expr &self);
  virtual Expr visit_(const Call *op, const Expr &self);
  virtual Expr visit_(const Let *op, const Expr &self);
  virtual Expr visit_(const StringImm *op, const Expr &self);
  virtual Expr visit_(const BufferPtr *op, const Expr &self);
  virtual Expr visit_(const OpaqueCall *op, const Expr &self);

  virtual Stmt visit_(const For *op, const Stmt &self);
  virtual Stmt visit_(const Block *op, const Stmt &self);
  virtual Stmt visit_(const Store *op, const Stmt &self);
  virtual Stmt visit_(const Seq *op, const Stmt &self);
  virtual Stmt visit_(const IfThenElse *op, const Stmt &self);
  virtual Stmt visit_(const LetStmt *op, const Stmt &self);
  virtual Stmt visit_(const Evaluate *op, const Stmt &self);

  /// Mutates every range of a region and its buffer.
  BufferRegion mutate_region(const BufferRegion &r);
  /// Mutates a list; sets `changed` when any element changed.
  std::vector<Expr> mutate_list(const std::vector<Expr> &xs, bool &changed);
};

/// Replaces variables by expressions (identity lookup) in an expression or statement.
Expr substitute(const Expr &e, const std::vector<std::pair<Var, Expr>> &map);
Stmt substitute(const Stmt &s, const std::vector<std::pair<Var, Expr>> &map);

/// Calls `on_expr`/`on_stmt` on every node of `s` in pre-order (either may be empty).
void pre_order_visit(const Stmt &s, const std::function<void(const Expr &)> &on_expr,
                     const std::function<void(const Stmt &)> &on_stmt);

/// True when `e` mentions `v`.
bool uses_var(const Expr &e, const Var &v);
/// True when the range of `loop` (its min or extent) mentions `v`: an inner
/// loop of a nest that is not rectangular (a triangular one).
bool range_uses_var(const For &loop, const Var &v);

}  // namespace tessera::ir
