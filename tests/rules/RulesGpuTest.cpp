//===- tests/rules/RulesGpuTest.cpp - Full-size workloads on the GPU (gpu) --===//
//
// Label `gpu` (skips itself without a device): every workload at its FULL
// size, scheduled by apply_default_schedule, runs on the device and matches
// the same workload scheduled by the fallback alone (the simplest correct
// kernel, one output per thread) on the same random inputs; the interpreter
// is far too slow at these sizes to be the reference.
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"
#include "tessera/rules/Fallback.h"
#include "tessera/runtime/CudaFunction.h"

namespace tessera::test {
namespace {

class WorkloadFullSizeGpuTest : public ::testing::TestWithParam<Entry> {};

TEST_P(WorkloadFullSizeGpuTest, DefaultScheduleMatchesTheFallbackOnTheGpu) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  const Entry &e = GetParam();
  ir::PrimFunc f = analysis::specialize(load_func(e), e.specialized(e.full));
  runtime::DimBindings dims;
  for (const std::string &v : e.symbolic) dims[v] = e.full.at(v);
  Arch arch = Arch::detect();
  rules::DefaultSchedule best = rules::apply_default_schedule(f, arch);
  const rules::Rule &fallback = rules::fallback_rule();
  auto m = fallback.match(f, arch);
  ASSERT_TRUE(m);
  schedule::Schedule naive = fallback.apply(f, **m, *fallback.default_config(**m, arch));

  std::mt19937_64 rng(11);
  std::vector<runtime::NDArray> want = runtime::make_random_args(f, dims, 5);
  prepare_inputs(e, want, rng);
  std::vector<runtime::NDArray> got = want;
  runtime::CudaFunction::build(naive.func()).run(want);
  runtime::CudaFunction::build(best.func).run(got);
  expect_outputs_match(e.name + " (rule " + best.rule + ")", f, got, want);
}

INSTANTIATE_TEST_SUITE_P(Corpus, WorkloadFullSizeGpuTest, ::testing::ValuesIn(workload_entries()),
                         [](const auto &info) { return info.param.name; });

}  // namespace
}  // namespace tessera::test
