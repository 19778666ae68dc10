//===- tests/bench/WorkloadFactsTest.cpp - Bytes, flops, cuBLAS GEMMs (unit) -===//
//
// bench/WorkloadFacts on the corpus at its small sizes and on hand-written
// variants: the GEMM cuBLAS would run for each matrix product (layout,
// sizes, dtypes), whether it is the whole function (exact) or only its
// speed reference, and the byte and flop counts the achieved rates divide.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tessera/bench/WorkloadFacts.h"
#include "Workloads.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/script/Parser.h"

namespace tessera::bench {
namespace {

using ir::DataType;

/// The manifest entry `name` with every size fixed at its small value.
struct Small {
  test::Sizes s;
  WorkloadFacts facts;
};

Small small(const std::string &name) {
  for (const test::Entry &e : test::load_manifest())
    if (e.name == name) return {e.small, workload_facts(analysis::specialize(test::load_func(e), e.small))};
  throw std::runtime_error("no workload " + name);
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

TEST(WorkloadFacts, MatmulNtIsExactlyOneCublasGemm) {
  auto [s, f] = small("matmul_nt_f16");
  ASSERT_TRUE(f.gemm) << f.gemm_note;
  EXPECT_TRUE(f.gemm_exact) << f.gemm_note;
  EXPECT_EQ(f.gemm->str(), "gemm 67x45x40 nt float16->float16");
  EXPECT_FALSE(f.gemm->a_transposed);
  EXPECT_TRUE(f.gemm->b_transposed);
  EXPECT_EQ(f.a_param, 0);
  EXPECT_EQ(f.b_param, 1);
  EXPECT_EQ(f.c_param, 2);
  int64_t m = s["m"], n = s["n"], k = s["k"];
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * m * n * k);
  EXPECT_EQ(f.bytes, size_t(m * k + n * k + m * n) * 2);
  EXPECT_EQ(f.iterations, m * n * k + m * n) << "the reduction and the cast epilogue";
}

TEST(WorkloadFacts, Float32MatmulAccumulatesInTheOutput) {
  auto [s, f] = small("matmul_nn_f32");
  ASSERT_TRUE(f.gemm) << f.gemm_note;
  EXPECT_TRUE(f.gemm_exact) << f.gemm_note;
  EXPECT_EQ(f.gemm->str(), "gemm 37x45x40 nn float32->float32");
  EXPECT_EQ(f.c_param, 2);
}

TEST(WorkloadFacts, BatchedMatmulIsAStridedBatchedGemm) {
  auto [s, f] = small("bmm_symbolic_m_f16");
  ASSERT_TRUE(f.gemm) << f.gemm_note;
  EXPECT_TRUE(f.gemm_exact) << f.gemm_note;
  EXPECT_EQ(f.gemm->batch, s["b"]);
  EXPECT_EQ(f.gemm->str(), "bmm 3x37x45x40 nn float16->float16");
}

TEST(WorkloadFacts, GemvIsAGemmWithOneColumn) {
  auto [s, f] = small("gemv_f16");
  ASSERT_TRUE(f.gemm) << f.gemm_note;
  EXPECT_TRUE(f.gemm_exact) << f.gemm_note;
  EXPECT_EQ(f.gemm->str(), "gemm 67x1x130 nn float16->float16");
  EXPECT_EQ(f.a_param, 0);
  EXPECT_EQ(f.b_param, 1);
  EXPECT_EQ(f.c_param, 2);
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * s["m"] * s["k"]);
}

TEST(WorkloadFacts, DequantisingGemvIsOnlyTheSpeedReference) {
  auto [s, f] = small("gemv_int4");
  ASSERT_TRUE(f.gemm) << f.gemm_note;
  EXPECT_FALSE(f.gemm_exact);
  EXPECT_TRUE(contains(f.gemm_note, "'W'")) << f.gemm_note;
  EXPECT_EQ(f.gemm->str(), "gemm 37x1x300 nn float16->float16") << "cuBLAS gets the float16 weights";
  int64_t m = s["m"], k = s["k"];
  size_t packed = size_t(m * ((k + 7) / 8)) * 4, scales = size_t(m * ((k + 127) / 128)) * 2;
  EXPECT_EQ(f.bytes, packed + scales + size_t(k) * 2 + size_t(m) * 2) << "the parameters, not the decoded W";
}

TEST(WorkloadFacts, EpilogueWithBiasIsNotExact) {
  auto [s, f] = small("matmul_bias_relu_f32");
  ASSERT_TRUE(f.gemm) << f.gemm_note;
  EXPECT_FALSE(f.gemm_exact);
  EXPECT_TRUE(contains(f.gemm_note, "'D'")) << f.gemm_note;
  EXPECT_EQ(f.gemm->str(), "gemm 45x37x40 nn float32->float32");
}

TEST(WorkloadFacts, ConvolutionCountsFlopsButHasNoGemm) {
  auto [s, f] = small("conv2d_nhwc_f16");
  EXPECT_FALSE(f.gemm);
  EXPECT_FALSE(f.gemm_note.empty());
  int64_t n = s["n"], h = s["h"], w = s["w"], ci = s["ci"], co = s["co"];
  EXPECT_DOUBLE_EQ(f.flops, 2.0 * n * h * w * co * 9 * ci);
  EXPECT_EQ(f.iterations, n * (h + 2) * (w + 2) * ci + n * h * w * co * 9 * ci + n * h * w * co);
}

TEST(WorkloadFacts, ElementwiseMovesBytesAndNoFlops) {
  auto [s, f] = small("add_f16");  // C[i, j] = A[i, j] + bias[j]
  EXPECT_FALSE(f.gemm);
  EXPECT_EQ(f.flops, 0);
  int64_t elems = s["rows"] * s["cols"];
  EXPECT_EQ(f.bytes, size_t(2 * elems + s["cols"]) * 2) << "A, C and the bias row, each once";
  EXPECT_EQ(f.iterations, elems);
}

TEST(WorkloadFacts, MatmulWithATransposedIsTn) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((24, 40), "float32"), B: T.Buffer((24, 32), "float32"), C: T.Buffer((40, 32), "float32")):
    for i, j, r in T.grid(40, 32, 24):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_r, v_i] * B[v_r, v_j]
)");
  WorkloadFacts facts = workload_facts(f);
  ASSERT_TRUE(facts.gemm) << facts.gemm_note;
  EXPECT_TRUE(facts.gemm_exact) << facts.gemm_note;
  EXPECT_EQ(facts.gemm->str(), "gemm 40x32x24 tn float32->float32");
}

TEST(WorkloadFacts, MixedOperandDtypesHaveNoCublasGemm) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((16, 8), "float16"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((16, 4), "float32")):
    for i, j, r in T.grid(16, 4, 8):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + T.Cast("float32", A[v_i, v_r]) * B[v_r, v_j]
)");
  WorkloadFacts facts = workload_facts(f);
  EXPECT_FALSE(facts.gemm);
  EXPECT_TRUE(contains(facts.gemm_note, "float16 x float32")) << facts.gemm_note;
  EXPECT_DOUBLE_EQ(facts.flops, 2.0 * 16 * 4 * 8);
}

TEST(WorkloadFacts, SymbolicShapesAreAUserError) {
  for (const test::Entry &e : test::load_manifest())
    if (e.name == "matmul_nn_f32") {
      EXPECT_THROW(workload_facts(test::load_func(e)), UserError);
      return;
    }
  FAIL() << "matmul_nn_f32 is not in the manifest";
}

}  // namespace
}  // namespace tessera::bench
