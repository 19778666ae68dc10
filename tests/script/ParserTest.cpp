//===- ParserTest.cpp - TVMScript parser: programs to IR -------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "tessera/ir/Functor.h"
#include "tessera/script/Parser.h"

using namespace tessera;
using namespace tessera::ir;
using tessera::script::parse_func;
using tessera::script::parse_module;

namespace {

const Block *find_block(const PrimFunc &f, const std::string &name) {
  const Block *found = nullptr;
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const auto *b = s.as<Block>(); b && b->name == name && !found) found = b;
  });
  return found;
}

std::vector<const For *> loops(const PrimFunc &f) {
  std::vector<const For *> out;
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const auto *l = s.as<For>()) out.push_back(l);
  });
  return out;
}

template <typename T>
std::vector<const T *> stmts_of(const Stmt &body) {
  std::vector<const T *> out;
  pre_order_visit(body, nullptr, [&](const Stmt &s) {
    if (const auto *x = s.as<T>()) out.push_back(x);
  });
  return out;
}

std::string iter_kinds(const Block *b) {
  std::string s;
  for (const IterVar &iv : b->iter_vars) s += iter_kind_char(iv.kind);
  return s;
}

// "A[vi, 0:128]"-like summary of a region using constant extents and var names.
std::string region_str(const BufferRegion &r) {
  std::function<std::string(const Expr &)> ex = [&](const Expr &e) -> std::string {
    if (auto k = as_const_int(e)) return std::to_string(*k);
    if (const auto *v = e.as<VarNode>()) return v->name;
    if (const auto *b = e.as<Binary>()) {
      const char *op = b->op == BinaryOp::Add ? " + " : b->op == BinaryOp::Sub ? " - " : b->op == BinaryOp::Mul ? " * " : " ? ";
      return ex(b->a) + op + ex(b->b);
    }
    return "?";
  };
  std::string s = r.buffer.name() + "[";
  for (size_t i = 0; i < r.region.size(); ++i) {
    if (i) s += ", ";
    if (is_const_int(r.region[i].extent, 1)) s += ex(r.region[i].min);
    else s += ex(r.region[i].min) + ":" + ex(r.region[i].extent) + "x";
  }
  return s + "]";
}

std::string regions_str(const std::vector<BufferRegion> &rs) {
  std::string s;
  for (const auto &r : rs) s += (s.empty() ? "" : " ") + region_str(r);
  return s;
}

}  // namespace

