//===- tests/rules/TensorCoreSimtUtil.h - Tensor-core kernels on the emulator ===//
//
// emulate(): a scheduled tensor-core GEMM lowered and run by the SIMT
// emulator (tests/codegen/SimtEmulator.h) on random inputs, checked against
// the float64 reference of its unscheduled program; shared by the mma.sync
// and the wgmma tests. expect_emulated() does the same for a rule applied
// at a config; count_calls() counts an intrinsic in a scheduled function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "../codegen/SimtEmulator.h"
#include "TensorCoreTestUtil.h"
#include "tessera/ir/Functor.h"
#include "tessera/lower/Lower.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"

namespace tessera::test {

/// Emulates `scheduled` (lowered) on random inputs of `f` at `dims`; returns
/// the checks against the float64 reference, or the emulator's error.
inline std::vector<runtime::OutputCheck> emulate(const ir::PrimFunc &f, const ir::PrimFunc &scheduled,
                                          const runtime::DimBindings &dims, std::string *error) {
  return simt::emulate_and_check(f, lower::lower(scheduled), dims, 9, error);
}

/// `f` scheduled by the tensor-core rule at `config` runs in the emulator to
/// the reference at `dims`; the scheduled function.
inline ir::PrimFunc expect_emulated(const ir::PrimFunc &f, const rules::TensorCoreConfig &config,
                                    const runtime::DimBindings &dims) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  auto m = rule.match(f, test_arch());
  EXPECT_TRUE(m) << m.reason();
  if (!m) return f;
  ir::PrimFunc scheduled = rule.apply(f, **m, config).func();
  std::string error;
  std::vector<runtime::OutputCheck> checks = emulate(f, scheduled, dims, &error);
  EXPECT_EQ(error, "");
  if (error.empty()) expect_ok(checks);
  return scheduled;
}

/// How many calls of `op` the scheduled function makes.
inline int count_calls(const ir::PrimFunc &f, ir::Intrinsic op) {
  int n = 0;
  ir::pre_order_visit(
      f.body(), [&](const ir::Expr &e) { n += e.as<ir::Call>() && e.as<ir::Call>()->op == op; }, {});
  return n;
}

}  // namespace tessera::test
