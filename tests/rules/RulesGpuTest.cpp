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
#include "tessera/rules/Fallback.h"
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
  Arch arch = Arch::detect();
  rules::DefaultSchedule best = rules::apply_default_schedule(f, arch);

  std::mt19937_64 rng(11);
  std::vector<runtime::NDArray> got = runtime::make_random_args(f, dims, 5);
  prepare_inputs(e, got, rng);
  tune::ComputedReference want = tune::reference_for(f, got, dims, arch);
  runtime::CudaFunction::build(best.func).run(got);
  expect_outputs_match(e.name + " (rule " + best.rule + ", reference: " + want.how + ")", f, got, want.ref);
}

INSTANTIATE_TEST_SUITE_P(Corpus, WorkloadFullSizeGpuTest, ::testing::ValuesIn(workload_entries()),
                         [](const auto &info) { return info.param.name; });

}  // namespace
}  // namespace tessera::test
