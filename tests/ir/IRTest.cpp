//===- IRTest.cpp - Data types, constants, builders, functors, functions ---===//
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tessera/ir/Func.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/support/Error.h"
#include "tessera/support/Half.h"

using namespace tessera;
using namespace tessera::ir;

namespace {

float bits_to_float(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

const DataType kF32 = DataType::float32();

}  // namespace

//===----------------------------------------------------------------------===//
// DataType
//===----------------------------------------------------------------------===//

TEST(DataType, ParseAndStrRoundTripForEveryType) {
  const char *names[] = {"bool",     "int8",   "int16",     "int32",   "int64",   "uint8",
                         "uint16",   "uint32", "uint64",    "float16", "float32", "float64",
                         "bfloat16", "handle", "float32x4", "int8x16"};
  for (const char *name : names) {
    std::optional<DataType> t = DataType::parse(name);
    ASSERT_TRUE(t.has_value()) << name;
    EXPECT_EQ(t->str(), name);
    EXPECT_EQ(DataType::parse(t->str()), t);
  }
  EXPECT_EQ(DataType::parse("float16"), DataType::float16());
  EXPECT_EQ(DataType::parse("bfloat16"), DataType::bfloat16());
  EXPECT_EQ(DataType::parse("int64"), DataType::int64());
  EXPECT_EQ(DataType::parse("float32x4")->lanes(), 4);
  EXPECT_EQ(DataType::void_().str(), "void");
  EXPECT_TRUE(DataType::parse("void")->is_void());
}

TEST(DataType, ParseRejectsUnknownNames) {
  for (const char *bad : {"float8", "int7", "", "int", "float", "bfloat32", "uint1", "int32x0", "int32x",
                          "Float32", "float32 ", "int32x4x2", "handle64"})
    EXPECT_FALSE(DataType::parse(bad).has_value()) << "'" << bad << "'";
}

TEST(DataType, Predicates) {
  EXPECT_TRUE(DataType::bool_().is_int_like());
  EXPECT_FALSE(DataType::bool_().is_integer());
  EXPECT_TRUE(DataType::uint(8).is_integer());
  EXPECT_TRUE(DataType::bfloat16().is_float());
  EXPECT_FALSE(DataType::bfloat16().is_float16());
  EXPECT_EQ(DataType::bool_().bytes(), 1);
  EXPECT_EQ(DataType::float16().bytes(), 2);
}

//===----------------------------------------------------------------------===//
// Half.h
//===----------------------------------------------------------------------===//

TEST(Half, Float16KnownBitPatterns) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);                  // largest finite
  EXPECT_EQ(float_to_half_bits(6.103515625e-05f), 0x0400);          // smallest normal, 2^-14
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);     // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1023.0f, -24)), 0x03ff);  // largest subnormal
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  uint16_t nan = float_to_half_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
}

TEST(Half, Float16RoundsToNearestEven) {
  // Overflow: 65520 is halfway between 65504 and 65536 (= inf); ties go to even (inf).
  EXPECT_EQ(float_to_half_bits(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(1e6f), 0x7c00);
  // 1 + 2^-11 is halfway between 1 (even) and 1 + 2^-10: down.
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9: up.
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.1f, -11)), 0x3c01);
  // Subnormals: 2^-25 is halfway between 0 and 2^-24: to even (0); a bit more rounds up.
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 * 2^-24: tie, to even 2
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -30)), 0x0000);
  // The largest subnormal plus half an ulp rounds up into the smallest normal.
  EXPECT_EQ(float_to_half_bits(std::ldexp(1023.5f, -24)), 0x0400);
}

TEST(Half, Float16ToFloat) {
  EXPECT_EQ(half_bits_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_bits_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_bits_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_bits_to_float(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(half_bits_to_float(0x7c00)));
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7e00)));
  EXPECT_TRUE(std::signbit(half_bits_to_float(0x8000)));
  // Every finite half round-trips.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;
    ASSERT_EQ(float_to_half_bits(half_bits_to_float(static_cast<uint16_t>(h))), h) << std::hex << h;
  }
}

