//===- MmaLane.h - One lane's mma.sync, for the interpreter and the JIT ----===//
//
// Private to lib/runtime. What mma.sync adds to the accumulators of one
// lane (ir/MmaFragments.h): for each of its four accumulator elements, the
// sum over K of A(row, k) B(k, col), each operand element read from the
// fragment of the lane that holds it, the products exact in double and
// summed in k order, the sum rounded once into the accumulator's type
// (int32: exact, wrapping). The interpreter's MmaNode and the LLVM JIT's
// compiled mma.sync (tessera_jit_mma) both call it, once the fragment
// offsets are known and checked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

#include "tessera/ir/MmaFragments.h"

namespace tessera::runtime::detail {

/// `a_off[l]` / `b_off[l]`: the element offset of lane l's A / B fragment
/// in `a` / `b` (only the lanes `lane` reads are used); `d_off`: this lane's
/// accumulators in `d`.
void mma_lane(const ir::mma::MmaVariant &v, int lane, uint8_t *d, int64_t d_off, const uint8_t *a,
              const int64_t *a_off, const uint8_t *b, const int64_t *b_off);

}  // namespace tessera::runtime::detail
