//===- tests/rules/TensorCoreSimtTest.cpp - mma.sync GEMMs on the SIMT emulator ===//
//
// The interpreter runs one lane at a time; the SIMT emulator runs the
// lowered kernel the way the GPU does (a CPU thread per GPU thread, barriers,
// ldmatrix and mma.sync as warp exchanges, cp.async landing at its wait,
// race checks on shared and global memory). Every tensor-core workload of the
// corpus at shapes that divide no tile (batch 3, a symbolic M of 7, N and K
// not multiples of the tiles) must match the float64 reference with no race,
// and a kernel whose in-loop wait is one group short must fail.
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"
#include "TensorCoreSimtUtil.h"
#include "TensorCoreTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

/// A small config: 2 x 2 warps of 32 x 16, K step 32, 3 stages.
rules::TensorCoreConfig small_config() {
  rules::TensorCoreConfig c;
  c.block_m = 64, c.block_n = 32, c.block_k = 32, c.warps_m = 2, c.warps_n = 2, c.stages = 3;
  return c;
}

TEST(TensorCoreSimt, CorpusWorkloadsAtShapesThatDivideNoTile) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  int ran = 0;
  for (const Entry &e : workload_entries()) {
    if (e.rule != "matmul_tensor_core" || e.is_conv2d()) continue;  // the convolution: below
    SCOPED_TRACE(e.name);
    ir::PrimFunc f = load_func(e);
    runtime::DimBindings dims = e.small;
    dims["m"] = 7;
    dims["n"] = 48;
    dims["k"] = 72;  // three K tiles of 32: the pipeline wraps its stages
    auto m = rule.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    // As written (symbolic rows: element copies), and with N and K bound
    // (cp.async: 16-byte pieces where N = 48, K = 72 allow, else 8 or 4).
    runtime::DimBindings fixed;
    for (const char *v : {"n", "k"})
      if (dims.count(v)) fixed[v] = dims[v];
    for (bool specialized : {false, true}) {
      SCOPED_TRACE(specialized ? "N and K bound" : "symbolic");
      ir::PrimFunc g = specialized ? analysis::specialize(f, fixed) : f;
      runtime::DimBindings left = dims;
      if (specialized)
        for (const auto &[v, _] : fixed) left.erase(v);
      auto gm = rule.match(g, test_arch());
      ASSERT_TRUE(gm) << gm.reason();
      for (bool swizzle : {false, true}) {
        rules::TensorCoreConfig c = small_config();
        if (e.name == "matmul_nt_i8") c.in_bytes = 1, c.pad = 16, c.block_k = 64;  // 8-bit: a K step of 32 at least
        if (e.name == "matmul_nn_tf32") {
          if (swizzle) continue;  // tf32 tiles are padded
          c.in_bytes = 4, c.pad = 4;
        }
        if (e.name == "matmul_nn_f16_acc16") c.acc_bytes = 2;
        if (e.name == "matmul_nt_i8" && swizzle) c.warps_n = 4;  // fewer element copies per thread
        // The workload facts from the rule's own default.
        // The default config is held: a reference into a temporary's pointee dangles (ASan).
        std::unique_ptr<rules::Config> dflt = rule.default_config(**gm, test_arch());
        const auto &d = dynamic_cast<const rules::TensorCoreConfig &>(*dflt);
        c.a_elementwise = d.a_elementwise, c.b_elementwise = d.b_elementwise;
        if (swizzle) c.swizzle = true, c.pad = 0, c.block_n = 64;  // rows of 64 bytes at least
        c.validate(test_arch());
        SCOPED_TRACE(c.str());
        ir::PrimFunc s = rule.apply(g, **gm, c).func();
        std::string error;
        std::vector<runtime::OutputCheck> checks = emulate(g, s, left, &error);
        ASSERT_EQ(error, "") << codegen::codegen_cuda(lower::lower(s));
        ASSERT_FALSE(checks.empty());
        for (const runtime::OutputCheck &r : checks) EXPECT_TRUE(r.ok) << r.str();
      }
    }
    ++ran;
  }
  EXPECT_GE(ran, 7) << "the corpus has seven tensor-core matmuls";
}

TEST(TensorCoreSimt, ConvolutionAsAnImplicitGemm) {
  // conv2d_nhwc_f16 (padding producer, 3 x 3 window, cast epilogue) at sizes
  // that divide no tile: its gather inlined into A's fetch.
  const Entry &e = find_entry("conv2d_nhwc_f16");
  ir::PrimFunc f = analysis::specialize(load_func(e), {{"n", 2}, {"h", 5}, {"w", 7}, {"ci", 8}, {"co", 24}});
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  auto m = rule.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  rules::TensorCoreConfig c = small_config();
  std::unique_ptr<rules::Config> dflt = rule.default_config(**m, test_arch());
  const auto &d = dynamic_cast<const rules::TensorCoreConfig &>(*dflt);
  c.a_elementwise = d.a_elementwise, c.b_elementwise = d.b_elementwise;
  ir::PrimFunc s = rule.apply(f, **m, c).func();
  std::string error;
  std::vector<runtime::OutputCheck> checks = emulate(f, s, {}, &error);
  ASSERT_EQ(error, "");
  ASSERT_FALSE(checks.empty());
  for (const runtime::OutputCheck &r : checks) EXPECT_TRUE(r.ok) << r.str();
}

