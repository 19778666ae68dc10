//===- lib/arith/ArithUtil.h - Private helpers of tessera::arith ----------===//
//
// Saturating interval arithmetic, floor division on int64, constant folding
// of integer operators, the plain bound evaluator, and a small expression
// printer for messages (arith must not depend on the TVMScript printer).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "tessera/arith/Analyzer.h"

namespace tessera::arith::detail {

/// Floor division / modulo on int64 (b != 0).
inline int64_t floordiv64(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t floormod64(int64_t a, int64_t b) { return a - floordiv64(a, b) * b; }

/// Checked int64 arithmetic: nullopt on overflow.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// Saturating arithmetic on interval ends (kNegInf/kPosInf are infinities).
int64_t sat_add(int64_t a, int64_t b);
int64_t sat_neg(int64_t a);
int64_t sat_mul(int64_t a, int64_t b);

/// Folds `a op b` for integer/bool constants of type `t` (operands' type).
/// nullopt when undefined (division by zero, overflowing INT_MIN / -1, shift
/// out of range). The result is wrapped by IntImm::make by the caller.
std::optional<int64_t> fold_binary(ir::BinaryOp op, ir::DataType t, int64_t a, int64_t b);

/// True when `t` can hold every value of `b`.
bool fits(const IntBound &b, ir::DataType t);

/// The constant bound of `e` by interval arithmetic over its tree, using the
/// analyzer's facts about variables; does not simplify `e` first.
IntBound eval_bound(const ir::Expr &e, const Analyzer &analyzer);

/// A compact TVMScript-like rendering for messages: "i * 16 + j // 4".
std::string expr_text(const ir::Expr &e);

/// True when `e` mentions a variable for which `pred(var)` holds.
bool uses_var(const ir::Expr &e, const std::function<bool(const ir::VarNode *)> &pred);

}  // namespace tessera::arith::detail
