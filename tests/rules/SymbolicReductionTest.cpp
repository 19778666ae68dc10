//===- tests/rules/SymbolicReductionTest.cpp - Reductions over symbolic axes -===//
//
// Issue 39: the norms and reductions TVM's legalization prints with a
// symbolic reduced axis (data/tvm_symbolic/: sum, mean, max over rows, a sum
// to a scalar, rms_norm, layer_norm with its two-output reduction block).
// The default schedule keeps the function's numbers at small sizes (the
// interpreter against the float64 reference) and, label `nvrtc`, its CUDA C
// compiles for sm_90 with the sizes left symbolic, spilling nothing.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <filesystem>

#include "RuleTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

std::vector<std::string> programs() {
  std::vector<std::string> out;
  for (const auto &e : std::filesystem::directory_iterator(std::string(TESSERA_SOURCE_DIR) + "/tests/rules/data/tvm_symbolic"))
    out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SymbolicReduction, TheDefaultScheduleKeepsTheNumbersAndCompiles) {
  const std::vector<std::string> files = programs();
  ASSERT_EQ(files.size(), 6u);
  for (const std::string &file : files) {
    SCOPED_TRACE(file);
    ir::PrimFunc f = script::parse_file(file).funcs.at(0);
    ASSERT_FALSE(f.shape_vars().empty());
    rules::DefaultSchedule s = rules::apply_default_schedule(f, test_arch());
    EXPECT_TRUE(s.rule == "reduction" || s.rule == "general_reduction") << s.rule;
    // Small sizes, odd ones: every thread's tail is exercised.
    runtime::DimBindings dims;
    for (const ir::Var &v : f.shape_vars()) dims[v.name()] = v.name() == "n" ? 5 : 37;
    std::vector<runtime::NDArray> want = runtime::make_random_args(f, dims, 2), got = want;
    runtime::Reference ref = runtime::compute_reference(f, want);
    runtime::interpret(analysis::specialize(s.func, dims), got);
    expect_outputs_match(file, f, got, ref);
    try {
      std::vector<runtime::CudaFunction> fns = runtime::CudaFunction::build_for_archs(s.func, {"sm_90"});
      for (const runtime::KernelResources &k : fns.at(0).compiled().kernels)
        EXPECT_EQ(k.spill_stores + k.spill_loads, 0) << k.name;
    } catch (const UserError &e) {
      ADD_FAILURE() << e.what() << "\n" << script::print(s.func);
    }
  }
}

}  // namespace
}  // namespace tessera::test
