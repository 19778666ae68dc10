//===- tessera/analysis/BlockInfo.h - What the rules know about a function -===//
//
// The facts every scheduling rule needs, computed once per function:
//
//   FuncInfo info = analysis::analyze(func);
//   for (const BlockInfo &b : info.blocks)       // leaf blocks, program order
//     b.dom_kind();                              // "SSR": iter kinds in order
//     b.trivial_binding;                         // loops one-to-one with iters
//     b.combiner;                                // Sum for C[i,j] = C[i,j] + ...
//     b.reads[0].dim_iters;                      // which iters index each dim
//     info.producers_of(b), info.consumers_of(b)
//
// Accesses are read from the block body (every Load and Store), not from
// the T.reads/T.writes regions, so they are exact: index expressions in
// terms of the block's iter vars, and for each buffer dimension the iter vars
// it uses. A block's own update read (`C[i, j]` in `C[i, j] = C[i, j] + x`)
// is not among its reads.
//
// The analysis never throws for a valid PrimFunc: anything unusual (a block
// under an if, a loop that starts at 3, a non-affine binding) is recorded as
// a fact (`trivial_binding = false`, `combiner = None`, ...) for the rules to
// decline on, with a reason.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"

namespace tessera::analysis {

/// One iterator of a block.
struct IterInfo {
  ir::Var var;
  ir::IterKind kind = ir::IterKind::Spatial;
  ir::Range dom;
  /// The enclosing loop the iter var is bound to when its binding is exactly
  /// that loop's variable, the loop starts at 0 and has the same extent as
  /// the domain (structurally); else undefined.
  ir::Var loop;
};

/// One point access (a Load or a Store) in a block body.
struct Access {
  ir::Buffer buffer;
  /// The index expressions, in terms of the block's iter vars.
  std::vector<ir::Expr> indices;
  /// For each buffer dimension, the positions (in BlockInfo::iters) of the
  /// iter vars its index uses, in iter order.
  std::vector<std::vector<int>> dim_iters;
  /// Every index is one iter var or a constant (no arithmetic): the access
  /// is a plain permutation/broadcast of the iteration space.
  bool is_simple = true;

  /// The iter (position) used by dimension `d` when it uses exactly one, else -1.
  int single_iter(int d) const;
  /// Positions of every iter var the access uses (sorted, unique).
  std::vector<int> iters() const;
  /// The iter that indexes the innermost (contiguous, row-major) dimension,
  /// or -1 (a constant, or an index mixing several iters).
  int inner_iter() const;
};

/// How a reduction block folds a value into its output.
enum class Combiner { None, Sum, Product, Max, Min, BitAnd, BitOr, BitXor };
/// "sum", "max", ... ("none").
const char *to_string(Combiner c);

struct BlockInfo {
  std::string name;
  /// The Block node.
  ir::Stmt block;
  /// The For loops enclosing the block inside the function (outermost
  /// first), excluding loops above enclosing blocks other than the root.
  std::vector<ir::Stmt> loops;
  std::vector<IterInfo> iters;
  /// Every iter var is bound to its own loop (IterInfo::loop defined for all)
  /// and every enclosing loop carries one iter var or has extent 1.
  bool trivial_binding = false;
  /// The block is under an IfThenElse or has a non-trivial T.where.
  bool is_guarded = false;
  /// Some enclosing loop is bound to a thread (the function is scheduled).
  bool is_thread_bound = false;

  std::vector<Access> reads;   ///< every Load of the body and init, minus the update read
  std::vector<Access> writes;  ///< every Store of the body

  /// For a reduction `W[idx] = combine(W[idx], value)`: the combiner, the
  /// folded value and the init value (when the init is `W[idx] = v`).
  Combiner combiner = Combiner::None;
  ir::Expr reduce_value;
  ir::Expr init_value;
  /// A tuple reduction (what relax prints for layer_norm: a sum and a sum
  /// of squares in one block, through T.let values): one folded value per
  /// write, in the order of `writes`, all with `combiner` and the same
  /// indices. Empty for a single reduction (`reduce_value`).
  std::vector<ir::Expr> tuple_values;

  /// Positions (in FuncInfo::blocks) of the blocks that write a buffer this
  /// block reads before it (producers) and that read what it writes after it
  /// (consumers).
  std::vector<int> producers, consumers;
  /// Writes at least one function parameter buffer.
  bool writes_output = false;

  /// "S", "R" or "O" per iter, in order: "SSR".
  std::string dom_kind() const;
  bool has_reduce() const;
  /// Only spatial iters, no init and no update read: out[...] = f(inputs).
  bool is_spatial() const;
  /// A reduction: reduce iters, one write whose indices use only spatial
  /// iters, a recognised combiner.
  bool is_reduction() const;
  /// A tuple reduction: reduce iters, several writes at the same indices
  /// (spatial iters only), each `W[idx] = W[idx] op value` with one combiner.
  bool is_tuple_reduction() const;
  /// Spatial with one simple write that uses every iter exactly once (the
  /// output is the iteration space, up to a permutation).
  bool is_injective() const;
  /// Injective and every read is simple and uses a subset of the iters in
  /// the same relative order as the write (elementwise, possibly broadcast).
  bool is_elementwise() const;
  /// The body is a single store whose block may be inlined into its
  /// consumers: spatial, one write to a non-parameter buffer, simple write
  /// indices, no allocations, not guarded.
  bool is_inlinable() const;
};

struct FuncInfo {
  ir::PrimFunc func;
  std::vector<BlockInfo> blocks;
  /// Some loop is bound to a thread: rules leave the function alone.
  bool is_scheduled = false;
  /// Statements outside any block (other than loops and sequences) or blocks
  /// nested in non-root blocks: the fallback handles them.
  bool has_opaque_structure = false;

  /// Position of the block named `name`, or -1.
  int find(const std::string &name) const;
  /// Positions of the reduction blocks (BlockInfo::is_reduction), in order.
  std::vector<int> reduction_blocks() const;
};

/// Analyses `f` (see the file comment).
FuncInfo analyze(const ir::PrimFunc &f);

}  // namespace tessera::analysis
