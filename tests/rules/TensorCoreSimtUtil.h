//===- tests/rules/TensorCoreSimtUtil.h - Tensor-core kernels on the emulator ===//
//
// emulate(): a scheduled tensor-core GEMM lowered and run by the SIMT
// emulator (tests/codegen/SimtEmulator.h) on random inputs, checked against
// the float64 reference of its unscheduled program; shared by the mma.sync
// and the wgmma tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "../codegen/SimtEmulator.h"
#include "tessera/lower/Lower.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"

namespace tessera::test {

/// Emulates `scheduled` (lowered) on random inputs of `f` at `dims`; returns
/// the checks against the float64 reference, or the emulator's error.
inline std::vector<runtime::OutputCheck> emulate(const ir::PrimFunc &f, const ir::PrimFunc &scheduled,
                                          const runtime::DimBindings &dims, std::string *error) {
  lower::LoweredFunc kernel = lower::lower(scheduled);
  std::vector<runtime::NDArray> expected = runtime::make_random_args(f, dims, 9);
  std::vector<runtime::NDArray> actual = expected;
  runtime::Reference reference = runtime::compute_reference(f, expected);
  // Scalar parameters (symbolic M) are part of the kernel's signature after the buffers.
  std::vector<runtime::NDArray *> args;
  for (runtime::NDArray &a : actual) args.push_back(&a);
  std::vector<runtime::NDArray> scalars;
  for (size_t p = args.size(); p < kernel.params.size(); ++p) {
    const ir::Var &v = kernel.params[p].var;
    runtime::NDArray s(v.dtype(), {});
    s.set_int(0, dims.at(v.name()));
    scalars.push_back(s);
  }
  for (runtime::NDArray &s : scalars) args.push_back(&s);
  try {
    simt::emulate(kernel, args);
  } catch (const simt::EmulationError &e) {
    *error = e.what();
    return {};
  }
  return runtime::check_outputs(f, actual, reference);
}

}  // namespace tessera::test