TEST(TensorCoreSimt, Int8IsExact) {
  // int8 "nt" (m16n8k32, ldmatrix of byte pairs), K = 96 in 16-byte pieces.
  ir::PrimFunc f = script::parse_func(int8_text(37, 40, 96));

  rules::TensorCoreConfig c = small_config();
  c.in_bytes = 1, c.pad = 16, c.block_k = 64;
  auto m = rules::matmul_tensor_core_rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  ir::PrimFunc s = rules::matmul_tensor_core_rule().apply(f, **m, c).func();
  std::string error;
  std::vector<runtime::OutputCheck> checks = emulate(f, s, {}, &error);
  ASSERT_EQ(error, "");
  ASSERT_FALSE(checks.empty());
  for (const runtime::OutputCheck &r : checks) EXPECT_TRUE(r.ok) << r.str();
}

TEST(TensorCoreSimt, Tf32AndFloat16AccumulationAtShapesThatDivideNoTile) {
  // tf32 (m16n8k8, fragments loaded and rounded per lane) in the nn and tn
  // layouts, rows of 36 and 52 floats in 16-byte pieces; float16 products
  // accumulated in float16 (two accumulators per register).
  struct Case {
    std::string text;
    int64_t in_bytes, acc_bytes;
  };
  std::vector<Case> cases = {{tf32_text(true, false, "37", 52, 36), 4, 4},
                             {tf32_text(false, true, "37", 52, 36), 4, 4},
                             {f16_accumulating_text(true, false, "37", 40, 96), 2, 2}};
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  for (const Case &k : cases) {
    ir::PrimFunc f = script::parse_func(k.text);
    auto m = rule.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    rules::TensorCoreConfig c = small_config();
    c.in_bytes = k.in_bytes, c.acc_bytes = k.acc_bytes;
    if (k.in_bytes == 4) c.pad = 4, c.block_k = 16;
    c.validate(test_arch());
    SCOPED_TRACE(c.str());
    ir::PrimFunc s = rule.apply(f, **m, c).func();
    std::string error;
    std::vector<runtime::OutputCheck> checks = emulate(f, s, {}, &error);
    ASSERT_EQ(error, "") << codegen::codegen_cuda(lower::lower(s));
    ASSERT_FALSE(checks.empty());
    for (const runtime::OutputCheck &r : checks) EXPECT_TRUE(r.ok) << r.str();
  }
}

TEST(TensorCoreSimt, AUnitBatchAxisAsRelaxPrintsIt) {
  // (1, m, k) x (k, n): the unit axis is a batch of one (blockIdx.z of 1).
  ir::PrimFunc f = script::parse_func(relax_matmul_text(40, 96));
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  auto m = rule.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  rules::TensorCoreConfig c = small_config();
  c.validate(test_arch());
  ir::PrimFunc s = rule.apply(f, **m, c).func();
  for (int64_t rows : {1, 37, 70}) {
    std::string error;
    std::vector<runtime::OutputCheck> checks = emulate(f, s, {{"m", rows}}, &error);
    ASSERT_EQ(error, "") << codegen::codegen_cuda(lower::lower(s));
    ASSERT_FALSE(checks.empty());
    for (const runtime::OutputCheck &r : checks) EXPECT_TRUE(r.ok) << "m = " << rows << ": " << r.str();
  }
}

TEST(TensorCoreSimt, AShortWaitIsCaught) {
  const Entry &e = find_entry("matmul_nn_f16");
  // Static rows (K and N known) so that the tiles arrive by cp.async.
  ir::PrimFunc f = analysis::specialize(load_func(e), {{"n", 32}, {"k", 96}});
  runtime::DimBindings dims{{"m", 40}};
  auto m = rules::matmul_tensor_core_rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  ir::PrimFunc s = rules::matmul_tensor_core_rule().apply(f, **m, small_config()).func();
  ir::PrimFunc broken = s.with_body(ShiftLoopWaits(1).mutate(s.body()));
  std::string error;
  std::vector<runtime::OutputCheck> checks = emulate(f, broken, dims, &error);
  // Either a race (the copy lands after another thread read the stage) or
  // poison in the result: never a pass.
  ASSERT_FALSE(ir::structural_equal(broken, s)) << "no wait was changed";
  EXPECT_TRUE(!error.empty() || !runtime::all_ok(checks)) << (checks.empty() ? "" : checks[0].str());
}

}  // namespace
}  // namespace tessera::test
