//===- tests/tune/ReferenceTest.cpp - The device reference, up to the cubin ---===//
//
// tuning::reference_for runs a large workload's reference program (float64
// values and error variances, runtime/Verify.h) on the device as the fallback
// rule schedules it. Without a device everything before the launch is
// checked here, for every workload of the corpus: the fallback accepts the
// reference program, its schedule computes exactly what the unscheduled
// reference program computes (the interpreter, at the small size), and NVRTC
// compiles it for sm_80 and sm_90.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "../workloads/Workloads.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/arch/Arch.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Verify.h"
#include "tessera/tune/Reference.h"

namespace tessera::tuning {
namespace {

class DeviceReference : public ::testing::TestWithParam<test::Entry> {};

TEST_P(DeviceReference, FallbackScheduleOfTheReferenceProgramIsExactAndCompiles) {
  const test::Entry &e = GetParam();
  ir::PrimFunc f = analysis::specialize(test::load_func(e), e.specialized(e.small));
  runtime::DimBindings dims;
  for (const std::string &v : e.symbolic) dims[v] = e.small.at(v);
  Arch arch = Arch::by_name("h100");
  runtime::ReferenceProgram p = runtime::make_reference_program(f);
  const rules::Rule &fallback = *rules::find_rule("fallback");
  auto m = fallback.match(p.func, arch);
  ASSERT_TRUE(m) << m.reason();
  ir::PrimFunc naive = fallback.apply(p.func, **m, *fallback.default_config(**m, arch)).func();

  std::vector<runtime::NDArray> inputs = runtime::make_random_args(f, dims, 4);
  runtime::Reference direct = runtime::compute_reference(f, inputs);
  std::vector<runtime::NDArray> args = runtime::reference_args(p, f, inputs);
  runtime::interpret(naive, args);
  runtime::Reference scheduled = runtime::collect_reference(p, f, std::move(args));
  for (size_t i = 0; i < f.params().size(); ++i) {
    EXPECT_EQ(runtime::max_rel_error(scheduled.values[i], direct.values[i]), 0) << "parameter " << i;
    if (direct.variance[i].numel()) {
      EXPECT_EQ(runtime::max_rel_error(scheduled.variance[i], direct.variance[i]), 0) << "variance " << i;
    }
  }
  // And the same through reference_for, which without a device interprets
  // (told to) or, by default where this build has it, runs the LLVM JIT:
  // the same values either way.
  for (runtime::Oracle oracle : {runtime::Oracle::Interpreter, runtime::Oracle::Auto}) {
    ComputedReference r = reference_for(f, inputs, dims, arch, {.interpreter_limit = 0, .oracle = oracle});
    EXPECT_EQ(r.how, oracle == runtime::Oracle::Auto && runtime::llvm_jit_available() ? "llvm" : "interpreter");
    for (size_t i = 0; i < f.params().size(); ++i)
      EXPECT_EQ(runtime::max_rel_error(r.ref.values[i], direct.values[i]), 0) << "parameter " << i;
  }

  std::vector<runtime::CudaFunction> built = runtime::CudaFunction::build_for_archs(naive, {"sm_80", "sm_90"});
  EXPECT_EQ(built.size(), 2u);
  // Floating-point values are widened to double; an integer program (int8
  // GEMM) is exact as it is.
  bool has_float = false;
  for (const ir::Var &v : f.params())
    if (ir::Buffer b = f.buffer_of(v); b.defined() && b.dtype().is_float()) has_float = true;
  if (has_float) {
    EXPECT_NE(built[0].source().find("double"), std::string::npos) << built[0].source();
  }
}

std::vector<test::Entry> entries() {
  try {
    return test::load_manifest();
  } catch (const std::exception &) {
    return {};
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, DeviceReference, ::testing::ValuesIn(entries()),
                         [](const auto &info) { return info.param.name; });

}  // namespace
}  // namespace tessera::tuning