TEST(Half, BFloat16KnownBitPatterns) {
  EXPECT_EQ(float_to_bfloat16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bfloat16_bits(-2.0f), 0xc000);
  // 1 + 2^-8 is halfway between 1 (even) and 1 + 2^-7: down; 1 + 3 * 2^-8: up to even.
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bfloat16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // Overflow of the largest float rounds to inf; inf stays inf.
  EXPECT_EQ(float_to_bfloat16_bits(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bfloat16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  // Subnormal floats keep their top bits.
  EXPECT_EQ(float_to_bfloat16_bits(bits_to_float(0x00080000u)), 0x0008);
  // NaN stays a quiet NaN (a NaN whose top 16 bits alone would read as inf too).
  uint16_t nan = float_to_bfloat16_bits(bits_to_float(0x7f800001u));
  EXPECT_EQ(nan & 0x7f80, 0x7f80);
  EXPECT_NE(nan & 0x007f, 0);
  EXPECT_EQ(bfloat16_bits_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bfloat16_bits_to_float(0xc000), -2.0f);
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

TEST(Constants, IntImmWrapsToItsType) {
  EXPECT_EQ(*as_const_int(make_int(DataType::int_(8), 200)), -56);
  EXPECT_EQ(*as_const_int(make_int(DataType::uint(8), -1)), 255);
  EXPECT_EQ(*as_const_int(make_int(DataType::int_(16), 65535)), -1);
  EXPECT_EQ(*as_const_int(make_int(DataType::int32(), int64_t{1} << 31)), -(int64_t{1} << 31));
  EXPECT_EQ(*as_const_int(make_int(DataType::int64(), int64_t{1} << 40)), int64_t{1} << 40);
  EXPECT_EQ(*as_const_int(make_int(DataType::uint(64), -1)), -1);  // bit pattern kept
  EXPECT_EQ(*as_const_int(make_int(DataType::bool_(), 5)), 1);
  EXPECT_TRUE(is_const_int(i32(7), 7));
  EXPECT_FALSE(as_const_int(make_const(kF32, 7)).has_value());
}

TEST(Constants, FloatImmRoundsToItsType) {
  auto value = [](const Expr &e) { return e.as<FloatImm>()->value; };
  EXPECT_EQ(value(FloatImm::make(DataType::float16(), 0.1)), 0.0999755859375);
  EXPECT_TRUE(std::isinf(value(FloatImm::make(DataType::float16(), 70000.0))));
  EXPECT_EQ(value(FloatImm::make(DataType::float16(), 1.0 + std::ldexp(1.0, -11))), 1.0);
  EXPECT_EQ(value(FloatImm::make(DataType::float16(), std::ldexp(1.0, -24))), std::ldexp(1.0, -24));
  EXPECT_EQ(value(FloatImm::make(DataType::bfloat16(), 1.0 + std::ldexp(1.0, -8))), 1.0);
  EXPECT_EQ(value(FloatImm::make(kF32, 0.1)), static_cast<double>(0.1f));
  EXPECT_EQ(value(FloatImm::make(DataType::float64(), 0.1)), 0.1);
  EXPECT_EQ(*as_const_int(make_const(DataType::int32(), -2.7)), -2);
  EXPECT_EQ(*as_const_int(make_const(DataType::bool_(), 0.5)), 1);
}

//===----------------------------------------------------------------------===//
// Op.h promotion
//===----------------------------------------------------------------------===//

TEST(Op, PromotionRules) {
  DataType i8 = DataType::int_(8), i32 = DataType::int32(), i64 = DataType::int64(), u32 = DataType::uint(32);
  DataType f16 = DataType::float16(), bf16 = DataType::bfloat16(), f64 = DataType::float64();
  EXPECT_EQ(promote_types(f16, i64), f16);
  EXPECT_EQ(promote_types(i32, kF32), kF32);
  EXPECT_EQ(promote_types(i32, i64), i64);
  EXPECT_EQ(promote_types(i64, i8), i64);
  EXPECT_EQ(promote_types(u32, i32), i32);
  EXPECT_EQ(promote_types(DataType::bool_(), i8), i8);
  EXPECT_EQ(promote_types(kF32, f64), f64);
  EXPECT_EQ(promote_types(f16, bf16), kF32);
}

TEST(Op, BuildersCastOperands) {
  Var x("x", DataType::float16()), n("n", DataType::int64()), i("i"), b("b", DataType::bool_());
  Expr s = x + i;  // float + int: the int is cast
  EXPECT_EQ(s.dtype(), DataType::float16());
  ASSERT_TRUE(s.as<Binary>()->b.is<Cast>());
  Expr w = i + n;  // int32 + int64
  EXPECT_EQ(w.dtype(), DataType::int64());
  EXPECT_TRUE(w.as<Binary>()->a.is<Cast>());
  Expr c = b + i;  // bool + int
  EXPECT_EQ(c.dtype(), DataType::int32());
  EXPECT_EQ(c.as<Binary>()->a.as<Cast>()->value.get(), b.get());
  EXPECT_EQ((x < i).dtype(), DataType::bool_());
  // Literals take the other side's type.
  Expr l = x + 1;
  ASSERT_TRUE(l.as<Binary>()->b.is<FloatImm>());
  EXPECT_EQ(l.as<Binary>()->b.dtype(), DataType::float16());
  Expr m = 2 * n;
  EXPECT_EQ(m.dtype(), DataType::int64());
  EXPECT_TRUE(m.as<Binary>()->a.is<IntImm>());
  // A fractional literal next to an integer makes the expression float32.
  EXPECT_EQ((i + 0.5).dtype(), kF32);
  // Casts of constants fold.
  EXPECT_TRUE(cast(kF32, i32(3)).is<FloatImm>());
  EXPECT_TRUE(cast(DataType::int64(), i32(3)).is<IntImm>());
  EXPECT_EQ(neg(i32(3)).as<IntImm>()->value, -3);
  EXPECT_EQ(call(Intrinsic::Exp, {i}).dtype(), kF32);
  EXPECT_EQ(call(Intrinsic::IsNan, {x}).dtype(), DataType::bool_());
}

TEST(Op, FactoriesRejectIllTypedInput) {
  Buffer I = Buffer::make("I", DataType::int32(), {i32(4), i32(4)});
  Var i("i"), f("f", kF32), b("b", DataType::bool_());
  EXPECT_THROW(Store::make(I, make_const(kF32, 1), {i, i}), InternalError);
  EXPECT_THROW(Store::make(I, i32(1), {i}), InternalError);
  EXPECT_THROW(Store::make(I, i32(1), {i, f}), InternalError);
  EXPECT_THROW(Load::make(I, {i}), InternalError);
  EXPECT_THROW(Load::make(I, {i, i, i}), InternalError);
  EXPECT_THROW(Binary::make(BinaryOp::Add, i, f), InternalError);
  EXPECT_THROW(Binary::make(BinaryOp::And, i, i), InternalError);
  EXPECT_THROW(Binary::make(BinaryOp::BitAnd, f, f), InternalError);
  EXPECT_THROW(Unary::make(UnaryOp::Not, i), InternalError);
  EXPECT_THROW(Select::make(i, f, f), InternalError);
  EXPECT_THROW(Select::make(b, i, f), InternalError);
  EXPECT_THROW(Call::make(DataType::int32(), Intrinsic::Exp, {i}), InternalError);
  EXPECT_THROW(Call::make(kF32, Intrinsic::Pow, {f}), InternalError);
  EXPECT_THROW(Call::make(DataType::float16(), Intrinsic::Reinterpret, {f}), InternalError);
  EXPECT_THROW(IntImm::make(kF32, 1), InternalError);
  EXPECT_THROW(FloatImm::make(DataType::int32(), 1.0), InternalError);
  EXPECT_THROW(Let::make(i, f, i), InternalError);
  EXPECT_THROW(For::make(i, i32(0), make_const(kF32, 4), ForKind::Serial, Evaluate::make(i)), InternalError);
  EXPECT_THROW(For::make(i, i32(0), i32(4), ForKind::Serial, Evaluate::make(i), "threadIdx.x"),
               InternalError);
  EXPECT_THROW(For::make(i, i32(0), i32(4), ForKind::ThreadBinding, Evaluate::make(i)), InternalError);
  Var vi("vi");
  EXPECT_THROW(Block::make("B", {{vi, Range::from_extent(i32(4)), IterKind::Spatial}}, {}, Expr(), {}, {}, {},
                           std::nullopt, Evaluate::make(vi)),
               InternalError);
  EXPECT_THROW(Block::make("B", {}, {}, i, {}, {}, {}, std::nullopt, Evaluate::make(i)), InternalError);
  EXPECT_THROW(IfThenElse::make(i, Evaluate::make(i)), InternalError);
  EXPECT_THROW(Buffer::make("X", kF32, {make_const(kF32, 4)}), InternalError);
  EXPECT_THROW(Var::from(i32(1)), InternalError);
  // The message names the buffer and the types.
  try {
    Store::make(I, make_const(kF32, 1), {i, i});
  } catch (const InternalError &e) {
    EXPECT_NE(std::string(e.what()).find("store of float32 into 'I' of type int32"), std::string::npos)
        << e.what();
  }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

TEST(Stmt, SeqFlattensAndUnwrapsSingletons) {
  Var x("x");
  Stmt s1 = Evaluate::make(x), s2 = Evaluate::make(x + 1), s3 = Evaluate::make(x + 2);
  Stmt nested = Seq::make({s1, Seq::make({s2, s3})});
  ASSERT_TRUE(nested.is<Seq>());
  ASSERT_EQ(nested.as<Seq>()->stmts.size(), 3u);
  EXPECT_TRUE(nested.as<Seq>()->stmts[2].same_as(s3));
  EXPECT_TRUE(Seq::make({s1}).same_as(s1));
  EXPECT_THROW(Seq::make({}), InternalError);
}

TEST(Stmt, BlockDefaultsPredicateToTrue) {
  Stmt b = Block::make("B", {}, {}, Expr(), {}, {}, {}, std::nullopt, Evaluate::make(i32(0)));
  EXPECT_TRUE(is_const_int(b.as<Block>()->predicate, 1));
  EXPECT_TRUE(b.as<Block>()->predicate.dtype().is_bool());
}

TEST(Stmt, WithBodyReturnsTheSameNodeWhenUnchanged) {
  Var i("i"), vi("vi");
  Stmt body = Evaluate::make(i);
  Stmt loop = For::make(i, i32(0), i32(4), ForKind::Serial, body);
  EXPECT_TRUE(loop.as<For>()->with_body(body).same_as(loop));
  Stmt other = Evaluate::make(i + 1);
  Stmt changed = loop.as<For>()->with_body(other);
  EXPECT_FALSE(changed.same_as(loop));
  EXPECT_TRUE(changed.as<For>()->body.same_as(other));
  EXPECT_TRUE(changed.as<For>()->loop_var.same_as(i));
  Stmt blk = Block::make("B", {{vi, Range::from_extent(i32(4)), IterKind::Spatial}}, {i}, Expr(), {}, {}, {},
                         std::nullopt, Evaluate::make(vi));
  EXPECT_TRUE(blk.as<Block>()->with_body(blk.as<Block>()->body).same_as(blk));
  Stmt blk2 = blk.as<Block>()->with_body(Evaluate::make(vi + 1));
  EXPECT_FALSE(blk2.same_as(blk));
  EXPECT_EQ(blk2.as<Block>()->name, "B");
  PrimFunc f = PrimFunc::make("f", {}, {}, loop);
  EXPECT_TRUE(f.with_body(f.body()).same_as(f));
  EXPECT_FALSE(f.with_body(other).same_as(f));
}

//===----------------------------------------------------------------------===//
// Functor.h
//===----------------------------------------------------------------------===//

namespace {

/// Replaces every IntImm equal to `from` by `to`.
struct ReplaceConst : IRMutator {
  int64_t from, to;
  ReplaceConst(int64_t f, int64_t t) : from(f), to(t) {}
  using IRMutator::visit_;
  Expr visit_(const IntImm *op, const Expr &self) override {
    return op->value == from ? make_int(op->dtype, to) : self;
  }
};

struct Program {
  Var a{"a", DataType::handle()};
  Buffer A = Buffer::make("A", kF32, {i32(16)});
  Var i{"i"}, j{"j"}, vi{"vi"};
  Stmt first, second;
  Stmt body;
  Program() {
    first = For::make(i, i32(0), i32(16), ForKind::Serial, Store::make(A, Load::make(A, {i}) + 1.0, {i}));
    Stmt blk = Block::make("B", {{vi, Range::from_extent(i32(8)), IterKind::Spatial}}, {j}, Expr(),
                           {BufferRegion{A, {Range{vi, i32(1)}}}}, {BufferRegion{A, {Range{vi, i32(1)}}}}, {},
                           std::nullopt, Store::make(A, make_const(kF32, 2.0), {vi}));
    second = For::make(j, i32(0), i32(8), ForKind::Serial, blk);
    body = Seq::make({first, second});
  }
};

}  // namespace

TEST(Functor, MutatorKeepsUnchangedNodes) {
  Program p;
  ReplaceConst nothing(12345, 0);
  EXPECT_TRUE(nothing.mutate(p.body).same_as(p.body));
  Expr e = p.i * 3 + 4;
  EXPECT_TRUE(nothing.mutate(e).same_as(e));
}

TEST(Functor, MutatorRebuildsOnlyChangedPaths) {
  Program p;
  // The 8 appears only in the second loop (extent, iter var domain).
  Stmt out = ReplaceConst(8, 4).mutate(p.body);
  ASSERT_FALSE(out.same_as(p.body));
  const auto *seq = out.as<Seq>();
  ASSERT_NE(seq, nullptr);
  EXPECT_TRUE(seq->stmts[0].same_as(p.first));
  const auto *loop = seq->stmts[1].as<For>();
  EXPECT_TRUE(is_const_int(loop->extent, 4));
  EXPECT_TRUE(loop->loop_var.same_as(p.j));
  const auto *blk = loop->body.as<Block>();
  EXPECT_TRUE(is_const_int(blk->iter_vars[0].dom.extent, 4));
  EXPECT_TRUE(blk->body.same_as(p.second.as<For>()->body.as<Block>()->body));
}

TEST(Functor, Substitute) {
  Program p;
  Expr e = p.i * 2 + p.j;
  Expr out = substitute(e, {{p.i, p.j + 1}});
  EXPECT_TRUE(structural_equal(out, (p.j + 1) * 2 + p.j));
  EXPECT_TRUE(substitute(e, {{p.vi, i32(0)}}).same_as(e));
  EXPECT_TRUE(substitute(e, {}).same_as(e));
  Stmt s = substitute(p.second, {{p.j, i32(0)}});
  EXPECT_TRUE(is_const_int(s.as<For>()->body.as<Block>()->bindings[0], 0));
}

TEST(Functor, PreOrderVisitCounts) {
  Program p;
  std::vector<NodeKind> exprs, stmts;
  pre_order_visit(
      p.first, [&](const Expr &e) { exprs.push_back(e.kind()); },
      [&](const Stmt &s) { stmts.push_back(s.kind()); });
  // For, Store; min, extent, value (Add, Load, i, 1.0), index i.
  EXPECT_EQ(stmts, (std::vector<NodeKind>{NodeKind::For, NodeKind::Store}));
  EXPECT_EQ(exprs, (std::vector<NodeKind>{NodeKind::IntImm, NodeKind::IntImm, NodeKind::Binary,
                                          NodeKind::Load, NodeKind::Var, NodeKind::FloatImm, NodeKind::Var}));
  int n_stmt = 0;
  pre_order_visit(p.body, nullptr, [&](const Stmt &) { ++n_stmt; });
  EXPECT_EQ(n_stmt, 6);  // Seq, For, Store, For, Block, Store
}

TEST(Functor, VisitorSeesEveryLoad) {
  struct CountLoads : IRVisitor {
    int n = 0;
    using IRVisitor::visit_;
    void visit_(const Load *op) override {
      ++n;
      IRVisitor::visit_(op);
    }
  } c;
  Program p;
  c.visit(p.body);
  EXPECT_EQ(c.n, 1);
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

TEST(PrimFunc, MakeWrapsBodyInRootBlock) {
  Program p;
  PrimFunc f = PrimFunc::make("f", {p.a}, {{p.a, p.A}}, p.body);
  ASSERT_TRUE(f.body().is<Block>());
  EXPECT_EQ(f.root_block().name, "root");
  EXPECT_TRUE(f.root_block().iter_vars.empty());
  EXPECT_TRUE(f.root_block().body.same_as(p.body));
  // An existing root block is kept as is.
  PrimFunc g = PrimFunc::make("g", {p.a}, {{p.a, p.A}}, f.body());
  EXPECT_TRUE(g.body().same_as(f.body()));
  EXPECT_TRUE(f.buffer_of(p.a).same_as(p.A));
  EXPECT_FALSE(f.buffer_of(p.i).defined());
  // A buffer bound to something that is not a handle parameter.
  EXPECT_THROW(PrimFunc::make("h", {}, {{p.a, p.A}}, p.body), InternalError);
}

TEST(PrimFunc, ShapeVarsInOrderOfFirstAppearance) {
  Var a("a", DataType::handle()), b("b", DataType::handle()), s("s", kF32);
  Var n("n"), m("m"), k("k"), st("st");
  Buffer A = Buffer::make("A", kF32, {n, m * 2});
  Buffer B = Buffer::make("B", kF32, {m, k, n}, "global", {st, i32(1), i32(1)});
  PrimFunc f = PrimFunc::make("f", {a, s, b}, {{a, A}, {b, B}}, Evaluate::make(i32(0)));
  std::vector<Var> vars = f.shape_vars();
  ASSERT_EQ(vars.size(), 4u);
  EXPECT_TRUE(vars[0].same_as(n));
  EXPECT_TRUE(vars[1].same_as(m));
  EXPECT_TRUE(vars[2].same_as(k));
  EXPECT_TRUE(vars[3].same_as(st));
  std::vector<Buffer> bufs = f.param_buffers();
  ASSERT_EQ(bufs.size(), 2u);
  EXPECT_TRUE(bufs[1].same_as(B));
}

TEST(PrimFunc, ModuleLookup) {
  Program p;
  PrimFunc f = PrimFunc::make("f", {p.a}, {{p.a, p.A}}, p.body);
  Module mod{{f, f.with_name("g")}};
  EXPECT_EQ(mod.lookup("g").name(), "g");
  EXPECT_TRUE(mod.lookup("f").same_as(f));
  EXPECT_FALSE(mod.lookup("h").defined());
}

//===----------------------------------------------------------------------===//
// Annotations
//===----------------------------------------------------------------------===//

TEST(AnnValue, StrSpellsPythonLiterals) {
  EXPECT_EQ(AnnValue(true).str(), "True");
  EXPECT_EQ(AnnValue(false).str(), "False");
  EXPECT_EQ(AnnValue(16).str(), "16");
  EXPECT_EQ(AnnValue(int64_t{-3}).str(), "-3");
  EXPECT_EQ(AnnValue(0.5).str(), "0.5");
  EXPECT_EQ(AnnValue(1.0).str(), "1.0");
  EXPECT_EQ(AnnValue(0.1).str(), "0.1");
  EXPECT_EQ(AnnValue(1e100).str(), "1e+100");
  EXPECT_EQ(AnnValue(100.0).str(), "100.0");
  EXPECT_EQ(AnnValue(123456.789).str(), "123456.789");
  EXPECT_EQ(AnnValue(0.0001).str(), "0.0001");
  EXPECT_EQ(AnnValue(1e-05).str(), "1e-05");
  EXPECT_EQ(AnnValue(1.5e16).str(), "1.5e+16");
  EXPECT_EQ(AnnValue(-0.0).str(), "-0.0");
  EXPECT_EQ(AnnValue(-2.5).str(), "-2.5");
  EXPECT_EQ(AnnValue("x").str(), "\"x\"");
  EXPECT_EQ(AnnValue("a\"b\\").str(), "\"a\\\"b\\\\\"");
  EXPECT_EQ(AnnValue(AnnValue::List{0, 1, "s"}).str(), "[0, 1, \"s\"]");
  EXPECT_EQ(AnnValue(AnnValue::List{}).str(), "[]");
}

TEST(AnnValue, EqualityAndHash) {
  EXPECT_EQ(AnnValue(3), AnnValue(int64_t{3}));
  EXPECT_EQ(AnnValue(3).hash(), AnnValue(int64_t{3}).hash());
  EXPECT_NE(AnnValue(1), AnnValue(true));
  EXPECT_NE(AnnValue(1), AnnValue(1.0));
  EXPECT_NE(AnnValue(1).hash(), AnnValue(true).hash());
  AnnValue l1(AnnValue::List{0, 0, 1}), l2(AnnValue::List{0, 0, 1}), l3(AnnValue::List{0, 1, 0});
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(l1.hash(), l2.hash());
  EXPECT_NE(l1, l3);
  EXPECT_NE(l1.hash(), l3.hash());
  EXPECT_NE(AnnValue("ab").hash(), AnnValue("ba").hash());
}
