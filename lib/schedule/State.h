//===- lib/schedule/State.h - What primitives act on (private) -------------===//
//
// The state of a Schedule: the function, the trace and the options. It is a
// plain value: copying it is cheap (the IR is shared, immutable), which is how
// composite primitives (tile) stay atomic and how the Schedule rolls back.
//
// Primitives find statements through handles (find_block / find_loop return
// the statement with its ancestors) and change the function only through
// `replace`, which swaps statements by node identity and rebuilds their
// ancestors, sharing everything else.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/ir/Functor.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/schedule/Trace.h"

namespace tessera::schedule::detail {

struct State {
  ir::PrimFunc func;
  Trace trace;
  ScheduleOptions options;
  /// Names several blocks of the given function shared (TVM allows it), with
  /// the distinct names they were given: looking one up is ambiguous.
  std::map<std::string, std::vector<std::string>> ambiguous_block_names;
};

/// A statement of the function with the statements around it: ancestors run
/// from the function body (the root block) to the direct parent.
struct StmtPath {
  std::vector<ir::Stmt> ancestors;
  ir::Stmt stmt;
  const ir::For *loop() const { return stmt.as<ir::For>(); }
  const ir::Block *block() const { return stmt.as<ir::Block>(); }
  /// The nearest enclosing block (the scope); the root block for top-level statements.
  ir::Stmt scope() const;
};

/// The block `ref` names; StaleHandleError (for `primitive`) when there is none.
StmtPath find_block(const State &st, const BlockRef &ref, std::string_view primitive);
/// The loop of `ref`'s variable; StaleHandleError when it no longer exists.
StmtPath find_loop(const State &st, const LoopRef &ref, std::string_view primitive);
StmtPath find(const State &st, const BlockOrLoop &ref, std::string_view primitive);

/// The only mutation: replaces each statement keyed in `map` (by node) with
/// its value, rebuilding the ancestors.
void replace(State &st, const std::unordered_map<const ir::StmtNode *, ir::Stmt> &map);
void replace(State &st, const ir::Stmt &old_stmt, const ir::Stmt &new_stmt);
/// The same replacement inside a statement (for statements still being built).
ir::Stmt replace_in(const ir::Stmt &root, const std::unordered_map<const ir::StmtNode *, ir::Stmt> &map);

/// The names of all loop variables of `f`.
std::set<std::string> loop_names(const ir::PrimFunc &f);
/// `hint`, or `hint_1`, `hint_2`, ... : the first not in `taken`; added to it.
std::string fresh_name(std::set<std::string> &taken, const std::string &hint);
/// `f` with loops whose names repeat renamed (alpha-equivalent); `f` itself when none repeat.
ir::PrimFunc uniquify_loop_names(const ir::PrimFunc &f);
/// Gives every block a distinct, non-empty name: the first of several blocks
/// named B keeps B, the next become B_1, B_2...; an unnamed block is "block".
/// `ambiguous` receives each repeated name with the names its blocks got.
ir::PrimFunc uniquify_block_names(const ir::PrimFunc &f, std::map<std::string, std::vector<std::string>> &ambiguous);

/// The blocks directly under `s` (inside loops, ifs, lets, sequences but not
/// inside another block), in program order. For a block, its init and body.
std::vector<ir::Stmt> child_blocks(const ir::Stmt &s);
/// Every block under `s` (nested ones too), pre-order; `s` itself excluded.
std::vector<ir::Stmt> blocks_under(const ir::Stmt &s);

using ir::range_uses_var;
using ir::uses_var;
/// A copy of `b` with another predicate / annotations.
ir::Stmt block_with_predicate(const ir::Block &b, ir::Expr predicate);
ir::Stmt block_with_annotations(const ir::Block &b, ir::Annotations annotations);
/// A copy of `f` with another kind and thread tag / annotations.
ir::Stmt loop_with_kind(const ir::For &f, ir::ForKind kind, std::string thread_tag = "");
ir::Stmt loop_with_annotations(const ir::For &f, ir::Annotations annotations);

/// A handle's display name: 'C' or 'i'.
std::string quoted(const std::string &name);

}  // namespace tessera::schedule::detail
