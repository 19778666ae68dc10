//===- tests/rules/ReductionCompileTest.cpp - Reduction kernels compile ------===//
//
// Label `nvrtc`: the reduction and general_reduction rules' schedules (the
// default config and configs whose splits do not divide the small sizes,
// shared and local per-row values, serial and cross-thread reductions) lower
// and compile with NVRTC for sm_80 and sm_90. Label `gpu` (same binary,
// skips without a device): they also run and match the interpreter.
//
//===----------------------------------------------------------------------===//
#include "ReductionCases.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

class ReductionCompileTest : public ::testing::TestWithParam<ReductionCase> {};

TEST_P(ReductionCompileTest, CompilesForSm80AndSm90) {
  const ReductionCase &c = GetParam();
  SmallWorkload w = small_workload(find_entry(c.workload));
  ir::PrimFunc f = c.scheduled(w);
  try {
    auto fns = runtime::CudaFunction::build_for_archs(f, {"sm_80", "sm_90"});
    ASSERT_EQ(fns.size(), 2u);
    // Per-row values in "local" memory cost nothing: every access uses the
    // row's index, so the CUDA compiler keeps them in registers.
    for (const auto &fn : fns) {
      EXPECT_FALSE(fn.compiled().cubin.empty()) << fn.arch();
      for (const runtime::KernelResources &k : fn.compiled().kernels) {
        EXPECT_EQ(k.spill_stores + k.spill_loads, 0) << fn.arch() << " " << k.name;
        if (c.local()) {
          EXPECT_EQ(k.stack_bytes, 0) << fn.arch() << " " << k.name << "\n" << fn.source();
        }
      }
    }
  } catch (const UserError &err) {
    FAIL() << err.what() << "\n" << script::print(f);
  }
}

TEST_P(ReductionCompileTest, MatchesTheInterpreterOnTheGpu) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  const ReductionCase &c = GetParam();
  const Entry &e = find_entry(c.workload);
  SmallWorkload w = small_workload(e);
  runtime::CudaFunction fn = runtime::CudaFunction::build(c.scheduled(w));
  std::mt19937_64 rng(11);
  std::vector<runtime::NDArray> want = runtime::make_random_args(w.func, w.dims, 5);
  prepare_inputs(e, want, rng);
  std::vector<runtime::NDArray> got = want;
  runtime::Reference ref = runtime::compute_reference(w.func, want);
  fn.run(got);
  expect_outputs_match(c.workload, w.func, got, ref);
}

INSTANTIATE_TEST_SUITE_P(Reductions, ReductionCompileTest, ::testing::ValuesIn(reduction_cases()),
                         reduction_case_name);

/// Symbolic sizes at the default configs: symbolic reductions (kept within
/// one thread), symbolic rows of the general reductions (their per-row
/// values compacted by lowering to what one thread block touches).
TEST(ReductionRules, SymbolicSizesCompileForSm80AndSm90) {
  std::vector<std::pair<const rules::Rule *, ir::PrimFunc>> funcs;
  for (const char *w : {"reduce_sum_f32", "reduce_max_f16", "reduce_sum_outer_f32", "gemv_f16", "gemv_int4"})
    funcs.emplace_back(&rules::reduction_rule(), load_func(find_entry(w)));
  for (const char *w : {"softmax_f16", "rmsnorm_f16", "layernorm_f16"})
    funcs.emplace_back(&rules::general_reduction_rule(),
                       analysis::specialize(load_func(find_entry(w)), {{"cols", 4096}}));
  for (const auto &[rule, f] : funcs) {
    auto m = rule->match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    ir::PrimFunc s = rule->apply(f, **m, *rule->default_config(**m, test_arch())).func();
    try {
      for (const auto &fn : runtime::CudaFunction::build_for_archs(s, {"sm_80", "sm_90"}))
        for (const runtime::KernelResources &k : fn.compiled().kernels)
          EXPECT_EQ(k.stack_bytes + k.spill_stores, 0) << fn.arch() << "\n" << fn.source();
    } catch (const UserError &err) {
      ADD_FAILURE() << (*m)->describe() << ": " << err.what() << "\n" << script::print(s);
    }
  }
}

/// Prints every reduction workload's default schedule and its CUDA (run with
/// --gtest_also_run_disabled_tests while developing).
TEST(ReductionRules, DISABLED_PrintDefaultSchedules) {
  for (const char *name : {"reduce_sum_f32", "reduce_max_f16", "reduce_sum_outer_f32", "gemv_f16", "gemv_int4",
                           "softmax_f16", "rmsnorm_f16", "layernorm_f16"}) {
    SmallWorkload w = small_workload(find_entry(name));
    rules::DefaultSchedule s = rules::apply_default_schedule(w.func, test_arch());
    std::cout << "=== " << name << " rule " << s.rule << " " << s.config.dump() << "\n" << script::print(s.func);
    try {
      std::cout << codegen::codegen_cuda(s.func);
    } catch (const UserError &e) {
      std::cout << "codegen: " << e.what() << "\n";
    }
  }
}

}  // namespace
}  // namespace tessera::test
