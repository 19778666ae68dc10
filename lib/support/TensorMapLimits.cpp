//===- lib/support/TensorMapLimits.cpp - Which tensors a tensor map describes ===//
#include "tessera/support/TensorMapLimits.h"

#include <algorithm>

namespace tessera::support {

std::string tensor_map_shape_problem(const std::vector<int64_t> &shape, int elem_bytes) {
  if (shape.empty() || static_cast<int>(shape.size()) > kTensorMapMaxDims)
    return "a tensor map describes 1 to " + std::to_string(kTensorMapMaxDims) + " dimensions, not " +
           std::to_string(shape.size());
  int64_t stride = elem_bytes;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] < 1 || shape[d] > (int64_t{1} << 32))
      return "dimension " + std::to_string(d) + " is " + std::to_string(shape[d]) +
             "; a tensor map's dimensions are 1 to 2^32";
    if (d + 1 < shape.size() && (stride % 16 != 0 || stride >= (int64_t{1} << 40)))
      return "dimension " + std::to_string(d) + " steps " + std::to_string(stride) +
             " bytes; a tensor map's strides are multiples of 16 bytes below 2^40 (make the rows a multiple of " +
             std::to_string(16 / std::min<int64_t>(16, elem_bytes)) + " elements)";
    stride *= shape[d];
  }
  return {};
}

}  // namespace tessera::support
