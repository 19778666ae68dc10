//===- tests/rules/RulesCompileTest.cpp - Scheduled workloads compile (nvrtc) ===//
//
// Label `nvrtc`: every workload, scheduled by apply_default_schedule at its
// small size, lowers, prints and compiles with NVRTC for sm_80 and sm_90.
// Label `gpu` (same binary, skips without a device): it also runs and
// matches the interpreter.
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"
#include "tessera/rules/Fallback.h"
#include "tessera/runtime/CudaFunction.h"

namespace tessera::test {
namespace {

class WorkloadCompileTest : public ::testing::TestWithParam<Entry> {};

TEST_P(WorkloadCompileTest, DefaultScheduleCompilesForSm80AndSm90) {
  const Entry &e = GetParam();
  SmallWorkload w = small_workload(e);
  rules::DefaultSchedule s = rules::apply_default_schedule(w.func, test_arch());
  try {
    auto fns = runtime::CudaFunction::build_for_archs(s.func, {"sm_80", "sm_90"});
    ASSERT_EQ(fns.size(), 2u);
    for (const auto &fn : fns) EXPECT_FALSE(fn.compiled().cubin.empty()) << fn.arch();
  } catch (const UserError &err) {
    FAIL() << e.name << " (rule " << s.rule << "): " << err.what();
  }
}

/// The fallback alone compiles for every workload (the gpu test at full size
/// uses it as the reference kernel).
TEST_P(WorkloadCompileTest, FallbackScheduleCompilesForSm90) {
  const Entry &e = GetParam();
  SmallWorkload w = small_workload(e);
  const rules::Rule &fallback = rules::fallback_rule();
  auto m = fallback.match(w.func, test_arch());
  ASSERT_TRUE(m);
  schedule::Schedule sch = fallback.apply(w.func, **m, *fallback.default_config(**m, test_arch()));
  try {
    runtime::CudaFunction fn = runtime::CudaFunction::build(sch.func(), {.arch = "sm_90"});
    for (const auto &k : fn.kernels()) EXPECT_FALSE(k.compiled.cubin.empty()) << k.name;
  } catch (const UserError &err) {
    FAIL() << e.name << " (fallback): " << err.what();
  }
}

TEST_P(WorkloadCompileTest, DefaultScheduleMatchesTheInterpreterOnTheGpu) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  const Entry &e = GetParam();
  SmallWorkload w = small_workload(e);
  rules::DefaultSchedule s = rules::apply_default_schedule(w.func, test_arch());
  runtime::CudaFunction fn = runtime::CudaFunction::build(s.func);
  std::mt19937_64 rng(11);
  std::vector<runtime::NDArray> want = runtime::make_random_args(w.func, w.dims, 5);
  prepare_inputs(e, want, rng);
  std::vector<runtime::NDArray> got = want;
  runtime::Reference ref = runtime::compute_reference(w.func, want);
  fn.run(got);
  expect_outputs_match(e.name, w.func, got, ref);
}

INSTANTIATE_TEST_SUITE_P(Corpus, WorkloadCompileTest, ::testing::ValuesIn(workload_entries()),
                         [](const auto &info) { return info.param.name; });

}  // namespace
}  // namespace tessera::test
