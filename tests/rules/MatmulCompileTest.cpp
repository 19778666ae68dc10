//===- tests/rules/MatmulCompileTest.cpp - matmul/conv2d configs compile (nvrtc) ===//
//
// Label `nvrtc`: the matmul and conv2d rules' kernels for configs other than
// the default (non-dividing tiles, padding, vector widths, no unroll; the
// conv2d rule's implicit_gemm form too), at the workloads' small sizes and at
// a realistic size, compile with NVRTC for sm_80 and sm_90 (the default
// configs are compiled by RulesCompileTest).
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"

#include "tessera/rules/Conv2d.h"
#include "tessera/rules/Matmul.h"
#include "tessera/runtime/CudaFunction.h"

namespace tessera::test {
namespace {

void expect_compiles(const std::string &what, const ir::PrimFunc &f) {
  try {
    auto fns = runtime::CudaFunction::build_for_archs(f, {"sm_80", "sm_90"});
    ASSERT_EQ(fns.size(), 2u);
    for (const auto &fn : fns) EXPECT_FALSE(fn.compiled().cubin.empty()) << what << " " << fn.arch();
  } catch (const UserError &err) {
    ADD_FAILURE() << what << ": " << err.what();
  }
}

TEST(MatmulCompile, OtherConfigsCompileForSm80AndSm90) {
  const rules::Rule &rule = rules::matmul_rule();
  for (const Entry &e : workload_entries()) {
    if ((e.rule != "matmul" && e.rule != "matmul_tensor_core") || e.is_conv2d()) continue;
    SmallWorkload w = small_workload(e);
    auto m = rule.match(w.func, test_arch());
    ASSERT_TRUE(m) << m.reason();
    auto c = dynamic_cast<const rules::MatmulConfig &>(*rule.default_config(**m, test_arch()));
    bool nt = e.name.find("_nt_") != std::string::npos;
    c.block_m = 16, c.block_n = 32, c.block_k = 8, c.thread_m = 4, c.thread_n = 4;
    c.vector_a = 2, c.vector_b = nt ? 1 : 2, c.vector_c = 2, c.pad_a = 2, c.pad_b = nt ? 1 : 2,
    c.unroll = false;
    c.validate(test_arch());
    expect_compiles(e.name + " " + c.str(), rule.apply(w.func, **m, c).func());
    // Tiles smaller than the thread block: the fetches mask idle threads.
    c.block_m = 8, c.block_n = 128, c.block_k = 2, c.thread_m = 1, c.thread_n = 4;
    c.vector_a = c.vector_b = c.vector_c = 1, c.pad_a = c.pad_b = 0, c.unroll = true;
    c.validate(test_arch());
    expect_compiles(e.name + " " + c.str(), rule.apply(w.func, **m, c).func());
  }
}

TEST(MatmulCompile, RealisticSizeCompiles) {
  const rules::Rule &rule = rules::matmul_rule();
  for (const Entry &e : workload_entries()) {
    if (e.name != "matmul_nn_f32" && e.name != "matmul_nt_f16") continue;
    ir::PrimFunc f = analysis::specialize(load_func(e), e.specialized(e.full));
    auto m = rule.match(f, test_arch());
    ASSERT_TRUE(m);
    expect_compiles(e.name + " full", rule.apply(f, **m, *rule.default_config(**m, test_arch())).func());
  }
}

TEST(Conv2dCompile, OtherConfigsCompileForSm80AndSm90) {
  const rules::Rule &rule = rules::conv2d_rule();
  for (const Entry &e : workload_entries()) {
    if (!e.is_conv2d()) continue;  // the convolutions (tensor cores take them by default)
    for (bool full : {false, true}) {
      ir::PrimFunc f =
          full ? analysis::specialize(load_func(e), e.specialized(e.full)) : small_workload(e).func;
      auto m = rule.match(f, test_arch());
      ASSERT_TRUE(m) << m.reason();
      auto c = dynamic_cast<const rules::Conv2dConfig &>(*rule.default_config(**m, test_arch()));
      if (!full) {
        c.block_h = 4, c.block_w = 4, c.block_n = 8, c.block_k = 4, c.thread_h = 2, c.thread_w = 1,
        c.thread_n = 4;
        c.vector_b = 2, c.vector_c = 2, c.pad_a = 1, c.pad_b = 2, c.unroll = false;
        c.validate(test_arch());
      }
      expect_compiles(e.name + " " + c.str(), rule.apply(f, **m, c).func());
    }
  }
}

TEST(Conv2dCompile, ImplicitGemmCompilesForSm80AndSm90) {
  const rules::Rule &rule = rules::conv2d_rule();
  for (const Entry &e : workload_entries()) {
    if (!e.is_conv2d()) continue;  // the convolutions (tensor cores take them by default)
    for (bool full : {false, true}) {
      ir::PrimFunc f =
          full ? analysis::specialize(load_func(e), e.specialized(e.full)) : small_workload(e).func;
      auto m = rule.match(f, test_arch());
      ASSERT_TRUE(m) << m.reason();
      auto c = dynamic_cast<const rules::Conv2dConfig &>(*rule.default_config(**m, test_arch()));
      c.form = rules::Conv2dConfig::kImplicitGemm;
      // Full: 64 x 64 tiles of 4 x 4 per thread, 8-wide vectors along the
      // channels; small: nothing divides (M 198, K 54, N 10), odd pads.
      if (full)
        c.block_m = 64, c.block_n = 64, c.block_k = 32, c.thread_m = 4, c.thread_n = 4, c.vector_a = 1,
        c.vector_b = 8, c.vector_c = 4, c.pad_a = 8, c.pad_b = 0;
      else
        c.block_m = 32, c.block_n = 8, c.block_k = 8, c.thread_m = 4, c.thread_n = 2, c.vector_a = 1,
        c.vector_b = 2, c.vector_c = 2, c.pad_a = 1, c.pad_b = 2, c.unroll = false;
      c.validate(test_arch());
      expect_compiles(e.name + " " + c.str(), rule.apply(f, **m, c).func());
    }
  }
}

}  // namespace
}  // namespace tessera::test
