//===- tessera/arith/Analyzer.h - Integer bounds, proofs, simplification --===//
//
// The arithmetic analyzer: a context of facts about integer variables (their
// ranges and values) and three queries over it:
//
//   const_bound(e)   the constant interval [min, max] that `e` stays within
//   can_prove(c)     whether the bool `c` holds for every value of the context
//   simplify(e)      an equivalent, canonical and readable expression
//
//   arith::Analyzer ana;
//   ana.bind(i, 0, 3);                                   // i in [0, 3]
//   ana.bind(j, ir::Range::from_extent(ir::i32(32)));   // j in [0, 32)
//   ana.simplify((i * 32 + j) / 32)  // floordiv  ->  i
//   ana.simplify((j + i * 32) % 32)  // floormod  ->  j
//   ana.can_prove(i * 32 + j < 128)                  ->  true
//   ana.const_bound(i * 32 + j)                      ->  [0, 127]
//
// Semantics. Every rewrite holds under the IR's semantics with one
// assumption shared with TVM and C: signed integer arithmetic does not
// overflow (the values of the program fit its dtype). Unsigned expressions
// are only constant-folded (with wrap-around). Floating-point expressions are
// never rewritten; only their integer sub-expressions (load indices, ...) are.
//
// Canonical form of integer sums. Add/Sub/Mul-by-constant trees are collected
// into `c0 + sum(ci * term_i)` with like terms merged; the terms are printed
// positive ones first, by decreasing |coefficient|, ties broken by first
// appearance in the input, then the negative ones, then the constant:
//   i1 + i0 * 16            ->  i0 * 16 + i1
//   x + 3 < y + 5           ->  x < y + 2
//   i // 4 * 4 + i % 4      ->  i
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/ir/Expr.h"

namespace tessera::arith {

/// An inclusive constant interval [min, max]. kNegInf / kPosInf stand for an
/// unknown lower / upper end; arithmetic on bounds saturates to them.
///   IntBound{0, 127}            0 <= x <= 127
///   IntBound::everything()      nothing known
struct IntBound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t min = kNegInf;
  int64_t max = kPosInf;

  /// True when the interval holds exactly one (finite) value.
  bool is_const() const { return min == max && min != kNegInf && max != kPosInf; }
  /// True when nothing is known.
  bool is_everything() const { return min == kNegInf && max == kPosInf; }
  /// True when `v` lies within the interval.
  bool contains(int64_t v) const { return min <= v && v <= max; }
  static IntBound everything() { return {}; }
  static IntBound constant(int64_t v) { return {v, v}; }
  /// The values an integer (or bool) dtype can hold; everything for others.
  static IntBound of_dtype(ir::DataType t);
  /// Smallest interval containing both.
  IntBound union_with(const IntBound &o) const;
  /// Largest interval contained in both (may be empty: min > max).
  IntBound intersect(const IntBound &o) const;
  bool operator==(const IntBound &o) const { return min == o.min && max == o.max; }
  /// "[0, 127]", "[-inf, 3]".
  std::string str() const;
};

/// Facts about variables, and the queries that use them.
///
/// Variables are identified by node (ir::Var identity), never by name. A fact
/// about `v` replaces any earlier fact about `v`; Scope undoes the facts made
/// within it. The analyzer is a plain value: copying it copies the facts.
class Analyzer {
 public:
  Analyzer() = default;

  /// v ranges over [dom.min, dom.min + dom.extent). The range may be symbolic
  /// (e.g. [0, n) with n bound elsewhere): the constant bound of v is then
  /// derived from the bounds of n, and the symbolic ends are kept for proofs
  /// such as `i < n`.
  void bind(const ir::Var &v, const ir::Range &dom);
  /// v ranges over the inclusive constant interval [min, max].
  void bind(const ir::Var &v, int64_t min, int64_t max);
  /// v equals `value`: simplify substitutes it, bounds and proofs use it.
  /// `value` must not mention `v`.
  void bind_value(const ir::Var &v, const ir::Expr &value);
  /// Adds what the bool `cond` says about single variables: conjunctions of
  /// `v < e`, `v <= e`, `v > e`, `v >= e`, `v == e` (either side) narrow the
  /// constant bound of `v` (e.g. a block predicate `i0 * 16 + i1 < 100` is
  /// kept as a fact, see can_prove). Scoped like bind.
  void assume(const ir::Expr &cond);

  /// Simplifies `e` under the facts (see the file comment). The result has
  /// e's dtype and is equal to `e` for every value of the context.
  ir::Expr simplify(const ir::Expr &e) const;
  /// A constant interval containing every value of `e` (integer or bool
  /// expressions; everything for others). Uses the facts and simplifies `e`
  /// first, so `i * 32 + j - i * 32` is bounded by j's bound.
  IntBound const_bound(const ir::Expr &e) const;
  /// True when the bool `cond` provably holds for all values of the context.
  /// False means "could not prove", not "is false".
  bool can_prove(const ir::Expr &cond) const;
  /// True when `a == b` provably holds (integers: a - b simplifies to 0).
  bool can_prove_equal(const ir::Expr &a, const ir::Expr &b) const;

  /// The constant bound recorded for `v` (everything when unbound).
  IntBound var_bound(const ir::Var &v) const;
  /// True when a range or value was bound to `v`.
  bool is_bound(const ir::Var &v) const;

  /// Undoes, on destruction, every bind/bind_value/assume made on `analyzer`
  /// while the scope was alive (scopes nest, LIFO):
  ///   {
  ///     arith::Analyzer::Scope scope(ana);
  ///     ana.bind(k, 0, 31);          // only inside the loop body
  ///     ...
  ///   }                              // k is unbound again
  class Scope {
   public:
    explicit Scope(Analyzer &analyzer)
        : analyzer_(analyzer), mark_(analyzer.undo_.size()), facts_mark_(analyzer.facts_.size()) {}
    ~Scope() { analyzer_.undo_to(mark_, facts_mark_); }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

   private:
    Analyzer &analyzer_;
    size_t mark_;
    size_t facts_mark_;
  };

  /// What the analyzer knows about one variable (exposed for the
  /// implementation files of tessera::arith; not for users).
  struct VarInfo {
    IntBound bound;      ///< constant bound (always valid)
    ir::Expr sym_min;    ///< symbolic inclusive lower end, or undefined
    ir::Expr sym_max;    ///< symbolic inclusive upper end, or undefined
    ir::Expr value;      ///< the bound value (bind_value), or undefined
  };
  /// The facts about `v`, or nullptr.
  const VarInfo *info(const ir::Var &v) const;
  /// The relations added by assume(), each as an integer expression `d`
  /// known to satisfy `d <= 0` (implementation detail, like VarInfo).
  const std::vector<ir::Expr> &facts() const { return facts_; }

 private:
  void set_info(const ir::Var &v, VarInfo info);
  void undo_to(size_t mark, size_t facts_mark);

  std::unordered_map<ir::Var, VarInfo, ir::VarHash, ir::VarEq> vars_;
  /// (variable, fact before the change; nullopt-like: had_ = false).
  struct Undo {
    ir::Var var;
    bool had;
    VarInfo before;
  };
  std::vector<Undo> undo_;
  std::vector<ir::Expr> facts_;
};

/// Simplifies `e` without any facts about its variables (their dtype ranges
/// only).
ir::Expr simplify(const ir::Expr &e);

}  // namespace tessera::arith
