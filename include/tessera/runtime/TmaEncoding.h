//===- tessera/runtime/TmaEncoding.h - The tensor map of an IR copy --------===//
//
// The compiler side of runtime/TensorMap.h: what T.tma_load's box (ir/Tma.h)
// and a buffer's dtype become in a tensor map. The driver layer takes the
// result (a TensorMapBox, or a whole TensorMapEncoding) and never sees the IR.
//
//   TensorMapEncoding e = tensor_map_encoding(box, ir::DataType::float16(), {100, 200}, "A");
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/DataType.h"
#include "tessera/ir/Tma.h"
#include "tessera/runtime/TensorMap.h"

namespace tessera::runtime {

/// The element type a tensor map uses for `dtype`; UserError naming the
/// dtype when TMA has none of its width (bool, vectors, sub-byte types).
TensorMapDataType tensor_map_data_type(ir::DataType dtype);

/// What a tensor map copies for `box` of a tensor of `dtype`. UserError,
/// naming `tensor` when given, when the box breaks a rule of ir/Tma.h
/// (Box::check), its element size is not the dtype's, or the dtype has no
/// tensor-map type.
TensorMapBox tensor_map_box(const ir::tma::Box &box, ir::DataType dtype, const std::string &tensor = "");

/// The encoding of a tensor map that copies `box` out of a row-major,
/// contiguous tensor of `shape` (outermost first) and `dtype`. No driver is
/// needed. UserError, naming `tensor` when given, when the box breaks a rule
/// of ir/Tma.h, the tensor cannot be described (ir::tma::check_tensor: e.g.
/// rows not a multiple of 16 bytes), the box and the tensor differ in rank
/// or element size, or the dtype has no tensor-map type.
TensorMapEncoding tensor_map_encoding(const ir::tma::Box &box, ir::DataType dtype, const std::vector<int64_t> &shape,
                                      const std::string &tensor = "");

}  // namespace tessera::runtime
