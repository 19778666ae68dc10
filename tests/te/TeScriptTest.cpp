//===- TeScriptTest.cpp - TE programs equal the TVMScript a user would write ===//
//
// The acceptance test of the TE builder: for each workload, create_prim_func's
// output is structurally equal to the TVMScript a TVM user writes for it
// (reads/writes left to the parser's inference), and both give bit-identical
// results in the interpreter on the same random inputs. Matmul and softmax are
// also checked against a plain C++ reference.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <string_view>

#include "tessera/ir/StructuralEqual.h"
#include "tessera/ir/Verifier.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/te/Tensor.h"

#include "IRTestUtil.h"
#include "TeWorkloads.h"

namespace tessera::te {
namespace {

using ir::DataType;
using ir::Expr;
using ir::Var;

const DataType f32 = DataType::float32();
const DataType f16 = DataType::float16();

// Checks `built` against the parse of `script`, then runs both on the same
// random arguments and expects identical outputs. Returns the arguments after
// running the TE function, for reference checks.
std::vector<runtime::NDArray> expect_same_as_script(const ir::PrimFunc &built, std::string_view script,
                                                    const runtime::DimBindings &dims = {}) {
  std::vector<std::string> problems = ir::verify(built);
  EXPECT_TRUE(problems.empty()) << "create_prim_func's output is ill formed: " << problems.front();
  ir::PrimFunc parsed = script::parse_func(script);
  EXPECT_TRUE(test::structurally_equal_with_diff(built, parsed, "create_prim_func", "parsed TVMScript"));
  // The printed output reads back as the same function.
  EXPECT_TRUE(test::structurally_equal_with_diff(built, script::parse_func(script::print(built)), "create_prim_func",
                                                 "its printed form, parsed"));

  test::RandomRuns runs = test::run_on_same_random_args(built, parsed, dims, 42);
  EXPECT_TRUE(test::all_close(runs.a, runs.b, 0, 0));
  return runs.a;
}

TEST(TeScript, Matmul) {
  Tensor A = placeholder({64, 48}, f32, "A");
  Tensor B = placeholder({48, 32}, f32, "B");
  ReduceAxis k = reduce_axis(48, "k");
  Tensor C = compute({64, 32}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C", {"i", "j"});
  auto args = expect_same_as_script(create_prim_func({A, B, C}), R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 32), "float32"), C: T.Buffer((64, 32), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(64, 32, 48):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  // An independent reference, summing in the same order in float.
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 32; ++j) {
      float acc = 0;
      for (int kk = 0; kk < 48; ++kk)
        acc += static_cast<float>(args[0].get(i * 48 + kk)) * static_cast<float>(args[1].get(kk * 32 + j));
      ASSERT_EQ(static_cast<float>(args[2].get(i * 32 + j)), acc) << "C[" << i << ", " << j << "]";
    }
}

TEST(TeScript, Softmax) {
  auto [A, M, E, S, N] = workloads::softmax();
  auto args = expect_same_as_script(create_prim_func({A, N}), R"(
@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), T_softmax_norm: T.Buffer((16, 32), "float32")):
    T.func_attr({"tir.noalias": True})
    T_softmax_maxelem = T.alloc_buffer((16,))
    T_softmax_exp = T.alloc_buffer((16, 32))
    T_softmax_expsum = T.alloc_buffer((16,))
    for i0, k in T.grid(16, 32):
        with T.block("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                T_softmax_maxelem[v_i0] = T.min_value("float32")
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
    for i0, i1 in T.grid(16, 32):
        with T.block("T_softmax_exp"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T_softmax_exp[v_i0, v_i1] = T.exp(A[v_i0, v_i1] - T_softmax_maxelem[v_i0])
    for i0, k in T.grid(16, 32):
        with T.block("T_softmax_expsum"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            with T.init():
                T_softmax_expsum[v_i0] = T.float32(0)
            T_softmax_expsum[v_i0] = T_softmax_expsum[v_i0] + T_softmax_exp[v_i0, v_k]
    for i0, i1 in T.grid(16, 32):
        with T.block("T_softmax_norm"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T_softmax_norm[v_i0, v_i1] = T_softmax_exp[v_i0, v_i1] / T_softmax_expsum[v_i0]
)");
  for (int i = 0; i < 16; ++i) {
    double row = 0;
    for (int j = 0; j < 32; ++j) row += args[1].get(i * 32 + j);
    EXPECT_NEAR(row, 1.0, 1e-5) << "row " << i;
    double mx = -1e30, denom = 0;
    for (int j = 0; j < 32; ++j) mx = std::max(mx, args[0].get(i * 32 + j));
    for (int j = 0; j < 32; ++j) denom += std::exp(args[0].get(i * 32 + j) - mx);
    for (int j = 0; j < 32; ++j)
      EXPECT_NEAR(args[1].get(i * 32 + j), std::exp(args[0].get(i * 32 + j) - mx) / denom, 1e-6);
  }
}

TEST(TeScript, Conv2dNhwcWithPaddingAndStride) {
  // 14x14x8 input, 3x3 kernel to 16 channels, padding 1, stride 2 -> 7x7x16.
  workloads::ConvWithPadding conv = workloads::conv_with_padding();
  expect_same_as_script(create_prim_func({conv.X, conv.W, conv.Y}), R"(
@T.prim_func
def main(X: T.Buffer((1, 14, 14, 8), "float32"), W: T.Buffer((3, 3, 8, 16), "float32"), conv: T.Buffer((1, 7, 7, 16), "float32")):
    T.func_attr({"tir.noalias": True})
    pad = T.alloc_buffer((1, 16, 16, 8))
    for n, h, w, c in T.grid(1, 16, 16, 8):
        with T.block("pad"):
            v_n, v_h, v_w, v_c = T.axis.remap("SSSS", [n, h, w, c])
            pad[v_n, v_h, v_w, v_c] = T.if_then_else(1 <= v_h and v_h < 15 and 1 <= v_w and v_w < 15, X[v_n, v_h - 1, v_w - 1, v_c], T.float32(0))
    for n, h, w, co, rh, rw, rc in T.grid(1, 7, 7, 16, 3, 3, 8):
        with T.block("conv"):
            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
            with T.init():
                conv[v_n, v_h, v_w, v_co] = T.float32(0)
            conv[v_n, v_h, v_w, v_co] = conv[v_n, v_h, v_w, v_co] + pad[v_n, v_h * 2 + v_rh, v_w * 2 + v_rw, v_rc] * W[v_rh, v_rw, v_rc, v_co]
)");
}

TEST(TeScript, ElementwiseChainWithBroadcast) {
  Tensor A = placeholder({32, 64}, f16, "A");
  Tensor bias = placeholder({64}, f16, "bias");
  Tensor B = compute({32, 64}, [&](Var i, Var j) { return A(i, j) + bias(j); }, "T_add", {"i", "j"});
  Tensor C = compute({32, 64}, [&](Var i, Var j) { return te::max(B(i, j), make_const(f16, 0)) * 2; },
                     "T_relu", {"i", "j"});
  expect_same_as_script(create_prim_func({A, bias, C}), R"(
@T.prim_func
def main(A: T.Buffer((32, 64), "float16"), bias: T.Buffer((64,), "float16"), T_relu: T.Buffer((32, 64), "float16")):
    T.func_attr({"tir.noalias": True})
    T_add = T.alloc_buffer((32, 64), "float16")
    for i, j in T.grid(32, 64):
        with T.block("T_add"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T_add[v_i, v_j] = A[v_i, v_j] + bias[v_j]
    for i, j in T.grid(32, 64):
        with T.block("T_relu"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T_relu[v_i, v_j] = T.max(T_add[v_i, v_j], T.float16(0)) * T.float16(2)
)");
}

TEST(TeScript, RowSumWithSymbolicDims) {
  Var m("m"), n("n", DataType::int64());
  Tensor A = placeholder({m, n}, f32, "A");
  ReduceAxis k = reduce_axis(n, "k");
  Tensor B = compute({m}, [&](Var i) { return sum(A(i, k), {k}); }, "B", {"i"});
  expect_same_as_script(create_prim_func({A, B}), R"(
@T.prim_func
def main(var_A: T.handle, var_B: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int64()
    A = T.match_buffer(var_A, (m, n))
    B = T.match_buffer(var_B, (m,))
    for i, k in T.grid(m, n):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)",
                        {{"m", 5}, {"n", 37}});
}

TEST(TeScript, RmsNorm) {
  Tensor X = placeholder({8, 64}, f32, "X");
  Tensor Wt = placeholder({64}, f32, "W");
  ReduceAxis k = reduce_axis(64, "k");
  Tensor S = compute({8}, [&](Var i) { return sum(X(i, k) * X(i, k), {k}); }, "sq_sum", {"i"});
  Tensor Y = compute({8, 64}, [&](Var i, Var j) { return X(i, j) * te::rsqrt(S(i) / 64.0 + 1e-5) * Wt(j); },
                     "rms_norm", {"i", "j"});
  expect_same_as_script(create_prim_func({X, Wt, Y}), R"(
@T.prim_func
def main(X: T.Buffer((8, 64), "float32"), W: T.Buffer((64,), "float32"), rms_norm: T.Buffer((8, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    sq_sum = T.alloc_buffer((8,))
    for i, k in T.grid(8, 64):
        with T.block("sq_sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                sq_sum[v_i] = T.float32(0)
            sq_sum[v_i] = sq_sum[v_i] + X[v_i, v_k] * X[v_i, v_k]
    for i, j in T.grid(8, 64):
        with T.block("rms_norm"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            rms_norm[v_i, v_j] = X[v_i, v_j] * T.rsqrt(sq_sum[v_i] / T.float32(64) + T.float32(1e-05)) * W[v_j]
)");
}

TEST(TeScript, CustomProductReducer) {
  CommReducer prod = workloads::prod_reducer();
  Tensor A = placeholder({8, 4}, f32, "A");
  ReduceAxis k = reduce_axis(4, "k");
  Tensor B = compute({8}, [&](Var i) { return reduce(prod, A(i, k), {k}); }, "B", {"i"});
  expect_same_as_script(create_prim_func({A, B}), R"(
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(8, 4):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(1)
            B[v_i] = B[v_i] * A[v_i, v_k]
)");
}

// The comparison is sharp: the update with its operands swapped (value on the
// left) is a different program.
TEST(TeScript, AccumulatorOrderIsCompared) {
  CommReducer prod = workloads::prod_reducer();
  Tensor A = placeholder({8, 4}, f32, "A");
  ReduceAxis k = reduce_axis(4, "k");
  Tensor B = compute({8}, [&](Var i) { return reduce(prod, A(i, k), {k}); }, "B", {"i"});
  ir::PrimFunc swapped = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(8, 4):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(1)
            B[v_i] = A[v_i, v_k] * B[v_i]
)");
  EXPECT_FALSE(ir::structural_equal(create_prim_func({A, B}), swapped));
  EXPECT_FALSE(ir::structural_diff(create_prim_func({A, B}), swapped).empty());
}

TEST(TeScript, ReductionWithNonZeroStart) {
  Tensor A = placeholder({8, 16}, f32, "A");
  ReduceAxis k = reduce_axis(4, 8, "k");
  Tensor B = compute({8}, [&](Var i) { return min(A(i, k), {k}); }, "B", {"i"});
  expect_same_as_script(create_prim_func({A, B}), R"(
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in range(8):
        for k in range(4, 12):
            with T.block("B"):
                v_i = T.axis.spatial(8, i)
                v_k = T.axis.reduce((4, 12), k)
                with T.init():
                    B[v_i] = T.max_value("float32")
                B[v_i] = T.min(B[v_i], A[v_i, v_k])
)");
}

}  // namespace
}  // namespace tessera::te