TEST(Parser, Elementwise) {
  PrimFunc f = parse_func(R"(
# from tvm.script import tir as T
@T.prim_func
def add(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32"), C: T.Buffer((128, 64), "float32")):
    T.func_attr({"global_symbol": "add", "tir.noalias": True})
    for i, j in T.grid(128, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + B[vi, vj]
)");
  EXPECT_EQ(f.name(), "add");
  ASSERT_EQ(f.params().size(), 3u);
  ASSERT_EQ(f.param_buffers().size(), 3u);
  EXPECT_EQ(f.param_buffers()[0].name(), "A");
  EXPECT_EQ(f.param_buffers()[0].dtype(), DataType::float32());
  EXPECT_EQ(f.attrs().at("tir.noalias"), AnnValue(true));
  EXPECT_EQ(f.attrs().at("global_symbol"), AnnValue("add"));
  const Block *c = find_block(f, "C");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(iter_kinds(c), "SS");
  EXPECT_EQ(regions_str(c->reads), "A[vi, vj] B[vi, vj]");
  EXPECT_EQ(regions_str(c->writes), "C[vi, vj]");
  auto ls = loops(f);
  ASSERT_EQ(ls.size(), 2u);
  EXPECT_EQ(as_const_int(ls[0]->extent), 128);
  EXPECT_EQ(as_const_int(ls[1]->extent), 64);
  EXPECT_EQ(f.root_block().name, "root");
  EXPECT_TRUE(f.root_block().reads.empty());
}

TEST(Parser, MatmulWithInitBothSpellings) {
  for (const char *blk : {"block", "sblock"}) {
    std::string text = std::string(R"(
@T.prim_func
def mm(A: T.Buffer((128, 128), "float16"), B: T.Buffer([128, 128], dtype="float16"), C: T.Buffer((128, 128), "float32")):
    T.func_attr({"tirx.noalias": True})
    for i, j, k in T.grid(128, 128, 128):
        with T.)") + blk + R"(("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
)";
    PrimFunc f = parse_func(text);
    const Block *c = find_block(f, "C");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(iter_kinds(c), "SSR");
    ASSERT_TRUE(c->init.has_value());
    const auto *init = c->init->as<Store>();
    ASSERT_NE(init, nullptr);
    ASSERT_TRUE(init->value.is<FloatImm>());
    EXPECT_EQ(init->value.dtype(), DataType::float32());
    EXPECT_EQ(regions_str(c->reads), "A[vi, vk] B[vk, vj]");
    EXPECT_EQ(f.attrs().count("tirx.noalias"), 1u);
    EXPECT_EQ(f.param_buffers()[1].dtype(), DataType::float16());
  }
}

// TVM's rule: a block with T.init() leaves the buffers it writes out of its
// reads, so T.reads index 0 of a reduction is its first input.
TEST(Parser, InferredReadsOfAReductionLeaveOutItsOutput) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def sum(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128,), "float32")):
    for i, k in T.grid(128, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
)");
  const Block *b = find_block(f, "B");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(regions_str(b->reads), "A[vi, vk]");
  EXPECT_EQ(regions_str(b->writes), "B[vi]");
}

TEST(Parser, SoftmaxMultiBlock) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def softmax(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64, 256), "float32")):
    A_max = T.alloc_buffer((64,))
    A_exp = T.alloc_buffer((64, 256))
    A_sum = T.alloc_buffer((64,))
    for i, k in T.grid(64, 256):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                A_max[vi] = T.float32("-inf")
            A_max[vi] = T.max(A_max[vi], A[vi, vk])
    for i, j in T.grid(64, 256):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            A_exp[vi, vj] = T.exp(A[vi, vj] - A_max[vi])
    for i, k in T.grid(64, 256):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                A_sum[vi] = 0.0
            A_sum[vi] += A_exp[vi, vk]
    for i, j in T.grid(64, 256):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_exp[vi, vj] / A_sum[vi]
)");
  EXPECT_EQ(f.root_block().allocs.size(), 3u);
  for (const char *n : {"max", "exp", "sum", "norm"}) EXPECT_NE(find_block(f, n), nullptr) << n;
  const Block *mx = find_block(f, "max");
  const auto *init = mx->init->as<Store>();
  ASSERT_NE(init, nullptr);
  const auto *inf = init->value.as<FloatImm>();
  ASSERT_NE(inf, nullptr);
  EXPECT_TRUE(std::isinf(inf->value) && inf->value < 0);
  EXPECT_EQ(regions_str(find_block(f, "norm")->reads), "A_exp[vi, vj] A_sum[vi]");
  EXPECT_EQ(iter_kinds(find_block(f, "sum")), "SR");
}

