//===- tessera/arith/IterMap.h - Affine iteration-map detection -----------===//
//
// Decides whether a block's bindings are an affine map of its surrounding
// loops, the way they are after split, fuse and reorder, and returns the map
// in a structured form.
//
// Vocabulary (one loop variable `f` of extent 100 split by 10 below):
//   IterMark   an iteration space [0, extent): either one loop variable, or
//              a fusion of several (an IterSum, e.g. i0 * 16 + i1 over
//              i0 in [0, 4), i1 in [0, 16): extent 64)
//   IterSplit  one digit of a mark: (mark // lower_factor) % extent, times
//              scale. `f // 10` is IterSplit{f, lower_factor 10, extent 10,
//              scale 1}; `f % 10` is IterSplit{f, 1, 10, 1}
//   IterSum    base + sum of splits: the normal form of one binding
//
//   vi = i0 * 16 + i1          -> one split of the fused mark (i0*16 + i1)
//   vj = f // 80, vk = f % 80  -> split{f, 80, ext, 1} and split{f, 1, 80, 1}
//   v  = (i0 * 4 + i1) * 8 + i2
//   vi = f // 16 * 4 + g // 4  (split of a fuse, fuse of splits)
//
// Checks, by level:
//   NoCheck     the bindings only need to be affine (sums of splits);
//   Surjective  in addition, no part of any loop is used twice (within one
//               binding or across bindings): the bindings are independent
//               and take every value of their domains. Loops may be unused
//               (a spatial block under a reduction loop). This is TVM's
//               "affine binding" precondition;
//   Bijective   in addition, every loop is used entirely: the loop nest and
//               the bindings' domains correspond one to one.
//
// A predicate `fused < c` (conjunctions allowed), where `fused` is a
// fusion of loops or one loop, marks the iteration space of that fusion as
// [0, c) instead of its product of extents: this is how non-dividing splits
// stay bijective (`c` may be a loop-free symbolic bound, e.g. the tiles of a
// symbolic extent `m`: the space narrows to [0, m) when m <= the product is
// provable, else keeps the product):
//   for i0 in range(7): for i1 in range(16):  where i0 * 16 + i1 < 100
//     vi = i0 * 16 + i1         -> bijective onto [0, 100)
//
// Failures come with a reason (LLVM style), e.g.
//   "binding 'vi' uses loop 'i' twice"
//   "loop 'k' is not used by any binding"
//   "extent mismatch: fused mark extent 100 is not divisible by 16 (binding 'vi')"
//   "loop 'i' is not fully used: no binding uses 'i % 2'"
//   "binding 'vi' is not affine: 'i * j' multiplies two loop variables"
//
// Loops must start at 0 (schedules normalise loops to start at 0).
// Constant extents are fully supported; a symbolic extent (e.g. `n`) is
// supported for a loop used whole (vi = i) or as the outer part of a
// fusion/split with constant inner parts; scales must be constants.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/arith/Analyzer.h"

namespace tessera::arith {

struct IterMark;

/// One digit of an iteration space: ((source // lower_factor) % extent) * scale.
struct IterSplit {
  std::shared_ptr<const IterMark> source;
  ir::Expr lower_factor;  ///< positive constant
  ir::Expr extent;        ///< number of values of the digit
  ir::Expr scale;         ///< constant multiplier (positive)
};

/// base + sum(args): the normal form of one binding. `args` are ordered by
/// decreasing scale (outermost digit first). `base` mentions no loop variable.
/// At the checked levels every binding is exactly one split of scale 1 (a
/// sum of several loops is fused into one mark first), so its values are the
/// contiguous range base + [0, args[0].extent).
struct IterSum {
  std::vector<IterSplit> args;
  ir::Expr base;
};

/// An iteration space [0, extent): a loop variable, or a fusion of splits of
/// other marks (fused.args ordered by decreasing scale, the last scale 1,
/// each scale the product of the extents after it; fused.base is 0).
struct IterMark {
  ir::Var loop;        ///< defined when the mark is one loop
  IterSum fused;       ///< the fusion when `loop` is undefined
  ir::Expr extent;     ///< number of iterations (the predicate's bound if any)
  /// True for a loop mark.
  bool is_loop() const { return loop.defined(); }
};

/// How much to check (see the file comment).
enum class IterMapLevel { Bijective, Surjective, NoCheck };

/// The outcome of detect_iter_map: one IterSum per binding, or a reason.
struct IterMapResult {
  std::vector<IterSum> indices;
  /// Empty on success; otherwise why the bindings are not an affine map.
  std::string why_not;
  bool ok() const { return why_not.empty(); }
  explicit operator bool() const { return ok(); }
};

/// Detects the affine map `bindings` (integer expressions over the loop
/// variables and loop-free symbols) of the loops `loops` (var, range starting
/// at 0), under `predicate` (a bool; pass an undefined Expr or `True` for
/// none). `binding_names` (optional, same length as `bindings`) name the
/// bindings in messages; otherwise they are called "#0", "#1", ...
/// The analyzer supplies facts about free symbols (e.g. n >= 1); the loops
/// are bound inside a scope of a copy, never on `analyzer` itself.
///
///   detect_iter_map({f / 80, f % 80}, {{f, [0, 8000)}}, {}, Bijective, ana)
///     -> ok: [{f,80,100,1}], [{f,1,80,1}]
IterMapResult detect_iter_map(const std::vector<ir::Expr> &bindings,
                              const std::vector<std::pair<ir::Var, ir::Range>> &loops,
                              const ir::Expr &predicate, IterMapLevel level,
                              const Analyzer &analyzer,
                              const std::vector<std::string> &binding_names = {});

/// True when the bindings are an affine map of the loops at the Surjective
/// level (TVM's "affine binding": what compute_at, reorder, blockize and
/// friends require). Sets `*why_not` on failure when given.
bool is_affine_binding(const std::vector<ir::Expr> &bindings,
                       const std::vector<std::pair<ir::Var, ir::Range>> &loops,
                       const ir::Expr &predicate, const Analyzer &analyzer,
                       std::string *why_not = nullptr);

/// The inverse of a bijective map: `result` is what detect_iter_map returned
/// at the Bijective level for `loops`, `outputs` one variable per binding
/// (its value, within base + [0, extent) of the binding). Returns each loop
/// variable of `loops` as an expression of `outputs`, simplified knowing the
/// outputs' ranges; empty with `*why_not` set when `result` is not a
/// bijective map of those loops.
///   inverse_iter_map(detect({n * 12 + h * 4 + w}), {u})  ->  {u // 12, u // 4 % 3, u % 4}
///   inverse_iter_map(detect({f // 80, f % 80}), {a, b})  ->  {a * 80 + b}
std::vector<ir::Expr> inverse_iter_map(const IterMapResult &result,
                                       const std::vector<std::pair<ir::Var, ir::Range>> &loops,
                                       const std::vector<ir::Var> &outputs, std::string *why_not = nullptr);

/// The expression of a split / sum / mark over the loop variables (the
/// normalised binding), simplified:
///   to_expr(split{f, 80, 100, 1}) -> f // 80
///   to_expr(sum of split{i0*16+i1 mark, 1, 64, 1}) -> i0 * 16 + i1
ir::Expr to_expr(const IterSplit &split);
ir::Expr to_expr(const IterSum &sum);
ir::Expr to_expr(const IterMark &mark);

/// A one-line description for messages and test failures:
///   "split(f, lower=80, extent=100, scale=1)"
std::string to_string(const IterSum &sum);

}  // namespace tessera::arith
