//===- VarUses.h - Which variables an expression mentions -----------------===//
//
// Private to lib/lower: whether an index depends on a loop variable (the
// vector and pipeline rewrites), and whether a condition or loop bound
// depends on the thread variables in scope (no barrier may go under it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <set>

#include "tessera/ir/Functor.h"

namespace tessera::lower::detail {

/// Whether `e` mentions a variable `pred` accepts.
template <typename Pred>
bool mentions_if(const ir::Expr &e, Pred &&pred) {
  bool found = false;
  ir::pre_order_visit(ir::Evaluate::make(e), [&](const ir::Expr &x) {
    if (const auto *v = x.as<ir::VarNode>(); v && pred(v)) found = true;
  }, nullptr);
  return found;
}

/// Whether `e` mentions `v` (ir::uses_var).
inline bool mentions(const ir::Expr &e, const ir::Var &v) { return ir::uses_var(e, v); }

/// Whether `e` mentions one of `vars` (the threadIdx-bound loop variables,
/// and lets computed from them, in scope): a condition or loop bound that
/// does is divergent, and no barrier may go under it.
inline bool depends_on(const ir::Expr &e, const std::set<const ir::VarNode *> &vars) {
  return mentions_if(e, [&](const ir::VarNode *x) { return vars.count(x) > 0; });
}

}  // namespace tessera::lower::detail