TEST(Parser, SymbolicShapesWithMatchBuffer) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(a: T.handle, b: T.handle, m: T.int32):
    n = T.int64()
    A = T.match_buffer(a, (n, 128), "float32", offset_factor=1)
    B = T.match_buffer(b, [n], dtype="float32", scope="global", strides=[1])
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            for k in range(128):
                with T.block("inner"):
                    vk = T.axis.reduce(128, k)
                    B[vi] = B[vi] + A[vi, vk] * T.float32(m)
)");
  ASSERT_EQ(f.buffer_map().size(), 2u);
  Buffer A = f.buffer_map()[0].second;
  EXPECT_EQ(A.name(), "A");
  EXPECT_EQ(f.buffer_map()[0].first.name(), "a");
  ASSERT_TRUE(A.shape()[0].is<VarNode>());
  EXPECT_EQ(A.shape()[0].dtype(), DataType::int64());
  EXPECT_EQ(A.shape()[1].dtype(), DataType::int32());
  ASSERT_EQ(f.shape_vars().size(), 1u);
  EXPECT_EQ(f.shape_vars()[0].name(), "n");
  auto ls = loops(f);
  ASSERT_EQ(ls.size(), 2u);
  // range(n) with n int64: an int64 loop var starting at T.int64(0).
  EXPECT_EQ(ls[0]->loop_var.dtype(), DataType::int64());
  EXPECT_EQ(ls[0]->min.dtype(), DataType::int64());
  EXPECT_TRUE(ls[0]->extent.same_as(A.shape()[0]));
  const Block *b = find_block(f, "B");
  EXPECT_EQ(b->iter_vars[0].var.dtype(), DataType::int64());
  // The outer block's regions come from the inner block, relaxed over k.
  EXPECT_EQ(regions_str(b->reads), "B[vi] A[vi, 0:128x]");
  EXPECT_EQ(f.params()[2].dtype(), DataType::int32());
}

TEST(Parser, ThreadBoundKernelWithSharedMemory) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def k(A: T.Buffer((1024, 1024), "float16"), B: T.Buffer((1024,), "float16")):
    A_shared = T.alloc_buffer((32, 1024), "float16", scope="shared")
    for bx in T.thread_binding(32, thread="blockIdx.x"):
        for tx in T.thread_binding(0, 128, "threadIdx.x"):
            for ax0, ax1 in T.grid(32, 8):
                with T.block("A_shared"):
                    v0 = T.axis.spatial(1024, bx * 32 + ax0)
                    v1 = T.axis.spatial(1024, tx * 8 + ax1)
                    A_shared[v0 - bx * 32, v1] = A[v0, v1]
            for i in T.serial(32, annotations={"pragma_unroll_explicit": 1}):
                for j in T.vectorized(8):
                    with T.block("B"):
                        vi = T.axis.spatial(1024, bx * 32 + i)
                        vj = T.axis.reduce(1024, tx * 8 + j)
                        T.where(tx * 8 + j < 1024)
                        B[vi] = B[vi] + A_shared[vi - bx * 32, vj]
            for u in T.unroll(4):
                for p in T.parallel(2, 6):
                    B[u] = B[p]
)");
  auto ls = loops(f);
  ASSERT_EQ(ls.size(), 8u);
  EXPECT_EQ(ls[0]->for_kind, ForKind::ThreadBinding);
  EXPECT_EQ(ls[0]->thread_tag, "blockIdx.x");
  EXPECT_EQ(ls[1]->thread_tag, "threadIdx.x");
  EXPECT_EQ(as_const_int(ls[1]->extent), 128);
  EXPECT_EQ(ls[4]->for_kind, ForKind::Serial);
  EXPECT_EQ(ls[4]->annotations.at("pragma_unroll_explicit"), AnnValue(1));
  EXPECT_EQ(ls[5]->for_kind, ForKind::Vectorized);
  EXPECT_EQ(ls[6]->for_kind, ForKind::Unrolled);
  EXPECT_EQ(ls[7]->for_kind, ForKind::Parallel);
  EXPECT_EQ(as_const_int(ls[7]->min), 2);  // T.parallel(start, stop)
  EXPECT_EQ(as_const_int(ls[7]->extent), 4);
  const Buffer &sh = f.root_block().allocs.at(0);
  EXPECT_EQ(sh.scope(), "shared");
  EXPECT_EQ(sh.dtype(), DataType::float16());
  const Block *b = find_block(f, "B");
  EXPECT_FALSE(is_const_int(b->predicate, 1));
  EXPECT_EQ(iter_kinds(b), "SR");
}

