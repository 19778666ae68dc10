//===- Op.cpp - Type-promoting expression builders -------------------------===//
#include "tessera/ir/Op.h"

#include <cmath>

#include "tessera/support/Error.h"

namespace tessera::ir {

DataType promote_types(DataType a, DataType b) {
  if (a == b) return a;
  if (a.is_float() && b.is_float()) {
    if (a.bits() != b.bits()) return a.bits() > b.bits() ? a : b;
    return DataType::float32();  // float16 with bfloat16: neither holds the other
  }
  if (a.is_float()) return a;
  if (b.is_float()) return b;
  if (a.is_bool()) return b;
  if (b.is_bool()) return a;
  if (a.bits() != b.bits()) return a.bits() > b.bits() ? a : b;
  return a.is_int() ? a : b;
}

Expr cast(DataType t, Expr e) {
  if (e.dtype() == t) return e;
  if (const auto *i = e.as<IntImm>()) {
    if (t.is_float()) return FloatImm::make(t, e.dtype().is_uint() ? static_cast<double>(static_cast<uint64_t>(i->value))
                                                                    : static_cast<double>(i->value));
    if (t.is_int_like()) return IntImm::make(t, i->value);
  }
  if (const auto *f = e.as<FloatImm>()) {
    if (t.is_float()) return FloatImm::make(t, f->value);
    if (t.is_bool()) return IntImm::make(t, f->value != 0);
    if (t.is_integer() && std::isfinite(f->value)) return IntImm::make(t, static_cast<int64_t>(f->value));
  }
  return Cast::make(t, std::move(e));
}

static Expr to_bool(Expr e) {
  if (e.dtype().is_bool()) return e;
  return Binary::make(BinaryOp::NE, e, make_const(e.dtype(), 0));
}

Expr binary(BinaryOp op, Expr a, Expr b) {
  TESSERA_ICHECK(a.defined() && b.defined()) << binary_op_name(op) << " of an undefined operand";
  if (op == BinaryOp::And || op == BinaryOp::Or) return Binary::make(op, to_bool(a), to_bool(b));
  DataType t = promote_types(a.dtype(), b.dtype());
  if ((op == BinaryOp::FloorDiv || op == BinaryOp::FloorMod || op == BinaryOp::Mod) && t.is_bool())
    t = DataType::int32();
  return Binary::make(op, cast(t, std::move(a)), cast(t, std::move(b)));
}

Expr add(Expr a, Expr b) { return binary(BinaryOp::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary(BinaryOp::Sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
Expr truncdiv(Expr a, Expr b) { return binary(BinaryOp::Div, std::move(a), std::move(b)); }
Expr truncmod(Expr a, Expr b) { return binary(BinaryOp::Mod, std::move(a), std::move(b)); }
Expr floordiv(Expr a, Expr b) { return binary(BinaryOp::FloorDiv, std::move(a), std::move(b)); }
Expr floormod(Expr a, Expr b) { return binary(BinaryOp::FloorMod, std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return binary(BinaryOp::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(BinaryOp::Max, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return binary(BinaryOp::EQ, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return binary(BinaryOp::NE, std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return binary(BinaryOp::LT, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return binary(BinaryOp::LE, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return binary(BinaryOp::GT, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return binary(BinaryOp::GE, std::move(a), std::move(b)); }
Expr logical_and(Expr a, Expr b) { return binary(BinaryOp::And, std::move(a), std::move(b)); }
Expr logical_or(Expr a, Expr b) { return binary(BinaryOp::Or, std::move(a), std::move(b)); }
Expr logical_not(Expr a) { return Unary::make(UnaryOp::Not, to_bool(std::move(a))); }

Expr conjunction(const std::vector<Expr> &clauses) {
  Expr out;
  for (const Expr &c : clauses) out = out.defined() ? logical_and(out, c) : c;
  return out.defined() ? out : const_true();
}

namespace {
void split_conjunction_into(const Expr &e, std::vector<Expr> &out) {
  if (const Binary *b = e.as<Binary>(); b && b->op == BinaryOp::And) {
    split_conjunction_into(b->a, out);
    split_conjunction_into(b->b, out);
    return;
  }
  if (!is_const_int(e, 1)) out.push_back(e);
}
}  // namespace

std::vector<Expr> split_conjunction(const Expr &e) {
  std::vector<Expr> out;
  split_conjunction_into(e, out);
  return out;
}
Expr bitwise_and(Expr a, Expr b) { return binary(BinaryOp::BitAnd, std::move(a), std::move(b)); }
Expr bitwise_or(Expr a, Expr b) { return binary(BinaryOp::BitOr, std::move(a), std::move(b)); }
Expr bitwise_xor(Expr a, Expr b) { return binary(BinaryOp::BitXor, std::move(a), std::move(b)); }
Expr bitwise_not(Expr a) { return Unary::make(UnaryOp::BitNot, std::move(a)); }
Expr shift_left(Expr a, Expr b) { return binary(BinaryOp::Shl, std::move(a), std::move(b)); }
Expr shift_right(Expr a, Expr b) { return binary(BinaryOp::Shr, std::move(a), std::move(b)); }

Expr neg(Expr a) {
  if (const auto *i = a.as<IntImm>(); i && !a.dtype().is_bool()) return IntImm::make(a.dtype(), -i->value);
  if (const auto *f = a.as<FloatImm>()) return FloatImm::make(a.dtype(), -f->value);
  return Unary::make(UnaryOp::Neg, std::move(a));
}

Expr select(Expr cond, Expr t, Expr f) {
  DataType ty = promote_types(t.dtype(), f.dtype());
  return Select::make(to_bool(std::move(cond)), cast(ty, std::move(t)), cast(ty, std::move(f)));
}

Expr if_then_else(Expr cond, Expr t, Expr f) {
  DataType ty = promote_types(t.dtype(), f.dtype());
  return Call::make(ty, Intrinsic::IfThenElse, {to_bool(std::move(cond)), cast(ty, std::move(t)), cast(ty, std::move(f))});
}

Expr call(Intrinsic op, std::vector<Expr> args) {
  switch (op) {
    case Intrinsic::IfThenElse:
      TESSERA_ICHECK(args.size() == 3) << "if_then_else takes 3 arguments";
      return if_then_else(args[0], args[1], args[2]);
    case Intrinsic::IsNan:
    case Intrinsic::IsInf:
    case Intrinsic::IsFinite:
      return Call::make(DataType::bool_(), op, std::move(args));
    case Intrinsic::Abs:
      TESSERA_ICHECK(args.size() == 1) << "abs takes 1 argument";
      {
        DataType t = args[0].dtype();  // read before `args` is moved from
        return Call::make(t, op, std::move(args));
      }
    default: break;
  }
  DataType t = DataType::void_();
  for (const Expr &a : args) t = t.is_void() ? a.dtype() : promote_types(t, a.dtype());
  if (t.is_void() || !t.is_float()) t = DataType::float32();
  for (Expr &a : args) a = cast(t, a);
  return Call::make(t, op, std::move(args));
}

Expr const_like(const Expr &like, double v) {
  DataType t = like.dtype();
  if (t.is_int_like() && v != std::trunc(v)) return FloatImm::make(DataType::float32(), v);
  if (t.is_bool()) t = DataType::int32();
  return make_const(t, v);
}

}  // namespace tessera::ir
