//===- PrinterTest.cpp - Exact text of the canonical TVMScript printer -----===//
//
// Builds IR with the C++ builders (ir/Op.h) and checks the printed text
// character for character: precedence and parentheses, constants of every
// type, name uniquing, T.grid folding, blocks, symbolic shapes.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/script/Parser.h"
#include "IRTestUtil.h"
#include "tessera/script/Printer.h"

namespace tessera::script {
namespace {

using namespace ir;

Expr f32(double v) { return make_const(DataType::float32(), v); }

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

TEST(PrinterExprTest, ArithmeticParenthesesFollowPythonPrecedence) {
  Var a("a"), b("b"), c("c");
  EXPECT_EQ(print((a + b) * c), "(a + b) * c");
  EXPECT_EQ(print(a + b * c), "a + b * c");
  EXPECT_EQ(print(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(print((a - b) - c), "a - b - c");
  EXPECT_EQ(print(-(a + b)), "-(a + b)");
  EXPECT_EQ(print(-a * b), "-a * b");
  EXPECT_EQ(print(-(a * b)), "-(a * b)");
  EXPECT_EQ(print(floordiv(a, b * c)), "a // (b * c)");
  EXPECT_EQ(print(floormod(a * b, c)), "a * b % c");
  EXPECT_EQ(print(a * floordiv(b, c)), "a * (b // c)");
}

TEST(PrinterExprTest, LogicalAndComparisonParentheses) {
  Var a("a", DataType::bool_()), b("b", DataType::bool_()), c("c", DataType::bool_());
  Var x("x"), y("y");
  EXPECT_EQ(print(!(a && b)), "not (a and b)");
  EXPECT_EQ(print(!a && b), "not a and b");
  EXPECT_EQ(print((a || b) && c), "(a or b) and c");
  EXPECT_EQ(print(a || (b && c)), "a or b and c");
  EXPECT_EQ(print(!(x < y)), "not x < y");
  EXPECT_EQ(print(eq(x < y, a)), "(x < y) == a");
  EXPECT_EQ(print(x + 1 < y * 2 && a), "x + 1 < y * 2 and a");
}

TEST(PrinterExprTest, BitwiseOperators) {
  Var x("x", DataType::uint(32)), y("y", DataType::uint(32)), z("z", DataType::uint(32));
  EXPECT_EQ(print(bitwise_or(bitwise_and(x, y), z)), "x & y | z");
  EXPECT_EQ(print(bitwise_and(bitwise_or(x, y), z)), "(x | y) & z");
  EXPECT_EQ(print(bitwise_xor(x, shift_left(y, z))), "x ^ y << z");
  EXPECT_EQ(print(shift_right(add(x, y), z)), "x + y >> z");
  EXPECT_EQ(print(add(x, shift_right(y, z))), "x + (y >> z)");
  EXPECT_EQ(print(bitwise_not(add(x, y))), "~(x + y)");
  EXPECT_EQ(print(bitwise_and(shift_right(x, make_int(DataType::uint(32), 4)), make_int(DataType::uint(32), 15))),
            "x >> T.uint32(4) & T.uint32(15)");
}

TEST(PrinterExprTest, DivisionAndCalls) {
  Var x("x"), y("y");
  Var p("p", DataType::float32()), q("q", DataType::float32());
  EXPECT_EQ(print(p / q), "p / q");
  EXPECT_EQ(print(truncdiv(x, y)), "T.truncdiv(x, y)");
  EXPECT_EQ(print(truncmod(x, y)), "T.truncmod(x, y)");
  EXPECT_EQ(print(floordiv(x, y)), "x // y");
  EXPECT_EQ(print(floormod(x, y)), "x % y");
  EXPECT_EQ(print(min(x, y) + max(x, y)), "T.min(x, y) + T.max(x, y)");
  EXPECT_EQ(print(call(Intrinsic::Exp, {p})), "T.exp(p)");
  EXPECT_EQ(print(if_then_else(x < y, p, q)), "T.if_then_else(x < y, p, q)");
  EXPECT_EQ(print(select(x < y, p, q)), "T.Select(x < y, p, q)");
  EXPECT_EQ(print(cast(DataType::float16(), p)), "T.Cast(\"float16\", p)");
  EXPECT_EQ(print(Call::make(DataType::float16(), Intrinsic::Reinterpret, {Var("h", DataType::uint(16))})),
            "T.reinterpret(\"float16\", h)");
  EXPECT_EQ(print(Call::make(DataType::float32(), Intrinsic::MinValue, {})), "T.min_value(\"float32\")");
  Var v("v");
  EXPECT_EQ(print(Let::make(v, x + 1, v * v)), "T.let(v, x + 1, v * v)");
}

TEST(PrinterExprTest, IntegerAndBoolConstants) {
  EXPECT_EQ(print(i32(128)), "128");
  EXPECT_EQ(print(i32(-5)), "-5");
  EXPECT_EQ(print(make_int(DataType::int64(), 128)), "T.int64(128)");
  EXPECT_EQ(print(make_int(DataType::int64(), -1)), "T.int64(-1)");
  EXPECT_EQ(print(make_int(DataType::uint(8), 255)), "T.uint8(255)");
  EXPECT_EQ(print(make_int(DataType::int_(8), -128)), "T.int8(-128)");
  EXPECT_EQ(print(make_int(DataType::uint(64), -1)), "T.uint64(18446744073709551615)");
  EXPECT_EQ(print(const_true()), "True");
  EXPECT_EQ(print(const_false()), "False");
  Var x("x");
  EXPECT_EQ(print(x * i32(-5)), "x * -5");
  EXPECT_EQ(print(x - i32(-5)), "x - -5");
}

TEST(PrinterExprTest, FloatConstantsAreShortestRoundTrip) {
  EXPECT_EQ(print(f32(0.5)), "T.float32(0.5)");
  EXPECT_EQ(print(f32(0)), "T.float32(0.0)");
  EXPECT_EQ(print(f32(1)), "T.float32(1.0)");
  EXPECT_EQ(print(f32(0.1)), "T.float32(0.1)");
  EXPECT_EQ(print(f32(1e-5)), "T.float32(1e-05)");
  EXPECT_EQ(print(f32(1.5e20)), "T.float32(1.5e+20)");
  EXPECT_EQ(print(f32(-2.25)), "T.float32(-2.25)");
  EXPECT_EQ(print(f32(0.0001)), "T.float32(0.0001)");
  EXPECT_EQ(print(f32(123456.0)), "T.float32(123456.0)");
  EXPECT_EQ(print(f32(3.4028234663852886e38)), "T.float32(3.4028235e+38)");
  EXPECT_EQ(print(f32(INFINITY)), "T.float32(\"inf\")");
  EXPECT_EQ(print(f32(-INFINITY)), "T.float32(\"-inf\")");
  EXPECT_EQ(print(f32(NAN)), "T.float32(\"nan\")");
  EXPECT_EQ(print(make_const(DataType::float64(), 0.1)), "T.float64(0.1)");
  EXPECT_EQ(print(make_const(DataType::float64(), 1.0 / 3)), "T.float64(0.3333333333333333)");
  // float16: 0.1 is stored as 0.0999755859375; the shortest text that rounds
  // back to it is "0.1" (and 65504, the largest float16, reads back from 65500).
  EXPECT_EQ(print(make_const(DataType::float16(), 0.1)), "T.float16(0.1)");
  EXPECT_EQ(print(make_const(DataType::float16(), 65504)), "T.float16(65500.0)");
  EXPECT_EQ(print(make_const(DataType::float16(), 0.7978845608)), "T.float16(0.798)");
  EXPECT_EQ(print(make_const(DataType::float16(), 6e-8)), "T.float16(6e-08)");
  EXPECT_EQ(print(make_const(DataType::bfloat16(), 3.14159)), "T.bfloat16(3.14)");
}

TEST(PrinterExprTest, LoadsOfEveryRank) {
  Buffer a = Buffer::make("A", DataType::float32(), {i32(4), i32(8)});
  Buffer s = Buffer::make("S", DataType::float32(), {});
  Var i("i"), j("j");
  EXPECT_EQ(print(Load::make(a, {i, j + 1})), "A[i, j + 1]");
  EXPECT_EQ(print(Load::make(s, {})), "S[()]");
}

//===----------------------------------------------------------------------===//
// Functions
//===----------------------------------------------------------------------===//

/// The printed text must be `expected` and must parse back to `f`.
void expect_printed(const PrimFunc &f, const std::string &expected) {
  std::string text = print(f);
  EXPECT_EQ(text, expected);
  PrimFunc back = parse_func(text);
  EXPECT_TRUE(test::structurally_equal_with_diff(f, back, "built", "parsed back"));
  EXPECT_EQ(print(back), text);
}

Stmt serial(Var v, int64_t ext, Stmt body) {
  return For::make(v, make_int(v.dtype(), 0), make_int(v.dtype(), ext), ForKind::Serial, std::move(body));
}

TEST(PrinterFuncTest, ElementwiseWithRemapAndGrid) {
  Var pa("A", DataType::handle()), pb("B", DataType::handle());
  Buffer a = Buffer::make("A", DataType::float32(), {i32(128), i32(64)});
  Buffer b = Buffer::make("B", DataType::float32(), {i32(128), i32(64)});
  Var i("i"), j("j"), vi("v_i"), vj("v_j");
  auto point = [&](const Buffer &buf) {
    return BufferRegion{buf, {Range{vi, i32(1)}, Range{vj, i32(1)}}};
  };
  Stmt block = Block::make("B", {{vi, Range::from_extent(i32(128)), IterKind::Spatial},
                                 {vj, Range::from_extent(i32(64)), IterKind::Spatial}},
                           {i, j}, Expr(), {point(a)}, {point(b)}, {}, std::nullopt,
                           Store::make(b, Load::make(a, {vi, vj}) * 2.0, {vi, vj}));
  PrimFunc f = PrimFunc::make("main", {pa, pb}, {{pa, a}, {pb, b}}, serial(i, 128, serial(j, 64, block)),
                              {{"tir.noalias", true}});
  expect_printed(f, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(128, 64):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] * T.float32(2.0)
)");
}

TEST(PrinterFuncTest, NamesAreMadeUniqueAndAvoidKeywords) {
  Var pa("in", DataType::handle());
  Buffer a = Buffer::make("in", DataType::int32(), {i32(8)});
  Var i1("i"), i2("i"), i3("i"), t("T"), bad("x.outer");
  // Sibling loops may reuse a name; a loop nested in another of the same name may not.
  Stmt nested = serial(i2, 8, serial(i3, 8, Store::make(a, i3, {i2})));
  Stmt body = Seq::make({serial(i1, 8, Store::make(a, i1, {i1})), nested,
                         serial(t, 8, Store::make(a, t, {t})), serial(bad, 8, Store::make(a, bad, {bad}))});
  PrimFunc f = PrimFunc::make("main", {pa}, {{pa, a}}, body);
  expect_printed(f, R"(# from tvm.script import tir as T

@T.prim_func
def main(in_1: T.Buffer((8,), "int32")):
    for i in range(8):
        in_1[i] = i
    for i, i_1 in T.grid(8, 8):
        in_1[i] = i_1
    for T_1 in range(8):
        in_1[T_1] = T_1
    for x_outer in range(8):
        in_1[x_outer] = x_outer
)");
}

TEST(PrinterFuncTest, GridFoldsOnlyPerfectSerialZeroMinLoops) {
  Var pa("A", DataType::handle());
  Buffer a = Buffer::make("A", DataType::float32(), {i32(16), i32(16)});
  Var i("i"), j("j"), k("k"), l("l"), m("m"), n("n");
  auto store = [&](Var x, Var y) { return Store::make(a, f32(0), {x, y}); };
  Stmt annotated = For::make(j, i32(0), i32(16), ForKind::Serial, store(i, j), "",
                             {{"pragma_unroll_explicit", int64_t{1}}});
  Stmt s1 = serial(i, 16, annotated);
  // The inner extent depends on the outer loop: not a grid.
  Stmt s2 = serial(k, 16, For::make(l, i32(0), k + 1, ForKind::Serial, store(k, l)));
  // A non-zero start, and a thread binding.
  Stmt s3 = For::make(m, i32(1), i32(15), ForKind::Serial,
                      For::make(n, i32(0), i32(16), ForKind::ThreadBinding, store(m, n), "threadIdx.x"));
  PrimFunc f = PrimFunc::make("main", {pa}, {{pa, a}}, Seq::make({s1, s2, s3}));
  expect_printed(f, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32")):
    for i in range(16):
        for j in T.serial(16, annotations={"pragma_unroll_explicit": 1}):
            A[i, j] = T.float32(0.0)
    for k in range(16):
        for l in range(k + 1):
            A[k, l] = T.float32(0.0)
    for m in range(1, 16):
        for n in T.thread_binding(16, thread="threadIdx.x"):
            A[m, n] = T.float32(0.0)
)");
}

TEST(PrinterFuncTest, ReductionBlockWithInitAndSlices) {
  Var pa("A", DataType::handle()), pb("B", DataType::handle());
  Buffer a = Buffer::make("A", DataType::float16(), {i32(128), i32(256)});
  Buffer b = Buffer::make("B", DataType::float32(), {i32(128)});
  Var i("i"), k("k"), vi("vi"), vk("vk");
  Stmt init = Store::make(b, f32(0), {vi});
  Stmt body = Store::make(b, Load::make(b, {vi}) + cast(DataType::float32(), Load::make(a, {vi, vk})), {vi});
  Stmt block = Block::make("B", {{vi, Range::from_extent(i32(128)), IterKind::Spatial},
                                 {vk, Range::from_extent(i32(256)), IterKind::Reduce}},
                           {i, k}, Expr(), {BufferRegion{a, {Range{vi, i32(1)}, Range{i32(0), i32(256)}}}},
                           {BufferRegion{b, {Range{vi, i32(1)}}}}, {}, init, body,
                           {{"meta_schedule.tiling_structure", "SSRSRS"}});
  PrimFunc f = PrimFunc::make("main", {pa, pb}, {{pa, a}, {pb, b}}, serial(i, 128, serial(k, 256, block)));
  expect_printed(f, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 256), "float16"), B: T.Buffer((128,), "float32")):
    for i, k in T.grid(128, 256):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, 0:256])
            T.writes(B[vi])
            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
            with T.init():
                B[vi] = T.float32(0.0)
            B[vi] = B[vi] + T.Cast("float32", A[vi, vk])
)");
}

