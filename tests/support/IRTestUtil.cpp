//===- IRTestUtil.cpp - Shared assertions for IR tests ----------------------===//
#include "IRTestUtil.h"

#include "tessera/ir/StructuralEqual.h"
#include "tessera/script/Printer.h"

namespace tessera::test {

::testing::AssertionResult structurally_equal_with_diff(const ir::PrimFunc &a, const ir::PrimFunc &b,
                                                        std::string_view a_label, std::string_view b_label) {
  if (ir::structural_equal(a, b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "first difference: " << ir::structural_diff(a, b) << "\n--- " << a_label
                                       << ":\n"
                                       << script::print(a) << "\n--- " << b_label << ":\n"
                                       << script::print(b);
}

RandomRuns run_on_same_random_args(const ir::PrimFunc &a, const ir::PrimFunc &b,
                                   const runtime::DimBindings &dims, uint64_t seed) {
  RandomRuns r{runtime::make_random_args(a, dims, seed), runtime::make_random_args(b, dims, seed)};
  runtime::interpret(a, r.a);
  runtime::interpret(b, r.b);
  return r;
}

::testing::AssertionResult all_close(const std::vector<runtime::NDArray> &a, const std::vector<runtime::NDArray> &b,
                                     double rtol, double atol) {
  bool ok = a.size() == b.size();
  ::testing::AssertionResult result = ::testing::AssertionFailure();
  if (!ok) result << a.size() << " arguments vs " << b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (runtime::allclose(a[i], b[i], rtol, atol)) continue;
    if (!ok) result << "; ";
    ok = false;
    result << "argument " << i << " differs";
  }
  return ok ? ::testing::AssertionSuccess() : result;
}

}  // namespace tessera::test
