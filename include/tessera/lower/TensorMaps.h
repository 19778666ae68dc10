//===- tessera/lower/TensorMaps.h - The tensor maps a kernel takes ---------===//
//
// A kernel with T.tma_load or T.tma_store (ir/Intrinsics.def, ir/Tma.h) takes, after its
// buffer and scalar parameters, one 128-byte tensor map per distinct
// (tensor, box, swizzle) it copies from or into (one map serves both): a `const __grid_constant__` parameter
// the host encodes at launch (cuTensorMapEncodeTiled) from the array bound
// to the tensor's buffer parameter. The code generator, the host that
// launches the kernel and the SIMT emulator derive the list the same way,
// from the lowered body, in first-use order.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <vector>

#include "tessera/ir/Tma.h"
#include "tessera/lower/Lower.h"

namespace tessera::lower {

/// One tensor map parameter.
struct TensorMapParam {
  size_t param = 0;  ///< the tensor's buffer parameter (an index into LoweredFunc::params)
  ir::tma::Box box;
};

/// The box a T.tma_load or T.tma_store copies (its extents and swizzle must
/// be constants: LowerError otherwise, or when the box breaks a rule of
/// ir/Tma.h).
ir::tma::Box tma_box(const ir::Call &copy);
/// The global tensor a T.tma_load reads or a T.tma_store writes.
const ir::Buffer &tma_tensor(const ir::Call &copy);

/// The kernel's tensor maps, in the order of their parameters.
std::vector<TensorMapParam> tensor_map_params(const LoweredFunc &f);

/// The index in `maps` (tensor_map_params(f)) of the map `copy` uses.
size_t tensor_map_of(const std::vector<TensorMapParam> &maps, const LoweredFunc &f, const ir::Call &copy);

}  // namespace tessera::lower
