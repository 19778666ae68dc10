//===- tessera/support/TensorMapLimits.h - Which tensors a tensor map describes ===//
//
// One rule shared by the IR (ir/Tma.h: what T.tma_load may copy from) and the
// driver layer (runtime/TensorMap.h: what cuTensorMapEncodeTiled accepts),
// which stand on no common library but this one: a row-major, contiguous
// tensor of 1 to 5 dimensions, each of 1 to 2^32 elements, whose strides are
// multiples of 16 bytes below 2^40.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::support {

/// The most dimensions a tensor map describes.
inline constexpr int kTensorMapMaxDims = 5;

/// Empty when a tensor map can describe a row-major, contiguous tensor of
/// `shape` (outermost first) and `elem_bytes`-byte elements; else why not.
std::string tensor_map_shape_problem(const std::vector<int64_t> &shape, int elem_bytes);

}  // namespace tessera::support
