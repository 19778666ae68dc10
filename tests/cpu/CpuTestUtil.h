//===- tests/cpu/CpuTestUtil.h - What the CPU schedule tests check ---------===//
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tessera/ir/Functor.h"
#include "tessera/runtime/Interpreter.h"

namespace tessera::cpu::test {

/// The kinds of the loops of `f`, in pre-order ("parallel", "unroll", ...).
inline std::vector<std::string> loop_kinds(const ir::PrimFunc &f) {
  std::vector<std::string> kinds;
  ir::pre_order_visit(f.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *l = s.as<ir::For>()) kinds.push_back(ir::for_kind_name(l->for_kind));
  });
  return kinds;
}

/// `scheduled` leaves exactly the bytes `original` leaves, in the interpreter,
/// on the same random inputs.
inline void expect_same_bits(const ir::PrimFunc &original, const ir::PrimFunc &scheduled,
                             const runtime::DimBindings &dims = {}, uint64_t seed = 9) {
  std::vector<runtime::NDArray> want = runtime::make_random_args(original, dims, seed), got = want;
  runtime::interpret(original, want);
  runtime::interpret(scheduled, got);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].nbytes(), got[i].nbytes());
    EXPECT_EQ(std::memcmp(want[i].data(), got[i].data(), want[i].nbytes()), 0) << "argument " << i;
  }
}

}  // namespace tessera::cpu::test
