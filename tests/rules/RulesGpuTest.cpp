//===- tests/rules/RulesGpuTest.cpp - Full-size workloads on the GPU (gpu) --===//
//
// Label `gpu` (skips itself without a device): every workload at its FULL
// size, scheduled by apply_default_schedule, runs on the device and stays
// within the bounds of the unscheduled workload's float64 reference, itself
// computed on the device by the fallback rule's kernel (tune/Reference.h; the
// interpreter is far too slow at these sizes).
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"
#include "tessera/policies/Policy.h"
#include "tessera/runtime/DetectArch.h"
#include "tessera/rules/Fallback.h"
#include "tessera/rules/Matmul.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/tune/Reference.h"

namespace tessera::test {
namespace {

class WorkloadFullSizeGpuTest : public ::testing::TestWithParam<Entry> {};

TEST_P(WorkloadFullSizeGpuTest, DefaultScheduleMatchesTheReferenceOnTheGpu) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  const Entry &e = GetParam();
  ir::PrimFunc f = analysis::specialize(load_func(e), e.specialized(e.full));
  runtime::DimBindings dims;
  for (const std::string &v : e.symbolic) dims[v] = e.full.at(v);
  Arch arch = runtime::detect_arch();
  rules::DefaultSchedule best = rules::apply_default_schedule(f, arch);

  std::mt19937_64 rng(11);
  std::vector<runtime::NDArray> got = runtime::make_random_args(f, dims, 5);
  prepare_inputs(e, got, rng);
  tuning::ComputedReference want = tuning::reference_for(f, got, dims, arch);
  runtime::CudaFunction::build(best.func).run(got);
  expect_outputs_match(e.name + " (rule " + best.rule + ", reference: " + want.how + ")", f, got, want.ref);
}

// The SIMT matmul's cp.async pipelines (lower::inject_software_pipeline):
// the policy's best pipelined configs, and one of 3 stages, at the full
// size and at sizes that divide no tile.
TEST(SimtMatmulGpu, PipelinedKernelsMatchTheReferenceOnTheGpu) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  Arch arch = runtime::detect_arch();
  if (!arch.memory.cp_async) GTEST_SKIP() << arch.name << " has no cp.async";
  const rules::Rule &rule = rules::matmul_rule();
  for (const char *name : {"matmul_nn_f32", "matmul_nt_f32"})
    for (const runtime::DimBindings &sizes : {runtime::DimBindings{{"m", 2048}, {"n", 2048}, {"k", 2048}},
                                              runtime::DimBindings{{"m", 1000}, {"n", 777}, {"k", 500}}}) {
      const Entry &e = find_entry(name);
      ir::PrimFunc f = analysis::specialize(load_func(e), sizes);
      auto m = rule.match(f, arch);
      ASSERT_TRUE(m) << m.reason();
      std::vector<rules::MatmulConfig> configs;
      for (const policies::Candidate &c : policies::propose(f, rule, **m, arch, {.topk = 20}).candidates) {
        const auto &mc = dynamic_cast<const rules::MatmulConfig &>(*c.config);
        if (mc.stages > 1 && configs.size() < 2) configs.push_back(mc);
      }
      ASSERT_FALSE(configs.empty()) << "the policy proposes no pipeline";
      configs.push_back(configs.front());
      configs.back().stages = 3;
      if (configs.back().shared_bytes() > arch.max_smem_per_block()) configs.pop_back();
      std::mt19937_64 rng(11);
      std::vector<runtime::NDArray> inputs = runtime::make_random_args(f, {}, 5);
      prepare_inputs(e, inputs, rng);
      tuning::ComputedReference want = tuning::reference_for(f, inputs, {}, arch);
      for (const rules::MatmulConfig &c : configs) {
        std::vector<runtime::NDArray> got = inputs;
        runtime::CudaFunction::build(rule.apply(f, **m, c).func()).run(got);
        expect_outputs_match(std::string(name) + " " + c.str(), f, got, want.ref);
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Corpus, WorkloadFullSizeGpuTest, ::testing::ValuesIn(workload_entries()),
                         [](const auto &info) { return info.param.name; });

}  // namespace
}  // namespace tessera::test
