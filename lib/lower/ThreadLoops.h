//===- ThreadLoops.h - Which thread axis a loop is bound to ---------------===//
//
// Private to lib/lower: the passes that reason about a kernel's threads
// (the cross-thread reduction, the single-writer guard, the barriers, the
// software pipeline) ask of a loop which threadIdx axis it is, and of an
// expression whether it depends on the thread variables in scope.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <set>
#include <string>

#include "tessera/ir/Functor.h"
#include "tessera/ir/Stmt.h"

namespace tessera::lower::detail {

/// 0, 1, 2 for a loop bound to threadIdx.x/y/z; -1 for any other loop.
inline int thread_axis(const ir::For *f) {
  if (f->for_kind != ir::ForKind::ThreadBinding) return -1;
  for (int a = 0; a < 3; ++a)
    if (f->thread_tag == std::string("threadIdx.") + "xyz"[a]) return a;
  return -1;
}

/// Whether `e` mentions one of `vars` (the threadIdx-bound loop variables,
/// and lets computed from them, in scope): a condition or loop bound that
/// does is divergent, and no barrier may go under it.
inline bool depends_on(const ir::Expr &e, const std::set<const ir::VarNode *> &vars) {
  bool found = false;
  ir::pre_order_visit(ir::Evaluate::make(e), [&](const ir::Expr &x) {
    if (const auto *v = x.as<ir::VarNode>(); v && vars.count(v)) found = true;
  }, nullptr);
  return found;
}

}  // namespace tessera::lower::detail