TEST(PrinterFuncTest, SymbolicShapeUsesMatchBuffer) {
  Var n("n", DataType::int64());
  Var pa("A", DataType::handle()), pb("B", DataType::handle());
  Buffer a = Buffer::make("A", DataType::float32(), {n, make_int(DataType::int64(), 128)});
  Buffer b = Buffer::make("B", DataType::float16(), {n});
  Var i("i", DataType::int64()), vi("v_i", DataType::int64()), j("j", DataType::int64());
  Buffer tmp = Buffer::make("tmp", DataType::float32(), {make_int(DataType::int64(), 128)}, "local");
  Stmt inner = Block::make("B", {{vi, Range::from_extent(n), IterKind::Spatial}}, {i * 1}, Expr(),
                           {BufferRegion{a, {Range{vi, make_int(DataType::int64(), 1)},
                                             Range{make_int(DataType::int64(), 0), make_int(DataType::int64(), 128)}}}},
                           {BufferRegion{b, {Range{vi, make_int(DataType::int64(), 1)}}}}, {}, std::nullopt,
                           Store::make(b, cast(DataType::float16(), Load::make(a, {vi, j})), {vi}));
  Stmt loops = For::make(i, make_int(DataType::int64(), 0), n, ForKind::Serial, serial(j, 128, inner));
  Stmt root = Block::make("root", {}, {}, Expr(), {}, {}, {tmp}, std::nullopt, loops);
  PrimFunc f = PrimFunc::make("main", {pa, pb}, {{pa, a}, {pb, b}}, root);
  expect_printed(f, R"(# from tvm.script import tir as T

@T.prim_func
def main(var_A: T.handle, var_B: T.handle):
    n = T.int64()
    A = T.match_buffer(var_A, (n, T.int64(128)))
    B = T.match_buffer(var_B, (n,), "float16")
    tmp = T.alloc_buffer((T.int64(128),), scope="local")
    for i, j in T.grid(n, T.int64(128)):
        with T.block("B"):
            v_i = T.axis.spatial(n, i * T.int64(1))
            T.reads(A[v_i, T.int64(0):T.int64(128)])
            T.writes(B[v_i])
            B[v_i] = T.Cast("float16", A[v_i, j])
)");
}

