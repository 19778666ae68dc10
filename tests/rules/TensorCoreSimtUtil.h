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
  return simt::emulate_and_check(f, lower::lower(scheduled), dims, 9, error);
}

}  // namespace tessera::test