TEST(Parser, IrModuleWithTwoFunctions) {
  ir::Module m = parse_module(R"(
# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def first(A: T.Buffer((8,), "int32")):
        for i in range(8):
            A[i] = i * 2

    @T.prim_func(check_well_formed=False)
    def second(A: T.Buffer((8,), "int64")):
        for i in range(8):
            A[i] = T.int64(i)
)");
  ASSERT_EQ(m.funcs.size(), 2u);
  EXPECT_EQ(m.funcs[0].name(), "first");
  EXPECT_TRUE(m.lookup("second").defined());
  // A statement outside any block, stored straight into the buffer.
  auto st = stmts_of<Store>(m.funcs[1].body());
  ASSERT_EQ(st.size(), 1u);
  EXPECT_TRUE(st[0]->value.is<Cast>());
}

TEST(Parser, LiteralsAdaptToOperandTypes) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float16"), B: T.Buffer((16,), "int64"), C: T.Buffer((), "float32"), D: T.Buffer((16,), "bool")):
    for i in range(16):
        A[i] = 1
        A[i] = A[i] + 1
        A[i] = A[i] * 0.5 + T.float16(1.5)
        B[i] = B[i] * 2
        C[()] = T.float32("nan")
        C[()] = 1e-5
        D[i] = True
        D[i] = T.bool(False)
        B[i] = T.int64(7) + T.uint8(3)
)");
  auto st = stmts_of<Store>(f.body());
  ASSERT_EQ(st.size(), 9u);
  const auto *one = st[0]->value.as<FloatImm>();
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->dtype, DataType::float16());
  EXPECT_EQ(one->value, 1.0);
  const auto *add = st[1]->value.as<Binary>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->b.dtype(), DataType::float16());
  EXPECT_EQ(st[3]->value.as<Binary>()->b.dtype(), DataType::int64());
  EXPECT_TRUE(std::isnan(st[4]->value.as<FloatImm>()->value));
  EXPECT_EQ(st[4]->indices.size(), 0u);
  EXPECT_FLOAT_EQ(static_cast<float>(st[5]->value.as<FloatImm>()->value), 1e-5f);
  EXPECT_EQ(st[6]->value.dtype(), DataType::bool_());
  EXPECT_EQ(st[8]->value.dtype(), DataType::int64());
}

TEST(Parser, LiteralsAtTheEdgesOfTheirTypes) {
  // The extremes fit; inf and nan stay allowed when spelled explicitly.
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((16,), "int8"), B: T.Buffer((16,), "uint8"), H: T.Buffer((16,), "float16")):
    A[0] = T.int8(-128)
    A[1] = A[2] + 127
    B[0] = T.uint8(255)
    H[0] = T.float16(65504)
    H[1] = T.float16("inf")
    H[2] = T.float16("-inf")
    H[3] = T.float16("nan")
    H[4] = H[5] * -65504.0
)");
  auto st = stmts_of<Store>(f.body());
  ASSERT_EQ(st.size(), 8u);
  EXPECT_TRUE(is_const_int(st[0]->value, -128));
  const auto *inf = st[4]->value.as<FloatImm>();
  ASSERT_NE(inf, nullptr);
  EXPECT_TRUE(std::isinf(inf->value));
  const auto *nan = st[6]->value.as<FloatImm>();
  ASSERT_NE(nan, nullptr);
  EXPECT_TRUE(std::isnan(nan->value));
}

