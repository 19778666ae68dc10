//===- InterpreterSemanticsTest.cpp - Exact per-dtype semantics ------------===//
//
// Integer wrap-around, floor vs truncating division, float16/bfloat16
// rounding after every operation, float32 arithmetic in float, casts,
// reinterpret, shifts, bitwise operators, intrinsics, lazy if_then_else and
// Select, bool logic. Expressions are built with the node factories (which
// never fold constants) so the interpreter does all the work.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cfloat>
#include <climits>
#include <cmath>

#include "Programs.h"
#include "tessera/support/Half.h"

namespace tessera::testing {
namespace {

using runtime::InterpretError;
using runtime::NDArray;

const DataType i8 = DataType::int_(8), u8 = DataType::uint(8), i16 = DataType::int_(16), u16 = DataType::uint(16),
               i32t = DataType::int32(), u32 = DataType::uint(32), i64 = DataType::int64(), u64 = DataType::uint(64),
               f16 = DataType::float16(), bf16 = DataType::bfloat16(), f32 = DataType::float32(),
               f64 = DataType::float64(), boolt = DataType::bool_();

Expr bin(BinaryOp op, Expr a, Expr b) { return Binary::make(op, std::move(a), std::move(b)); }
Expr ci(DataType t, int64_t v) { return make_int(t, v); }
Expr cf(DataType t, double v) { return FloatImm::make(t, v); }
int64_t ival(const Expr &e) { return eval_expr(e).get_int(0); }
double fval(const Expr &e) { return eval_expr(e).get(0); }
std::string error_of(const Expr &e) {
  try {
    eval_expr(e);
  } catch (const InterpretError &err) {
    return err.what();
  }
  return "(no error)";
}

TEST(Semantics, IntegerWrapAround) {
  EXPECT_EQ(ival(bin(BinaryOp::Add, ci(i8, 100), ci(i8, 100))), -56);
  EXPECT_EQ(ival(bin(BinaryOp::Mul, ci(i8, -128), ci(i8, -1))), -128);
  EXPECT_EQ(ival(bin(BinaryOp::Add, ci(u8, 200), ci(u8, 100))), 44);
  EXPECT_EQ(ival(bin(BinaryOp::Sub, ci(u8, 3), ci(u8, 5))), 254);
  EXPECT_EQ(ival(bin(BinaryOp::Add, ci(i16, 32767), ci(i16, 1))), -32768);
  EXPECT_EQ(ival(bin(BinaryOp::Add, ci(i32t, INT32_MAX), ci(i32t, 1))), INT32_MIN);
  EXPECT_EQ(ival(bin(BinaryOp::Mul, ci(i32t, 65536), ci(i32t, 65536))), 0);
  EXPECT_EQ(ival(bin(BinaryOp::Sub, ci(u32, 0), ci(u32, 1))), 4294967295LL);
  EXPECT_EQ(ival(bin(BinaryOp::Add, ci(i64, INT64_MAX), ci(i64, 1))), INT64_MIN);
  NDArray u = eval_expr(bin(BinaryOp::Sub, ci(u64, 0), ci(u64, 1)));
  EXPECT_EQ(u.get_int(0), -1);  // the bit pattern of UINT64_MAX
  EXPECT_EQ(u.get(0), 18446744073709551615.0);
  EXPECT_EQ(ival(Unary::make(UnaryOp::Neg, ci(i8, -128))), -128);
  // uint64 compares unsigned: UINT64_MAX > 1.
  EXPECT_EQ(ival(bin(BinaryOp::GT, bin(BinaryOp::Sub, ci(u64, 0), ci(u64, 1)), ci(u64, 1))), 1);
  EXPECT_EQ(ival(bin(BinaryOp::Max, ci(u64, -1), ci(u64, 1))), -1);
}

TEST(Semantics, FloorAndTruncDivision) {
  EXPECT_EQ(ival(bin(BinaryOp::FloorDiv, ci(i32t, -7), ci(i32t, 2))), -4);
  EXPECT_EQ(ival(bin(BinaryOp::FloorMod, ci(i32t, -7), ci(i32t, 2))), 1);
  EXPECT_EQ(ival(bin(BinaryOp::Div, ci(i32t, -7), ci(i32t, 2))), -3);
  EXPECT_EQ(ival(bin(BinaryOp::Mod, ci(i32t, -7), ci(i32t, 2))), -1);
  EXPECT_EQ(ival(bin(BinaryOp::FloorDiv, ci(i32t, 7), ci(i32t, -2))), -4);
  EXPECT_EQ(ival(bin(BinaryOp::FloorMod, ci(i32t, 7), ci(i32t, -2))), -1);
  EXPECT_EQ(ival(bin(BinaryOp::Div, ci(i32t, 7), ci(i32t, -2))), -3);
  EXPECT_EQ(ival(bin(BinaryOp::Mod, ci(i32t, 7), ci(i32t, -2))), 1);
  EXPECT_EQ(ival(bin(BinaryOp::FloorDiv, ci(i32t, -8), ci(i32t, 2))), -4);
  EXPECT_EQ(ival(bin(BinaryOp::FloorMod, ci(i32t, -8), ci(i32t, 2))), 0);
  // Overflowing quotient wraps instead of trapping.
  EXPECT_EQ(ival(bin(BinaryOp::Div, ci(i32t, INT32_MIN), ci(i32t, -1))), INT32_MIN);
  EXPECT_EQ(ival(bin(BinaryOp::FloorDiv, ci(i64, INT64_MIN), ci(i64, -1))), INT64_MIN);
  EXPECT_EQ(ival(bin(BinaryOp::FloorMod, ci(i64, INT64_MIN), ci(i64, -1))), 0);
  EXPECT_EQ(ival(bin(BinaryOp::FloorDiv, ci(u8, 250), ci(u8, 3))), 83);
  EXPECT_EQ(ival(bin(BinaryOp::FloorMod, ci(u8, 250), ci(u8, 3))), 1);
  // Floats: floordiv/floormod/truncmod.
  EXPECT_EQ(fval(bin(BinaryOp::FloorDiv, cf(f32, -7.5), cf(f32, 2))), -4.0);
  EXPECT_EQ(fval(bin(BinaryOp::FloorMod, cf(f32, -7.5), cf(f32, 2))), 0.5);
  EXPECT_EQ(fval(bin(BinaryOp::Mod, cf(f32, -7.5), cf(f32, 2))), -1.5);
  // Float division by zero is IEEE, not an error.
  EXPECT_TRUE(std::isinf(fval(bin(BinaryOp::Div, cf(f32, 1), cf(f32, 0)))));
}

TEST(Semantics, Float16RoundsAfterEveryOperation) {
  // A float16 running sum of 3000 copies of 0.1: rounding after each add makes
  // it stall once the spacing of float16 exceeds 0.2 (at 256).
  const int n = 3000;
  Buffer X = Buffer::make("X", f16, {i32(n)}), S = Buffer::make("S", f16, {i32(1)});
  Buffer S32 = Buffer::make("S32", f32, {i32(1)});
  Var k("k"), vk("vk"), z("z");
  Stmt blk = block("sum", {reduce(vk, i32(n))}, {k},
                   Seq::make({Store::make(S, Load::make(S, {i32(0)}) + Load::make(X, {vk}), {i32(0)}),
                              Store::make(S32, Load::make(S32, {i32(0)}) + cast(f32, Load::make(X, {vk})), {i32(0)})}),
                   Seq::make({Store::make(S, cf(f16, 0), {i32(0)}), Store::make(S32, cf(f32, 0), {i32(0)})}));
  PrimFunc f = func("sum", {X, S, S32}, loop(k, n, blk));
  std::vector<NDArray> args{NDArray(f16, {n}), NDArray(f16, {1}), NDArray(f32, {1})};
  for (int i = 0; i < n; ++i) args[0].set(i, 0.1);
  run_program(f, args);
  float x = half_bits_to_float(float_to_half_bits(0.1f)), acc = 0, acc32 = 0;
  for (int i = 0; i < n; ++i) {
    acc = half_bits_to_float(float_to_half_bits(acc + x));
    acc32 += x;
  }
  EXPECT_EQ(args[1].get(0), acc);
  EXPECT_EQ(acc, 256.0f);
  EXPECT_EQ(args[2].get(0), acc32);
  EXPECT_GT(std::fabs(args[2].get(0) - args[1].get(0)), 40.0);

  // (a * b) + c rounds the product first: 0.1 * 0.1 in float16 then + 1.
  float a = half_bits_to_float(float_to_half_bits(0.1f));
  float prod = half_bits_to_float(float_to_half_bits(a * a));
  float want = half_bits_to_float(float_to_half_bits(prod + 1.0f));
  EXPECT_EQ(fval(bin(BinaryOp::Add, bin(BinaryOp::Mul, cf(f16, 0.1), cf(f16, 0.1)), cf(f16, 1))), want);
  // Overflow to infinity at 65520.
  EXPECT_TRUE(std::isinf(fval(bin(BinaryOp::Add, cf(f16, 65504), cf(f16, 16)))));
  EXPECT_EQ(fval(bin(BinaryOp::Add, cf(f16, 65504), cf(f16, 8))), 65504.0);
}

TEST(Semantics, BFloat16Rounding) {
  // Spacing at 1 is 2^-7: 1 + 2^-8 is a tie (to even: 1), 1 + 3*2^-8 rounds up.
  EXPECT_EQ(fval(bin(BinaryOp::Add, cf(bf16, 1), cf(bf16, 0.00390625))), 1.0);
  EXPECT_EQ(fval(bin(BinaryOp::Add, cf(bf16, 1), cf(bf16, 0.01171875))), 1.015625);
  EXPECT_EQ(fval(bin(BinaryOp::Mul, cf(bf16, 3), cf(bf16, 1.0 / 3))), round_to_bfloat16(3.0f * static_cast<float>(round_to_bfloat16(1.0 / 3))));
}

TEST(Semantics, Float32ArithmeticIsInFloat) {
  // In double, (1e8 + 1) - 1e8 would be 1; in float the sum rounds to 1e8.
  Expr a = cf(f32, 1e8);
  EXPECT_EQ(fval(bin(BinaryOp::Sub, bin(BinaryOp::Add, a, cf(f32, 1)), a)), 0.0);
  Expr d = cf(f64, 1e8);
  EXPECT_EQ(fval(bin(BinaryOp::Sub, bin(BinaryOp::Add, d, cf(f64, 1)), d)), 1.0);
  EXPECT_EQ(fval(bin(BinaryOp::Div, cf(f32, 1), cf(f32, 3))), static_cast<double>(1.0f / 3.0f));
}

TEST(Semantics, Casts) {
  auto cast_to = [](DataType t, Expr e) { return Cast::make(t, std::move(e)); };
  EXPECT_EQ(ival(cast_to(i32t, cf(f32, -2.7))), -2);
  EXPECT_EQ(ival(cast_to(i32t, cf(f32, 2.7))), 2);
  // Out of range saturates, NaN gives 0 (as PTX cvt.rzi).
  EXPECT_EQ(ival(cast_to(i32t, cf(f32, 3e9))), INT32_MAX);
  EXPECT_EQ(ival(cast_to(i32t, cf(f32, -3e9))), INT32_MIN);
  EXPECT_EQ(ival(cast_to(i32t, bin(BinaryOp::Div, cf(f32, 0), cf(f32, 0)))), 0);
  EXPECT_EQ(ival(cast_to(u8, cf(f32, 300))), 255);
  EXPECT_EQ(ival(cast_to(u8, cf(f32, -5))), 0);
  EXPECT_EQ(ival(cast_to(i8, cf(f32, -200))), -128);
  EXPECT_EQ(eval_expr(cast_to(u64, cf(f64, 1e30))).get_int(0), -1);
  // Integer to integer wraps; unsigned widening zero-extends.
  EXPECT_EQ(ival(cast_to(i8, ci(i32t, 300))), 44);
  EXPECT_EQ(ival(cast_to(i32t, ci(u8, 200))), 200);
  EXPECT_EQ(ival(cast_to(u32, ci(i8, -1))), 4294967295LL);
  EXPECT_EQ(ival(cast_to(i64, ci(i32t, -5))), -5);
  // To float: rounding to the target format.
  EXPECT_EQ(fval(cast_to(f16, ci(i32t, 2049))), 2048.0);
  EXPECT_EQ(fval(cast_to(f16, ci(i32t, 2051))), 2052.0);
  EXPECT_EQ(fval(cast_to(f16, cf(f32, 0.1))), round_to_half(0.1f));
  EXPECT_EQ(fval(cast_to(bf16, cf(f32, 0.1))), round_to_bfloat16(0.1f));
  EXPECT_EQ(fval(cast_to(f32, cf(f64, 0.1))), static_cast<double>(0.1f));
  EXPECT_EQ(fval(cast_to(f32, ci(u64, -1))), 18446744073709551616.0);
  EXPECT_TRUE(std::isinf(fval(cast_to(f16, cf(f32, 1e6)))));
  // Bool.
  EXPECT_EQ(ival(cast_to(boolt, cf(f32, 0.5))), 1);
  EXPECT_EQ(ival(cast_to(boolt, ci(i32t, 0))), 0);
  EXPECT_EQ(ival(cast_to(boolt, ci(i32t, 256))), 1);
  EXPECT_EQ(fval(cast_to(f32, const_true())), 1.0);
  EXPECT_EQ(ival(cast_to(i32t, const_true())), 1);
}

TEST(Semantics, Reinterpret) {
  auto re = [](DataType t, Expr e) { return Call::make(t, Intrinsic::Reinterpret, {std::move(e)}); };
  EXPECT_EQ(ival(re(i32t, cf(f32, 1.0))), 0x3f800000);
  EXPECT_EQ(fval(re(f32, ci(i32t, 0x40490fdb))), static_cast<double>(3.14159274101257324f));
  EXPECT_EQ(fval(re(f16, ci(u16, 0x3c00))), 1.0);
  EXPECT_EQ(ival(re(i16, cf(f16, -2.0))), -16384);  // 0xc000
  EXPECT_EQ(ival(re(u16, cf(bf16, 1.0))), 0x3f80);
  EXPECT_TRUE(std::isnan(fval(re(f16, ci(i16, -1)))));
  EXPECT_EQ(ival(re(i64, cf(f64, -0.0))), INT64_MIN);
  EXPECT_EQ(fval(re(bf16, cf(f16, 1.0))), bfloat16_bits_to_float(0x3c00));
}

TEST(Semantics, ShiftsAndBitwise) {
  EXPECT_EQ(ival(bin(BinaryOp::Shl, ci(i32t, 1), ci(i32t, 31))), INT32_MIN);
  EXPECT_EQ(ival(bin(BinaryOp::Shr, ci(i32t, -8), ci(i32t, 1))), -4);  // arithmetic
  EXPECT_EQ(ival(bin(BinaryOp::Shr, ci(u8, 200), ci(u8, 2))), 50);     // logical
  EXPECT_EQ(ival(bin(BinaryOp::Shl, ci(u8, 200), ci(u8, 1))), 144);
  EXPECT_EQ(ival(bin(BinaryOp::Shr, ci(u32, -1), ci(u32, 28))), 15);
  EXPECT_EQ(ival(bin(BinaryOp::Shr, ci(u64, -1), ci(u64, 60))), 15);
  EXPECT_EQ(ival(bin(BinaryOp::BitAnd, ci(i8, -1), ci(i8, 0x0f))), 15);
  EXPECT_EQ(ival(bin(BinaryOp::BitOr, ci(i8, 0x70), ci(i8, 0x0f))), 127);
  EXPECT_EQ(ival(bin(BinaryOp::BitXor, ci(u8, 0xff), ci(u8, 0x0f))), 0xf0);
  EXPECT_EQ(ival(Unary::make(UnaryOp::BitNot, ci(i8, 0))), -1);
  EXPECT_EQ(ival(Unary::make(UnaryOp::BitNot, ci(u8, 0))), 255);
  // A shift by the width or more, or by a negative amount, is an error.
  EXPECT_NE(error_of(bin(BinaryOp::Shl, ci(i32t, 1), ci(i32t, 32))).find("shift amount 32 out of range [0, 32) for int32"),
            std::string::npos);
  EXPECT_NE(error_of(bin(BinaryOp::Shr, ci(i8, 1), ci(i8, -1))).find("shift amount -1"), std::string::npos);
}

TEST(Semantics, Intrinsics) {
  auto mv = [](DataType t, bool max) { return Call::make(t, max ? Intrinsic::MaxValue : Intrinsic::MinValue, {}); };
  EXPECT_EQ(ival(mv(i8, true)), 127);
  EXPECT_EQ(ival(mv(i8, false)), -128);
  EXPECT_EQ(ival(mv(u8, true)), 255);
  EXPECT_EQ(ival(mv(u8, false)), 0);
  EXPECT_EQ(ival(mv(i32t, false)), INT32_MIN);
  EXPECT_EQ(ival(mv(i64, true)), INT64_MAX);
  EXPECT_EQ(eval_expr(mv(u64, true)).get_int(0), -1);
  EXPECT_EQ(fval(mv(f16, true)), 65504.0);
  EXPECT_EQ(fval(mv(f16, false)), -65504.0);
  EXPECT_EQ(fval(mv(bf16, true)), bfloat16_bits_to_float(0x7f7f));
  EXPECT_EQ(fval(mv(f32, true)), FLT_MAX);
  EXPECT_EQ(fval(mv(f64, false)), -DBL_MAX);

  Expr nan = bin(BinaryOp::Div, cf(f32, 0), cf(f32, 0));
  Expr inf = bin(BinaryOp::Div, cf(f32, 1), cf(f32, 0));
  auto pred = [](Intrinsic op, Expr e) { return Call::make(boolt, op, {std::move(e)}); };
  EXPECT_EQ(ival(pred(Intrinsic::IsNan, nan)), 1);
  EXPECT_EQ(ival(pred(Intrinsic::IsNan, inf)), 0);
  EXPECT_EQ(ival(pred(Intrinsic::IsInf, inf)), 1);
  EXPECT_EQ(ival(pred(Intrinsic::IsFinite, inf)), 0);
  EXPECT_EQ(ival(pred(Intrinsic::IsFinite, cf(f32, 1))), 1);

  auto m = [](Intrinsic op, Expr e) { return call(op, {std::move(e)}); };
  EXPECT_EQ(fval(m(Intrinsic::Exp, cf(f32, 1))), static_cast<double>(std::exp(1.0f)));
  EXPECT_EQ(fval(m(Intrinsic::Exp, cf(f16, 1))), round_to_half(std::exp(1.0f)));
  EXPECT_EQ(fval(m(Intrinsic::Sqrt, cf(f64, 2))), std::sqrt(2.0));
  EXPECT_EQ(fval(m(Intrinsic::Log, cf(f32, 2))), static_cast<double>(std::log(2.0f)));
  EXPECT_EQ(fval(m(Intrinsic::Rsqrt, cf(f32, 4))), 0.5);
  EXPECT_EQ(fval(m(Intrinsic::Sigmoid, cf(f32, 0))), 0.5);
  EXPECT_EQ(fval(m(Intrinsic::Tanh, cf(f32, 0.5))), static_cast<double>(std::tanh(0.5f)));
  EXPECT_EQ(fval(m(Intrinsic::Exp2, cf(f32, 3))), 8.0);
  EXPECT_EQ(fval(m(Intrinsic::Round, cf(f32, 2.5))), 3.0);      // half away from zero
  EXPECT_EQ(fval(m(Intrinsic::NearbyInt, cf(f32, 2.5))), 2.0);  // half to even
  EXPECT_EQ(fval(m(Intrinsic::Floor, cf(f32, -0.5))), -1.0);
  EXPECT_EQ(fval(m(Intrinsic::Ceil, cf(f32, -0.5))), 0.0);
  EXPECT_EQ(fval(m(Intrinsic::Trunc, cf(f32, -1.5))), -1.0);
  EXPECT_EQ(fval(call(Intrinsic::Pow, {cf(f32, 2), cf(f32, 10)})), 1024.0);
  EXPECT_EQ(fval(m(Intrinsic::Abs, cf(f32, -3))), 3.0);
  EXPECT_EQ(ival(Call::make(i8, Intrinsic::Abs, {ci(i8, -128)})), -128);
  EXPECT_EQ(ival(Call::make(i32t, Intrinsic::Abs, {ci(i32t, -7)})), 7);
  // Float min/max propagate NaN.
  EXPECT_TRUE(std::isnan(fval(bin(BinaryOp::Max, nan, cf(f32, 1)))));
  EXPECT_TRUE(std::isnan(fval(bin(BinaryOp::Min, cf(f32, 1), nan))));
  EXPECT_EQ(fval(bin(BinaryOp::Min, cf(f32, 1), cf(f32, -2))), -2.0);
}

TEST(Semantics, IfThenElseAndSelectAreLazy) {
  Buffer A = Buffer::make("A", f32, {i32(4)});
  std::vector<NDArray> in{NDArray(f32, {4})};
  in[0].set(3, 7.5);
  Var i("i");
  // The out-of-bounds arm is never evaluated.
  for (bool use_select : {false, true}) {
    Expr idx = ci(i32t, 10);
    Expr guarded = use_select ? Select::make(bin(BinaryOp::LT, idx, ci(i32t, 4)), Load::make(A, {idx}), cf(f32, -1))
                              : Call::make(f32, Intrinsic::IfThenElse,
                                           {bin(BinaryOp::LT, idx, ci(i32t, 4)), Load::make(A, {idx}), cf(f32, -1)});
    EXPECT_EQ(eval_expr(guarded, {A}, in).get(0), -1.0);
  }
  Expr taken = Call::make(f32, Intrinsic::IfThenElse, {const_true(), Load::make(A, {ci(i32t, 3)}), Load::make(A, {ci(i32t, 99)})});
  EXPECT_EQ(eval_expr(taken, {A}, in).get(0), 7.5);
  // Without the guard the load fails.
  EXPECT_THROW(eval_expr(Load::make(A, {ci(i32t, 10)}), {A}, in), InterpretError);
  // And/Or short-circuit too.
  Expr sc = bin(BinaryOp::And, bin(BinaryOp::LT, ci(i32t, 10), ci(i32t, 4)),
                bin(BinaryOp::GT, Load::make(A, {ci(i32t, 10)}), cf(f32, 0)));
  EXPECT_EQ(eval_expr(sc, {A}, in).get_int(0), 0);
}

TEST(Semantics, BoolLogicAndLet) {
  Expr t = const_true(), f = const_false();
  EXPECT_EQ(ival(bin(BinaryOp::And, t, f)), 0);
  EXPECT_EQ(ival(bin(BinaryOp::Or, t, f)), 1);
  EXPECT_EQ(ival(Unary::make(UnaryOp::Not, f)), 1);
  EXPECT_EQ(ival(bin(BinaryOp::EQ, t, t)), 1);
  EXPECT_EQ(ival(bin(BinaryOp::LT, cf(f32, 1), bin(BinaryOp::Div, cf(f32, 0), cf(f32, 0)))), 0);  // NaN compares false
  EXPECT_EQ(ival(bin(BinaryOp::NE, cf(f32, 1), bin(BinaryOp::Div, cf(f32, 0), cf(f32, 0)))), 1);
  NDArray b = eval_expr(bin(BinaryOp::GT, ci(i32t, 3), ci(i32t, 2)));
  EXPECT_EQ(b.dtype(), boolt);
  EXPECT_EQ(b.get_int(0), 1);
  Var x("x", f32), y("y");
  EXPECT_EQ(fval(Let::make(x, cf(f32, 1.5), bin(BinaryOp::Mul, x, x))), 2.25);
  EXPECT_EQ(ival(Let::make(y, ci(i32t, 6), Let::make(y, ci(i32t, 7), bin(BinaryOp::Add, y, y)))), 14);
}

}  // namespace
}  // namespace tessera::testing
