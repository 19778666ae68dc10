//===- tests/rules/GemmSimtTest.cpp - SIMT GEMM kernels on the emulator -----===//
//
// The SIMT matmul and conv2d rules' kernels lowered and run by the SIMT
// emulator (one CPU thread per GPU thread, barriers, cp.async landing at its
// wait, race checks), against the float64 reference, unpipelined and as 2-
// and 3-stage cp.async pipelines (lower::inject_software_pipeline): at
// shapes that divide no tile, with fewer K steps than stages, symbolic and
// with the sizes bound (where 16-byte runs become one cp.async each); the
// convolution in its direct and implicit-GEMM forms.
//
//===----------------------------------------------------------------------===//
#include "../codegen/SimtEmulator.h"
#include "Conv2dPrograms.h"
#include "RuleTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"
#include "tessera/rules/Conv2d.h"
#include "tessera/rules/Matmul.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

using rules::MatmulConfig;

/// A small tiling: 32 x 64 per block of 8 x 16 threads, K step 16.
MatmulConfig small_tiling(const rules::Match &m, int64_t stages) {
  MatmulConfig c = dynamic_cast<const MatmulConfig &>(*rules::matmul_rule().default_config(m, test_arch()));
  c.block_m = 32, c.block_n = 64, c.block_k = 16, c.thread_m = 4, c.thread_n = 4;
  c.vector_a = c.vector_b = c.vector_c = 0;  // the widest the layouts allow
  c.stages = stages;
  rules::fit_matmul_layout(m, test_arch(), c);
  return c;
}

/// cp.async calls in the lowered kernel, and their widest copy in bytes.
std::pair<int, int64_t> async_copies(const lower::LoweredFunc &k) {
  int n = 0;
  int64_t widest = 0;
  ir::pre_order_visit(k.body, [&](const ir::Expr &e) {
    const auto *c = e.as<ir::Call>();
    if (!c || c->op != ir::Intrinsic::CpAsync) return;
    ++n;
    widest = std::max(widest, ir::as_const_int(c->args[2]).value_or(0));
  }, nullptr);
  return {n, widest};
}

/// Schedules `f` with `c`, emulates its kernel at `dims` and checks it.
lower::LoweredFunc expect_emulation_matches(const ir::PrimFunc &f, const MatmulConfig &c,
                                            const runtime::DimBindings &dims) {
  SCOPED_TRACE(c.str());
  const rules::Rule &rule = rules::matmul_rule();
  auto m = rule.match(f, test_arch());
  EXPECT_TRUE(m) << m.reason();
  if (!m) return {};
  c.validate(test_arch());
  lower::LoweredFunc kernel = lower::lower(rule.apply(f, **m, c).func());
  std::string error;
  std::vector<runtime::OutputCheck> checks = simt::emulate_and_check(f, kernel, dims, 9, &error);
  EXPECT_EQ(error, "") << codegen::codegen_cuda(kernel);
  for (const runtime::OutputCheck &oc : checks) EXPECT_TRUE(oc.ok) << oc.str() << "\n" << codegen::codegen_cuda(kernel);
  return kernel;
}

TEST(MatmulSimt, PipelinedKernelsMatchTheReference) {
  int ran = 0;
  for (const Entry &e : workload_entries()) {
    // The SIMT rule's workloads, and a float16 one it also takes.
    if (e.rule != "matmul" && e.name != "matmul_nn_f16") continue;
    SCOPED_TRACE(e.name);
    ir::PrimFunc f = load_func(e);
    for (int64_t k : {50, 16, 7}) {  // 4 K steps (the last partial), 1, and 1 partial
      runtime::DimBindings dims = {{"m", 37}, {"n", 77}, {"k", k}};
      SCOPED_TRACE("k = " + std::to_string(k));
      auto m = rules::matmul_rule().match(f, test_arch());
      ASSERT_TRUE(m) << m.reason();
      for (int64_t stages : {1, 2, 3}) {
        lower::LoweredFunc kernel = expect_emulation_matches(f, small_tiling(**m, stages), dims);
        EXPECT_EQ(async_copies(kernel).first > 0, stages > 1 && e.name != "matmul_nn_f16")
            << "float32 elements copy asynchronously one by one; symbolic float16 rows are not provably aligned";
        ++ran;
      }
    }
  }
  EXPECT_GE(ran, 4 * 3 * 3);
}

TEST(MatmulSimt, BoundSizesCopyWholeVectors) {
  for (const Entry &e : workload_entries()) {
    if (e.name != "matmul_nn_f32" && e.name != "matmul_nn_f16") continue;
    SCOPED_TRACE(e.name);
    ir::PrimFunc f = analysis::specialize(load_func(e), {{"m", 40}, {"n", 72}, {"k", 48}});
    auto m = rules::matmul_rule().match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    MatmulConfig c = small_tiling(**m, 2);
    lower::LoweredFunc kernel = expect_emulation_matches(f, c, {});
    // Rows of 48 and 72 elements: every tile row starts 16-byte aligned.
    EXPECT_EQ(async_copies(kernel).second, 16) << c.str() << "\n" << codegen::codegen_cuda(kernel);
  }
}