TEST(Parser, Int64PromotionAndChainedComparison) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(a: T.handle, B: T.Buffer((T.int64(128),), "float32")):
    n = T.int64()
    A = T.match_buffer(a, (n,))
    for i in range(T.int64(128)):
        with T.block("B"):
            vi = T.axis.spatial(T.int64(128), i)
            if 0 <= vi * 2 < n and vi != 3:
                B[vi] = A[vi * 2]
            elif vi % 2 == 1:
                B[vi] = T.float32(0)
            else:
                B[vi] = A[T.min(vi, n - 1)]
)");
  auto ifs = stmts_of<IfThenElse>(f.body());
  ASSERT_EQ(ifs.size(), 2u);
  const auto *cond = ifs[0]->cond.as<Binary>();
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->op, BinaryOp::And);
  const auto *chain = cond->a.as<Binary>();
  ASSERT_NE(chain, nullptr);
  EXPECT_EQ(chain->op, BinaryOp::And);
  const auto *le = chain->a.as<Binary>();
  ASSERT_NE(le, nullptr);
  EXPECT_EQ(le->op, BinaryOp::LE);
  EXPECT_EQ(le->a.dtype(), DataType::int64());  // the literal 0 took int64
  EXPECT_EQ(chain->b.as<Binary>()->op, BinaryOp::LT);
  ASSERT_TRUE(ifs[0]->else_case.has_value());
  auto ls = loops(f);
  EXPECT_EQ(ls[0]->loop_var.dtype(), DataType::int64());
  EXPECT_EQ(f.param_buffers()[1].shape()[0].dtype(), DataType::int64());
}

TEST(Parser, OperatorsAndIntrinsics) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32"), I: T.Buffer((16,), "int32"), H: T.Buffer((16,), "float16")):
    for i in range(16):
        A[i] = T.exp(A[i]) + T.sqrt(A[i]) + T.rsqrt(A[i]) + T.sigmoid(A[i]) + T.tanh(A[i])
        A[i] = T.pow(A[i], 2) + T.fabs(A[i]) + T.exp2(A[i]) + T.erf(A[i]) + A[i] ** 2
        A[i] = T.floor(A[i]) + T.ceil(A[i]) + T.round(A[i]) + T.abs(A[i])
        A[i] = T.if_then_else(T.isnan(A[i]), T.max_value("float32"), A[i])
        A[i] = T.Select(i < 8, A[i], -A[i])
        H[i] = T.reinterpret("float16", T.Cast("int16", I[i])) + T.min_value("float16")
        I[i] = T.floordiv(i, 3) + T.floormod(i, 3) + T.truncdiv(i, 3) + T.truncmod(i, 3) + T.Div(i, 2) + T.Mod(i, 2)
        I[i] = T.bitwise_and(i, 1) | T.bitwise_or(i, 2) ^ T.bitwise_xor(i, 3) & T.bitwise_not(i)
        I[i] = T.shift_left(i, 1) + T.shift_right(i, 1) + (i << 2) + (i >> 1) + ~i + -i + +i
        I[i] = i // 2 + i % 3 + i / 2 + i ** 3 + T.ceildiv(i, 4) + T.min(i, 3) + T.max(i, 3)
        I[i] = T.let(x, i * 2, x + x)
        I[i] = T.if_then_else(not (i > 3) or i == 2, 1, 0)
        T.evaluate(0)
)");
  auto st = stmts_of<Store>(f.body());
  ASSERT_EQ(st.size(), 12u);
  const auto *ite = st[3]->value.as<Call>();
  ASSERT_NE(ite, nullptr);
  EXPECT_EQ(ite->op, Intrinsic::IfThenElse);
  const auto *sel = st[4]->value.as<Select>();
  ASSERT_NE(sel, nullptr);
  EXPECT_TRUE(st[10]->value.is<Let>());
  // `/` on integers is truncating division.
  std::vector<BinaryOp> ops;
  pre_order_visit(Evaluate::make(st[9]->value), [&](const Expr &e) {
    if (const auto *b = e.as<Binary>()) ops.push_back(b->op);
  }, nullptr);
  EXPECT_NE(std::find(ops.begin(), ops.end(), BinaryOp::Div), ops.end());
  EXPECT_NE(std::find(ops.begin(), ops.end(), BinaryOp::FloorDiv), ops.end());
  EXPECT_NE(std::find(ops.begin(), ops.end(), BinaryOp::FloorMod), ops.end());
  EXPECT_EQ(stmts_of<Evaluate>(f.body()).size(), 1u);
}

