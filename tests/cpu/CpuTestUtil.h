//===- tests/cpu/CpuTestUtil.h - What the CPU schedule tests check ---------===//
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../support/SameBits.h"
#include "tessera/ir/Functor.h"

namespace tessera::cpu::test {

/// The kinds of the loops of `f`, in pre-order ("parallel", "unroll", ...).
inline std::vector<std::string> loop_kinds(const ir::PrimFunc &f) {
  std::vector<std::string> kinds;
  ir::pre_order_visit(f.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *l = s.as<ir::For>()) kinds.push_back(ir::for_kind_name(l->for_kind));
  });
  return kinds;
}

using tessera::test::expect_same_bits;

}  // namespace tessera::cpu::test
