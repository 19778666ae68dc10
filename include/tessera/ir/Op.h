//===- tessera/ir/Op.h - Type-promoting expression builders ----------------===//
//
// The builders front ends use (the TVMScript parser, the TE builder, tests).
// Unlike the node factories in Expr.h, they convert operands to a common type
// first, with TVM's rules:
//   - float with integer: the integer is cast to the float type;
//   - two floats or two integers of different widths: cast to the wider
//     (same width, signed and unsigned: the signed type);
//   - bool with integer: the bool is cast to the integer type.
// C++ operators on Expr use these builders; a C++ literal on one side takes
// the other side's type (`x + 1` with x float16 is `x + T.float16(1)`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <vector>

#include "tessera/ir/Expr.h"

namespace tessera::ir {

/// The type both operands are converted to.
DataType promote_types(DataType a, DataType b);
/// `e` cast to `t` (no node when already of type t; constants fold).
Expr cast(DataType t, Expr e);

Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
/// True division on floats, truncating division on integers.
Expr div(Expr a, Expr b);
Expr truncdiv(Expr a, Expr b);
Expr truncmod(Expr a, Expr b);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
/// Logical and/or/not; operands are converted to bool (x != 0).
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
/// `a and b and ...` (true when empty), and its clauses back (a constant
/// true clause left out): predicates are built and taken apart this way.
Expr conjunction(const std::vector<Expr> &clauses);
std::vector<Expr> split_conjunction(const Expr &e);
Expr bitwise_and(Expr a, Expr b);
Expr bitwise_or(Expr a, Expr b);
Expr bitwise_xor(Expr a, Expr b);
Expr bitwise_not(Expr a);
Expr shift_left(Expr a, Expr b);
Expr shift_right(Expr a, Expr b);
Expr neg(Expr a);
/// Generic form of the builders above.
Expr binary(BinaryOp op, Expr a, Expr b);
Expr select(Expr cond, Expr t, Expr f);
Expr if_then_else(Expr cond, Expr t, Expr f);
/// A math intrinsic on one or two float operands (integers are cast to float32).
Expr call(Intrinsic op, std::vector<Expr> args);
/// The value `v` in `like`'s type: used for literals next to a typed operand.
Expr const_like(const Expr &like, double v);

inline Expr operator+(Expr a, Expr b) { return add(std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return sub(std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return mul(std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return div(std::move(a), std::move(b)); }
inline Expr operator-(Expr a) { return neg(std::move(a)); }
inline Expr operator<(Expr a, Expr b) { return lt(std::move(a), std::move(b)); }
inline Expr operator<=(Expr a, Expr b) { return le(std::move(a), std::move(b)); }
inline Expr operator>(Expr a, Expr b) { return gt(std::move(a), std::move(b)); }
inline Expr operator>=(Expr a, Expr b) { return ge(std::move(a), std::move(b)); }
inline Expr operator&&(Expr a, Expr b) { return logical_and(std::move(a), std::move(b)); }
inline Expr operator||(Expr a, Expr b) { return logical_or(std::move(a), std::move(b)); }
inline Expr operator!(Expr a) { return logical_not(std::move(a)); }

#define TESSERA_SCALAR_OPERATORS(OP, FN)                                                         \
  inline Expr operator OP(Expr a, int b) { Expr c = const_like(a, b); return FN(std::move(a), c); }  \
  inline Expr operator OP(int a, Expr b) { Expr c = const_like(b, a); return FN(c, std::move(b)); }  \
  inline Expr operator OP(Expr a, double b) { Expr c = const_like(a, b); return FN(std::move(a), c); } \
  inline Expr operator OP(double a, Expr b) { Expr c = const_like(b, a); return FN(c, std::move(b)); }
TESSERA_SCALAR_OPERATORS(+, add)
TESSERA_SCALAR_OPERATORS(-, sub)
TESSERA_SCALAR_OPERATORS(*, mul)
TESSERA_SCALAR_OPERATORS(/, div)
TESSERA_SCALAR_OPERATORS(<, lt)
TESSERA_SCALAR_OPERATORS(<=, le)
TESSERA_SCALAR_OPERATORS(>, gt)
TESSERA_SCALAR_OPERATORS(>=, ge)
#undef TESSERA_SCALAR_OPERATORS

}  // namespace tessera::ir