TEST(Parser, LetStatementsScopeOverTheRest) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    for i in range(16):
        x: T.int32 = i * 2
        y = x + 1
        A[y % 16] = T.float32(x)
)");
  auto lets = stmts_of<LetStmt>(f.body());
  ASSERT_EQ(lets.size(), 2u);
  EXPECT_EQ(lets[0]->var.name(), "x");
  EXPECT_TRUE(lets[0]->body.is<LetStmt>());
  EXPECT_TRUE(lets[1]->body.is<Store>());
}

TEST(Parser, WithLetStmtScopesOverItsBody) {
  // The printer's spelling of a let that is not the tail of its statement list.
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int64")):
    with T.LetStmt(3) as x:
        A[x] = T.float32(x)
    with T.LetStmt(T.int64(7)) as x:
        B[0] = x
    A[1] = T.float32(2)
)");
  auto lets = stmts_of<LetStmt>(f.body());
  ASSERT_EQ(lets.size(), 2u);
  EXPECT_EQ(lets[0]->var.name(), "x");
  EXPECT_EQ(lets[0]->var.dtype(), DataType::int32());
  EXPECT_TRUE(is_const_int(lets[0]->value, 3));
  const auto *st = lets[0]->body.as<Store>();
  ASSERT_NE(st, nullptr);
  EXPECT_TRUE(st->indices[0].same_as(lets[0]->var));
  // A second `as x` is a fresh variable typed by its value.
  EXPECT_FALSE(lets[1]->var.same_as(lets[0]->var));
  EXPECT_EQ(lets[1]->var.dtype(), DataType::int64());
  // The let covers only its body: the last store follows it in the function's list.
  const Block *root = find_block(f, "root");
  ASSERT_NE(root, nullptr);
  const auto *seq = root->body.as<Seq>();
  ASSERT_NE(seq, nullptr);
  ASSERT_EQ(seq->stmts.size(), 3u);
  EXPECT_TRUE(seq->stmts[2].is<Store>());
}

TEST(Parser, WithLetStmtVarKeywordUsesDeclaredVariable) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((16,), "int64")):
    n = T.int64()
    with T.LetStmt(5, var=n):
        A[n] = n
)");
  auto lets = stmts_of<LetStmt>(f.body());
  ASSERT_EQ(lets.size(), 1u);
  EXPECT_EQ(lets[0]->var.name(), "n");
  EXPECT_EQ(lets[0]->var.dtype(), DataType::int64());
  EXPECT_EQ(lets[0]->value.dtype(), DataType::int64());  // the literal takes the variable's type
  const auto *st = lets[0]->body.as<Store>();
  ASSERT_NE(st, nullptr);
  EXPECT_TRUE(st->value.same_as(lets[0]->var));
}

TEST(Parser, ScopingRebindsAndShadows) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((16, 16), "float32")):
    for i in range(16):
        for j in range(16):
            A[i, j] = 0
    for i in range(16):
        for i in range(4):
            A[i, i] = 1
)");
  auto ls = loops(f);
  ASSERT_EQ(ls.size(), 4u);
  EXPECT_FALSE(ls[0]->loop_var.same_as(ls[2]->loop_var));
  auto st = stmts_of<Store>(f.body());
  // The inner `i` shadows the outer one.
  EXPECT_TRUE(st[1]->indices[0].same_as(ls[3]->loop_var));
}

TEST(Parser, AxisFormsAndBlockAttrs) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
    for i, k0, k1 in T.grid(128, 4, 32):
        with T.block():
            vi = T.axis.S(128, i)
            vk = T.axis.R((0, 128), k0 * 32 + k1)
            T.reads([B[vi], A[vi, k0 * 32 : k0 * 32 + 32]])
            T.writes(B[vi])
            T.block_attr({"meta_schedule.tiling_structure": "SSRSRS", "stages": [0, 0, 1]})
            B[vi] = B[vi] + A[vi, vk]
    with T.block("empty"):
        T.reads()
        T.writes()
        T.evaluate(0)
)");
  const Block *b = find_block(f, "");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(iter_kinds(b), "SR");
  EXPECT_EQ(as_const_int(b->iter_vars[1].dom.extent), 128);
  EXPECT_EQ(region_str(b->reads[1]), "A[vi, k0 * 32:32x]");
  EXPECT_EQ(b->annotations.at("stages"), AnnValue(AnnValue::List{0, 0, 1}));
  const Block *e = find_block(f, "empty");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->reads.empty());
  EXPECT_TRUE(e->writes.empty());
}