TEST(MatmulSimt, ThePrintedPipelineParsesToTheSameKernel) {
  // What a user pastes: the scheduled TVMScript, its K loop annotated as
  // TVM prints it (T.serial(..., annotations={"software_pipeline_stage": ...})).
  const Entry e = find_entry("matmul_nt_f32");
  ir::PrimFunc f = load_func(e);
  auto m = rules::matmul_rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  ir::PrimFunc scheduled = rules::matmul_rule().apply(f, **m, small_tiling(**m, 3)).func();
  std::string text = script::print(scheduled);
  ASSERT_NE(text.find("annotations={\"software_pipeline_async_stages\": [0], \"software_pipeline_stage\": [0, 0, 2]}"),
            std::string::npos)
      << text;
  ir::PrimFunc parsed = script::parse_func(text);
  lower::LoweredFunc kernel = lower::lower(parsed);
  EXPECT_EQ(codegen::codegen_cuda(kernel), codegen::codegen_cuda(lower::lower(scheduled)));
  std::string error;
  for (const runtime::OutputCheck &c : simt::emulate_and_check(f, kernel, {{"m", 37}, {"n", 77}, {"k", 50}}, 4, &error))
    EXPECT_TRUE(c.ok) << c.str();
  EXPECT_EQ(error, "");
}


/// A strided, dilated float32 convolution (no padding: its tiles copy by
/// cp.async) and the corpus's float16 one (padding 1, gathered with its
/// padding: a plain store).
TEST(Conv2dSimt, PipelinedKernelsMatchTheReference) {
  const rules::Rule &rule = rules::conv2d_rule();
  SmallWorkload corpus = small_workload(find_entry("conv2d_nhwc_f16"));
  for (auto [name, f, dims] : {std::tuple{"strided float32", script::parse_func(kStridedConv2d), runtime::DimBindings{}},
                               {"conv2d_nhwc_f16", corpus.func, corpus.dims}}) {
    SCOPED_TRACE(name);
    auto m = rule.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    auto def = dynamic_cast<const rules::Conv2dConfig &>(*rule.default_config(**m, test_arch()));
    // Direct: 2 x 4 pixels x 8 channels per block, 4 input channels a step;
    // implicit GEMM: 16 x 8, K step 8.
    rules::Conv2dConfig direct = def, implicit = def;
    direct.block_h = 2, direct.block_w = 4, direct.block_n = 8, direct.block_k = 4;
    direct.thread_h = 1, direct.thread_w = 2, direct.thread_n = 2;
    direct.vector_a = direct.vector_b = direct.vector_c = 1, direct.pad_a = direct.pad_b = 0;
    implicit.form = rules::Conv2dConfig::kImplicitGemm;
    implicit.block_m = 16, implicit.block_n = 8, implicit.block_k = 8, implicit.thread_m = 2, implicit.thread_n = 2;
    implicit.vector_a = implicit.vector_b = implicit.vector_c = 1, implicit.pad_a = implicit.pad_b = 0;
    for (rules::Conv2dConfig c : {direct, implicit})
      for (int64_t stages : {1, 2, 3}) {
        c.stages = stages;
        SCOPED_TRACE(c.str());
        c.validate(test_arch());
        lower::LoweredFunc kernel = lower::lower(rule.apply(f, **m, c).func());
        std::string error;
        for (const runtime::OutputCheck &oc : simt::emulate_and_check(f, kernel, dims, 5, &error))
          EXPECT_TRUE(oc.ok) << oc.str() << "\n" << codegen::codegen_cuda(kernel);
        EXPECT_EQ(error, "") << codegen::codegen_cuda(kernel);
        if (stages > 1 && std::string(name) == "strided float32")
          EXPECT_GT(async_copies(kernel).first, 0) << "float32 tiles copy by cp.async";
      }
  }
}

TEST(MatmulSimt, StagesNeedCpAsync) {
  Entry e;
  for (const Entry &x : workload_entries())
    if (x.name == "matmul_nn_f32") e = x;
  ASSERT_FALSE(e.name.empty());
  ir::PrimFunc f = load_func(e);
  auto m = rules::matmul_rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  MatmulConfig c = small_tiling(**m, 2);
  Arch turing = test_arch();
  turing.name = "turing";
  turing.memory.cp_async = false;
  try {
    c.validate(turing);
    ADD_FAILURE() << "validated stages = 2 on a GPU without cp.async";
  } catch (const rules::ConfigError &err) {
    EXPECT_NE(std::string(err.what()).find("stages = 2 needs cp.async, which"), std::string::npos) << err.what();
  }
  c.stages = 5;
  EXPECT_THROW(c.validate(test_arch()), rules::ConfigError);
}

}  // namespace
}  // namespace tessera::test