TEST(PrinterFuncTest, LetStatementsAndIfElse) {
  Var pa("A", DataType::handle());
  Buffer a = Buffer::make("A", DataType::int32(), {i32(4)});
  // Two variables named x (each defined once, as TensorIR requires); the printer uniquifies the second.
  Var x("x"), x2("x"), y("y"), i("i");
  Stmt tail = LetStmt::make(y, x2 * 2, Store::make(a, y, {i32(1)}));
  Stmt inner = LetStmt::make(x, i32(3), Store::make(a, x, {i32(0)}));
  Stmt branch = IfThenElse::make(eq(i, i32(0)), Evaluate::make(i32(0)), Store::make(a, i, {i}));
  Stmt body = Seq::make({inner, serial(i, 4, branch), LetStmt::make(x2, i32(5), tail)});
  PrimFunc f = PrimFunc::make("main", {pa}, {{pa, a}}, body);
  // The non-tail let prints as `with T.LetStmt(3) as x:` and reads back as the same LetStmt.
  expect_printed(f, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "int32")):
    with T.LetStmt(3) as x:
        A[0] = x
    for i in range(4):
        if i == 0:
            T.evaluate(0)
        else:
            A[i] = i
    x_1: T.int32 = 5
    y: T.int32 = x_1 * 2
    A[1] = y
)");
}

TEST(PrinterFuncTest, ModuleWithTwoFunctions) {
  auto make = [](const std::string &name, int64_t n) {
    Var pa("A", DataType::handle());
    Buffer a = Buffer::make("A", DataType::float32(), {i32(n)});
    Var i("i");
    return PrimFunc::make(name, {pa}, {{pa, a}}, serial(i, n, Store::make(a, f32(1), {i})));
  };
  Module m{{make("fill", 4), make("main", 8)}};
  EXPECT_EQ(print(m), R"(# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def fill(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(1.0)

    @T.prim_func
    def main(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = T.float32(1.0)
)");
}

TEST(PrinterStmtTest, FreeVariablesPrintByHint) {
  Buffer a = Buffer::make("A", DataType::float32(), {i32(8)});
  Var i("i"), n("n");
  Stmt s = For::make(i, i32(0), n, ForKind::Vectorized, Store::make(a, f32(0), {i}));
  EXPECT_EQ(print(s), "for i in T.vectorized(n):\n    A[i] = T.float32(0.0)\n");
}

}  // namespace
}  // namespace tessera::script
