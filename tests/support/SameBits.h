//===- tests/support/SameBits.h - A schedule keeps the program's bits -------===//
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tessera/runtime/Interpreter.h"

namespace tessera::test {

/// `scheduled` leaves exactly the bytes `original` leaves, in the interpreter,
/// on the same random inputs.
inline void expect_same_bits(const ir::PrimFunc &original, const ir::PrimFunc &scheduled,
                             const runtime::DimBindings &dims = {}, uint64_t seed = 9) {
  std::vector<runtime::NDArray> want = runtime::make_random_args(original, dims, seed), got = want;
  runtime::interpret(original, want);
  runtime::interpret(scheduled, got);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].nbytes(), got[i].nbytes());
    if (want[i].nbytes() == 0) continue;  // an empty array's data may be null: no memcmp (UBSan)
    EXPECT_EQ(std::memcmp(want[i].data(), got[i].data(), want[i].nbytes()), 0) << "argument " << i;
  }
}

}  // namespace tessera::test
