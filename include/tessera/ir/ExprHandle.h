//===- tessera/ir/ExprHandle.h - Expression handle, variables, ranges ------===//
//
// The handle types every other IR header builds on: `Expr` (any expression),
// `Var` (a named scalar: loop variable, block iter var, symbolic shape
// variable, let-bound name, scalar parameter) and `Range` (a half-open
// interval [min, min + extent)). The concrete expression nodes are in Expr.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tessera/ir/DataType.h"
#include "tessera/ir/Node.h"

namespace tessera::ir {

/// Base of every expression node: every expression has a data type.
struct ExprNode : Node {
  ExprNode(NodeKind k, DataType t) : Node(k), dtype(t) {}
  const DataType dtype;
};

/// A handle to an immutable expression.
class Expr : public NodeHandle<ExprNode> {
 public:
  using NodeHandle::NodeHandle;
  DataType dtype() const { return get()->dtype; }
};

/// A variable. Two variables are the same variable only if they are the same
/// node: the name is a hint for printing, not an identity.
struct VarNode : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Var;
  VarNode(std::string n, DataType t) : ExprNode(kKind, t), name(std::move(n)) {}
  const std::string name;
};
/// Spelling used by `as<T>()`/`is<T>()` for variables.
using VarExpr = VarNode;

/// A handle to a variable node; converts implicitly to Expr.
class Var : public Expr {
 public:
  Var() = default;
  /// Creates a fresh variable (distinct from every other variable).
  explicit Var(std::string name, DataType t = DataType::int32())
      : Expr(std::make_shared<VarNode>(std::move(name), t)) {}
  /// Wraps an expression that is known to be a variable (checked).
  static Var from(const Expr &e);
  const VarNode *get() const { return static_cast<const VarNode *>(Expr::get()); }
  const VarNode *operator->() const { return get(); }
  const std::string &name() const { return get()->name; }

 private:
  explicit Var(std::shared_ptr<const ExprNode> p) : Expr(std::move(p)) {}
};

/// Hash and equality of variables by identity, for unordered containers.
struct VarHash {
  size_t operator()(const Var &v) const { return std::hash<const void *>()(v.get()); }
};
struct VarEq {
  bool operator()(const Var &a, const Var &b) const { return a.same_as(b); }
};

/// A half-open interval [min, min + extent).
struct Range {
  Expr min;
  Expr extent;
  /// [0, extent)
  static Range from_extent(Expr extent);
};

}  // namespace tessera::ir
