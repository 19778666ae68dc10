//===- IRTestUtil.h - Shared assertions for IR tests ------------------------===//
//
// The two checks most IR tests make: "this function is the expected one"
// (structural equality, with a readable diff on failure) and "these two
// functions compute the same thing" (both run through the interpreter on the
// same random inputs).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/NDArray.h"

namespace tessera::test {

/// Passes when `a` and `b` are structurally equal (ir::structural_equal). On
/// failure the message gives the first difference (ir::structural_diff) and
/// both functions printed as TVMScript, headed by `a_label` and `b_label`:
///   EXPECT_TRUE(structurally_equal_with_diff(built, script::parse_func(text), "built", "expected"));
::testing::AssertionResult structurally_equal_with_diff(const ir::PrimFunc &a, const ir::PrimFunc &b,
                                                        std::string_view a_label = "first",
                                                        std::string_view b_label = "second");

/// The arguments of two functions after each ran on the same random inputs.
struct RandomRuns {
  std::vector<runtime::NDArray> a, b;
};

/// Runs `a` and `b` through the interpreter, each on
/// runtime::make_random_args(f, dims, seed), so both see the same values when
/// they take the same parameters. Returns each one's arguments after its run.
RandomRuns run_on_same_random_args(const ir::PrimFunc &a, const ir::PrimFunc &b,
                                   const runtime::DimBindings &dims, uint64_t seed);

/// Passes when `a` and `b` hold as many arrays and each pair is
/// runtime::allclose(rtol, atol); the message names every argument that differs.
::testing::AssertionResult all_close(const std::vector<runtime::NDArray> &a, const std::vector<runtime::NDArray> &b,
                                     double rtol, double atol);

}  // namespace tessera::test