TEST(Parser, ExplicitRootBlock) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(A: T.Buffer((16,), "float32")):
    with T.block("root"):
        T.block_attr({"note": 1})
        C = T.alloc_buffer((16,), scope="local")
        for i in range(16):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi]
)");
  EXPECT_EQ(f.root_block().annotations.count("note"), 1u);
  EXPECT_EQ(f.root_block().allocs.size(), 1u);
  EXPECT_EQ(f.root_block().allocs[0].scope(), "local");
  EXPECT_TRUE(f.root_block().reads.empty());
}

TEST(Parser, TvmPrintedScript) {
  // As printed by TVM's mod.script().
  ir::Module m = parse_module(R"(# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((T.int64(128), T.int64(128)), "float32"), B: T.Buffer((T.int64(128), T.int64(128)), "float32"), C: T.Buffer((T.int64(128), T.int64(128)), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        # with T.block("root"):
        for i, j, k in T.grid(T.int64(128), T.int64(128), T.int64(128)):
            with T.block("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(C[v_i, v_j])
                with T.init():
                    C[v_i, v_j] = T.float32(0.0)
                C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  ASSERT_EQ(m.funcs.size(), 1u);
  PrimFunc f = m.funcs[0];
  EXPECT_EQ(f.attrs().at("tir.noalias"), AnnValue(true));
  auto ls = loops(f);
  ASSERT_EQ(ls.size(), 3u);
  EXPECT_EQ(ls[2]->loop_var.dtype(), DataType::int64());
  EXPECT_EQ(find_block(f, "C")->iter_vars[2].var.dtype(), DataType::int64());
}

TEST(Parser, TvmPrintedDynamicAndScheduled) {
  PrimFunc f = parse_func(R"(# from tvm.script import tir as T

@T.prim_func(private=True)
def main(var_A: T.handle, var_B: T.handle):
    T.func_attr({"tir.is_scheduled": True, "tir.noalias": T.bool(True)})
    n = T.int64()
    A = T.match_buffer(var_A, (n, T.int64(4096)), "float16")
    B = T.match_buffer(var_B, (n,), "float16")
    # with T.block("root"):
    B_local = T.alloc_buffer((n,), "float16", scope="local")
    for ax0_fused_0 in T.thread_binding((n + T.int64(255)) // T.int64(256), thread="blockIdx.x"):
        for ax0_fused_1 in T.thread_binding(T.int64(256), thread="threadIdx.x"):
            for k in range(T.int64(4096)):
                with T.block("B"):
                    v0 = T.axis.spatial(n, ax0_fused_0 * T.int64(256) + ax0_fused_1)
                    v1 = T.axis.reduce(T.int64(4096), k)
                    T.where(ax0_fused_0 * T.int64(256) + ax0_fused_1 < n)
                    T.reads(A[v0, v1])
                    T.writes(B_local[v0])
                    with T.init():
                        B_local[v0] = T.float16(0.0)
                    B_local[v0] = B_local[v0] + A[v0, v1]
            with T.block("B_local"):
                v0 = T.axis.spatial(n, ax0_fused_0 * T.int64(256) + ax0_fused_1)
                T.where(ax0_fused_0 * T.int64(256) + ax0_fused_1 < n)
                T.reads(B_local[v0])
                T.writes(B[v0])
                B[v0] = B_local[v0]
)");
  EXPECT_EQ(f.root_block().allocs.size(), 1u);
  auto ls = loops(f);
  EXPECT_EQ(ls[0]->extent.dtype(), DataType::int64());
  EXPECT_EQ(ls[0]->thread_tag, "blockIdx.x");
}

class LongtailExample : public ::testing::TestWithParam<const char *> {};

TEST_P(LongtailExample, Parses) {
  std::string path = std::string(TESSERA_LONGTAIL_DIR) + "/" + GetParam();
  ir::Module m = script::parse_file(path);
  ASSERT_EQ(m.funcs.size(), 1u);
  EXPECT_NE(find_block(m.funcs[0], "block") != nullptr || find_block(m.funcs[0], "block1") != nullptr, false);
}
INSTANTIATE_TEST_SUITE_P(Shared, LongtailExample,
                         ::testing::Values("if_nest.py", "inplace.py", "nonzero_start.py", "prefix_sum.py"));

TEST(Parser, LongtailDetails) {
  std::string dir = std::string(TESSERA_LONGTAIL_DIR) + "/";
  PrimFunc inplace = script::parse_file(dir + "inplace.py").funcs[0];
  EXPECT_EQ(regions_str(find_block(inplace, "block")->reads), "B[i] A[i]");
  EXPECT_EQ(regions_str(find_block(inplace, "block")->writes), "B[i]");
  PrimFunc nz = script::parse_file(dir + "nonzero_start.py").funcs[0];
  EXPECT_EQ(as_const_int(loops(nz)[0]->min), 1);
  EXPECT_EQ(as_const_int(loops(nz)[0]->extent), 99);
  EXPECT_EQ(as_const_int(find_block(nz, "block")->iter_vars[0].dom.min), 1);
  PrimFunc ps = script::parse_file(dir + "prefix_sum.py").funcs[0];
  const Block *b = find_block(ps, "block");
  EXPECT_EQ(iter_kinds(b), "R");
  EXPECT_EQ(regions_str(b->reads), "B[i] A[i + 1]");
  EXPECT_EQ(regions_str(b->writes), "B[i + 1]");
  auto st = stmts_of<Store>(ps.body());
  ASSERT_FALSE(st.empty());
  EXPECT_EQ(st[0]->value.dtype(), DataType::float16());  // B[0] = 0 converts the literal
  PrimFunc ifn = script::parse_file(dir + "if_nest.py").funcs[0];
  EXPECT_EQ(stmts_of<IfThenElse>(ifn.body()).size(), 1u);
  EXPECT_NE(find_block(ifn, "block2"), nullptr);
}

TEST(Parser, ParseFileMissing) {
  EXPECT_THROW(script::parse_file("/nonexistent/x.py"), UserError);
}

TEST(Parser, GridMixedExtentsCeildivAndSymbolicInt32) {
  PrimFunc f = parse_func(R"(
@T.prim_func
def f(a: T.handle):
    m = T.int32()
    A = T.match_buffer(a, (m, 8), "int32")
    for i, j in T.grid(T.ceildiv(m, 4), T.int64(8)):
        for r in range(T.int64(2), T.int64(6)):
            with T.block("B"):
                vi = T.axis.opaque(m, i)
                A[vi, j] = T.ceildiv(vi, 4) + T.Cast("int32", r)
)");
  auto ls = loops(f);
  ASSERT_EQ(ls.size(), 3u);
  EXPECT_EQ(ls[0]->loop_var.dtype(), DataType::int32());
  EXPECT_EQ(ls[1]->loop_var.dtype(), DataType::int64());
  EXPECT_EQ(as_const_int(ls[2]->min), 2);
  EXPECT_EQ(as_const_int(ls[2]->extent), 4);
  EXPECT_EQ(ls[2]->min.dtype(), DataType::int64());
  // ceildiv(m, 4) on integers is floordiv(m + 4 - 1, 4).
  const auto *fd = ls[0]->extent.as<Binary>();
  ASSERT_NE(fd, nullptr);
  EXPECT_EQ(fd->op, BinaryOp::FloorDiv);
  EXPECT_EQ(iter_kinds(find_block(f, "B")), "O");
}
