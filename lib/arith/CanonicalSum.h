//===- lib/arith/CanonicalSum.h - Linear sums of terms (private) ----------===//
//
// `c0 + sum(ci * term_i)` over one signed integer dtype: the canonical form
// of Add/Sub/Mul-by-constant/Neg trees. A term is any other expression
// (variable, load, floordiv, min, product of two non-constants, ...); like
// terms (structurally equal) are merged. Coefficient arithmetic is checked:
// an operation that would overflow int64 or leave the dtype's range fails
// (nullopt) and the caller keeps the expression as it was.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessera/arith/Analyzer.h"

namespace tessera::arith::detail {

struct SumTerm {
  ir::Expr atom;
  int64_t coef;
  size_t hash;  ///< structural hash of atom
};

struct LinearSum {
  ir::DataType dtype;
  std::vector<SumTerm> terms;  ///< in order of first appearance
  int64_t constant = 0;

  bool is_const() const { return terms.empty(); }
  /// The expression in canonical print order (see Analyzer.h).
  ir::Expr to_expr() const;
  /// Drops terms with coefficient 0.
  void compact();
  /// gcd of the |coefficients| of the terms (0 when there are none).
  int64_t coef_gcd() const;
};

/// Decomposes an (already simplified) integer expression.
LinearSum to_sum(const ir::Expr &e);
/// a + sign * b (sign is 1 or -1), merging like terms.
std::optional<LinearSum> add_sums(const LinearSum &a, const LinearSum &b, int64_t sign);
/// a * k.
std::optional<LinearSum> scale_sum(const LinearSum &a, int64_t k);
/// The constant term only: k of type t.
LinearSum const_sum(ir::DataType t, int64_t k);
/// True when the constant and every coefficient (and their negations) are
/// constants of the dtype, so to_expr() means the same as the sum.
bool sum_representable(const LinearSum &s);

/// The bound of a sum under the analyzer: interval arithmetic over its terms,
/// tightened by substituting the symbolic ends of bound variables (so that
/// `i - n` is at most -1 when i is bound to [0, n)). Defined in Simplify.cpp.
IntBound sum_bound(const LinearSum &s, const Analyzer &analyzer);

/// The simplifier behind Analyzer::simplify (Simplify.cpp).
ir::Expr simplify_expr(const ir::Expr &e, const Analyzer &analyzer);

}  // namespace tessera::arith::detail
