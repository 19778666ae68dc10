//===- tests/analysis/MatmulViewTest.cpp - Roles, layouts, reasons ----------===//
#include <gtest/gtest.h>

#include "tessera/analysis/MatmulView.h"
#include "tessera/script/Parser.h"

namespace tessera::analysis {
namespace {

/// A matmul C[b?, i, j] += A[...] * B[...] with the given index lists.
std::string matmul(const std::string &a_shape, const std::string &a_idx, const std::string &b_shape,
                   const std::string &b_idx, const std::string &in_dtype = "float32") {
  std::string cast_a = in_dtype == "float32" ? "A[" + a_idx + "]" : "T.Cast(\"float32\", A[" + a_idx + "])";
  std::string cast_b = in_dtype == "float32" ? "B[" + b_idx + "]" : "T.Cast(\"float32\", B[" + b_idx + "])";
  return R"(
@T.prim_func
def mm(A: T.Buffer()" + a_shape + R"(, ")" + in_dtype + R"("), B: T.Buffer()" + b_shape + R"(, ")" + in_dtype +
         R"("), C: T.Buffer((8, 16), "float32")):
    for i, j, k in T.grid(8, 16, 32):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + )" + cast_a + " * " + cast_b + "\n";
}

MatchResult<MatmulView> match_text(const std::string &text, const std::string &block = "C") {
  FuncInfo info = analyze(script::parse_func(text, "mm.py"));
  return match_matmul(info, info.find(block));
}

TEST(MatmulView, FourLayouts) {
  struct Case {
    std::string a_shape, a_idx, b_shape, b_idx, layout, a_roles, b_roles;
  } cases[] = {
      {"(8, 32)", "vi, vk", "(32, 16)", "vk, vj", "nn", "MK", "KN"},
      {"(8, 32)", "vi, vk", "(16, 32)", "vj, vk", "nt", "MK", "NK"},
      {"(32, 8)", "vk, vi", "(32, 16)", "vk, vj", "tn", "KM", "KN"},
      {"(32, 8)", "vk, vi", "(16, 32)", "vj, vk", "tt", "KM", "NK"},
  };
  for (const Case &c : cases) {
    auto m = match_text(matmul(c.a_shape, c.a_idx, c.b_shape, c.b_idx));
    ASSERT_TRUE(m) << c.layout << ": " << m.reason();
    EXPECT_EQ(m->layout(), c.layout);
    EXPECT_EQ(m->a.roles(), c.a_roles);
    EXPECT_EQ(m->b.roles(), c.b_roles);
    EXPECT_EQ(m->c.roles(), "MN");
    EXPECT_EQ(m->a.buffer.name(), "A");
    EXPECT_EQ(m->m, std::vector<int>({0}));
    EXPECT_EQ(m->n, std::vector<int>({1}));
    EXPECT_EQ(m->k, std::vector<int>({2}));
  }
}

TEST(MatmulView, OperandsSwappedInTheProductStillFindA) {
  std::string text = matmul("(8, 32)", "vi, vk", "(32, 16)", "vk, vj");
  text.replace(text.find("A[vi, vk] * B[vk, vj]"), 21, "B[vk, vj] * A[vi, vk]");
  auto m = match_text(text);
  ASSERT_TRUE(m) << m.reason();
  EXPECT_EQ(m->a.buffer.name(), "A");
  EXPECT_EQ(m->layout(), "nn");
}

TEST(MatmulView, Float16OperandsThroughCastsWithFloat32Accumulator) {
  auto m = match_text(matmul("(8, 32)", "vi, vk", "(16, 32)", "vj, vk", "float16"));
  ASSERT_TRUE(m) << m.reason();
  EXPECT_EQ(m->a_dtype, ir::DataType::float16());
  EXPECT_EQ(m->acc_dtype, ir::DataType::float32());
  EXPECT_EQ(m->layout(), "nt");
}

TEST(MatmulView, BatchedWithSymbolicBatchAndEpilogue) {
  auto m = match_text(R"(
@T.prim_func
def bmm(a: T.handle, B: T.Buffer((4, 32, 16), "float32"), d: T.handle):
    b = T.int32()
    A = T.match_buffer(a, (b, 8, 32), "float32")
    D = T.match_buffer(d, (b, 8, 16), "float32")
    C = T.alloc_buffer((b, 8, 16))
    for n, i, j, k in T.grid(b, 8, 16, 32):
        with T.block("C"):
            vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
            with T.init():
                C[vn, vi, vj] = T.float32(0)
            C[vn, vi, vj] = C[vn, vi, vj] + A[vn, vi, vk] * B[vn % 4, vk, vj]
    for n, i, j in T.grid(b, 8, 16):
        with T.block("relu"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            D[vn, vi, vj] = T.max(C[vn, vi, vj], T.float32(0))
)");
  // B's batch index is vn % 4: not a plain iter, so no matmul view.
  EXPECT_FALSE(m);
  EXPECT_NE(m.reason().find("indexes 'B' with expressions"), std::string::npos) << m.reason();

  auto m2 = match_text(R"(
@T.prim_func
def bmm(a: T.handle, B: T.Buffer((4, 32, 16), "float32"), d: T.handle):
    A = T.match_buffer(a, (4, 8, 32), "float32")
    D = T.match_buffer(d, (4, 8, 16), "float32")
    C = T.alloc_buffer((4, 8, 16))
    for n, i, j, k in T.grid(4, 8, 16, 32):
        with T.block("C"):
            vn, vi, vj, vk = T.axis.remap("SSSR", [n, i, j, k])
            with T.init():
                C[vn, vi, vj] = T.float32(0)
            C[vn, vi, vj] = C[vn, vi, vj] + A[vn, vi, vk] * B[vn, vk, vj]
    for n, i, j in T.grid(4, 8, 16):
        with T.block("relu"):
            vn, vi, vj = T.axis.remap("SSS", [n, i, j])
            D[vn, vi, vj] = T.max(C[vn, vi, vj], T.float32(0))
)");
  ASSERT_TRUE(m2) << m2.reason();
  EXPECT_EQ(m2->batch, std::vector<int>({0}));
  EXPECT_EQ(m2->a.roles(), "BMK");
  EXPECT_EQ(m2->c.roles(), "BMN");
  EXPECT_EQ(m2->epilogue, std::vector<int>({1}));
}

TEST(MatmulView, UnitAxesAreABatchOfOneWhereAnOperandHasMoreIters) {
  // relax: C (1, m, n) += A (1, m, k) x W (k, n): A has two iters of its
  // own (the unit one and m); the unit one is a batch of one.
  auto m = match_text(R"(
@T.prim_func
def mm(a: T.handle, W: T.Buffer((32, 16), "float32"), c: T.handle):
    m = T.int64()
    A = T.match_buffer(a, (T.int64(1), m, 32))
    C = T.match_buffer(c, (T.int64(1), m, 16))
    for i0, i1, j, k in T.grid(T.int64(1), m, 16, 32):
        with T.block("C"):
            v0, vi, vj, vk = T.axis.remap("SSSR", [i0, i1, j, k])
            with T.init():
                C[v0, vi, vj] = T.float32(0)
            C[v0, vi, vj] = C[v0, vi, vj] + A[v0, vi, vk] * W[vk, vj]
)");
  ASSERT_TRUE(m) << m.reason();
  EXPECT_EQ(m->batch, std::vector<int>({0}));
  EXPECT_EQ(m->m, std::vector<int>({1}));
  EXPECT_EQ(m->a.roles(), "BMK");
  EXPECT_EQ(m->b.roles(), "KN");
  EXPECT_EQ(m->c.roles(), "BMN");
  // A batched product of one row per batch: the lone unit iter stays M.
  auto one_row = match_text(R"(
@T.prim_func
def mm(A: T.Buffer((4, 1, 32), "float32"), B: T.Buffer((4, 32, 16), "float32"), C: T.Buffer((4, 1, 16), "float32")):
    for b, i, j, k in T.grid(4, 1, 16, 32):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]
)");
  ASSERT_TRUE(one_row) << one_row.reason();
  EXPECT_EQ(one_row->m, std::vector<int>({1}));
  EXPECT_EQ(one_row->a.roles(), "BMK");
}

TEST(MatmulView, GemvAndNonMatmulsSayWhy) {
  auto gemv = match_text(R"(
@T.prim_func
def gemv(A: T.Buffer((8, 32), "float32"), x: T.Buffer((32,), "float32"), y: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("y"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + A[vi, vk] * x[vk]
)",
                         "y");
  EXPECT_FALSE(gemv);
  EXPECT_NE(gemv.reason().find("gemv"), std::string::npos) << gemv.reason();

  auto rowsum = match_text(R"(
@T.prim_func
def rowsum(A: T.Buffer((8, 32), "float32"), y: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("y"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + A[vi, vk]
)",
                           "y");
  EXPECT_FALSE(rowsum);
  EXPECT_NE(rowsum.reason().find("not a product"), std::string::npos) << rowsum.reason();

  auto conv = match_text(R"(
@T.prim_func
def conv(X: T.Buffer((1, 10, 10, 4), "float32"), W: T.Buffer((3, 3, 4, 8), "float32"), Y: T.Buffer((1, 8, 8, 8), "float32")):
    for n, h, w, co, r, s, ci in T.grid(1, 8, 8, 8, 3, 3, 4):
        with T.block("Y"):
            vn, vh, vw, vco, vr, vs, vci = T.axis.remap("SSSSRRR", [n, h, w, co, r, s, ci])
            with T.init():
                Y[vn, vh, vw, vco] = T.float32(0)
            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + X[vn, vh + vr, vw + vs, vci] * W[vr, vs, vci, vco]
)",
                         "Y");
  EXPECT_FALSE(conv);
  EXPECT_NE(conv.reason().find("convolution window"), std::string::npos) << conv.reason();

  auto maxred = match_text(R"(
@T.prim_func
def mx(A: T.Buffer((8, 32), "float32"), y: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("y"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = T.max(y[vi], A[vi, vk])
)",
                           "y");
  EXPECT_FALSE(maxred);
  EXPECT_NE(maxred.reason().find("reduces with max"), std::string::npos) << maxred.reason();
}

}  // namespace
}  // namespace tessera::analysis
