//===- tessera/schedule/Intrinsic.h - Tensor intrinsics for tensorize ------===//
//
// A tensor intrinsic is a pair of PrimFuncs with the same buffer parameters
// (same number, dtypes and shapes, in the same order):
//   - `desc` describes what the intrinsic computes, in TensorIR: its root
//     block's body is the computation tensorize matches a block against;
//   - `impl` is what replaces the matched body: any IR over the same
//     buffers (an unrolled sequence, later calls of mma instructions).
// Buffer indices in both are relative to the start of the region the
// program's block touches (desc buffer (4,) matches A[vi, k*4:k*4+4]).
//
//   @T.prim_func                                # desc of "tessera.dot4_f32"
//   def dot4(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"),
//            C: T.Buffer((1,), "float32")):
//       for k in range(4):
//           with T.block("update"):
//               vk = T.axis.reduce(4, k)
//               C[0] = C[0] + A[vk] * B[vk]
//
// The registry is process-wide. "tessera.dot4_f32" (above, with an unrolled
// impl) is built in, as an example and for tests and traces.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/Func.h"

namespace tessera::schedule {

struct TensorIntrin {
  std::string name;
  ir::PrimFunc desc;
  ir::PrimFunc impl;
};

/// Registers an intrinsic. Registering a name again with structurally equal
/// functions does nothing. Throws UserError when the name is taken by other
/// functions or when desc and impl do not have the same buffer parameters.
void register_intrinsic(const std::string &name, const ir::PrimFunc &desc, const ir::PrimFunc &impl);
/// The intrinsic called `name`, or nullptr.
const TensorIntrin *lookup_intrinsic(const std::string &name);
/// The names of all registered intrinsics, sorted.
std::vector<std::string> intrinsic_names();

}  // namespace tessera::schedule
