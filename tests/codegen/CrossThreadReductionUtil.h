//===- tests/codegen/CrossThreadReductionUtil.h - What its tests check ------===//
//
// Shared by CrossThreadReductionTest.cpp and CrossThreadReductionAroundTest.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "SimtEmulator.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"

namespace tessera::test {

inline std::string cuda_of(const ir::PrimFunc &f) { return codegen::codegen_cuda(f); }

inline int count(const std::string &text, const std::string &needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

/// Emulates the lowered kernel of `f` on random inputs (all thread blocks);
/// every output must be within the bounds of f's float64 reference.
inline void expect_matches_interpreter(const ir::PrimFunc &f, uint64_t seed = 7) {
  std::vector<runtime::NDArray> actual = runtime::make_random_args(f, {}, seed);
  runtime::Reference expected = runtime::compute_reference(f, actual);
  lower::LoweredFunc kernel = lower::lower(f);
  std::vector<runtime::NDArray *> args;
  for (runtime::NDArray &a : actual) args.push_back(&a);
  try {
    simt::emulate(kernel, args);
  } catch (const simt::EmulationError &e) {
    FAIL() << e.what() << "\n" << codegen::codegen_cuda(kernel);
  }
  for (const runtime::OutputCheck &c : runtime::check_outputs(f, actual, expected))
    EXPECT_TRUE(c.ok) << c.str() << "\n" << codegen::codegen_cuda(kernel);
}

}  // namespace tessera::test
