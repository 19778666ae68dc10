//===- lib/ir/Tma.cpp - Hopper's tensor copies: boxes and their rules ------===//
#include "tessera/ir/Tma.h"

#include <algorithm>

#include "tessera/ir/Wgmma.h"

namespace tessera::ir::tma {

int64_t Box::elements() const {
  int64_t n = 1;
  for (int64_t e : extent) n *= e;
  return n;
}

std::string Box::check() const {
  if (extent.empty() || static_cast<int>(extent.size()) > kMaxDims)
    return "a box has 1 to " + std::to_string(kMaxDims) + " dimensions, not " + std::to_string(extent.size());
  for (size_t d = 0; d < extent.size(); ++d)
    if (extent[d] < 1 || extent[d] > kMaxBoxExtent)
      return "box extent " + std::to_string(d) + " is " + std::to_string(extent[d]) + "; TMA boxes are 1 to " +
             std::to_string(kMaxBoxExtent) + " elements along each dimension";
  if (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)
    return "the swizzle is " + std::to_string(swizzle_bytes) + " bytes; TMA knows 0 (none), 32, 64 and 128";
  if (row_bytes() % 16 != 0)
    return "a box row is " + std::to_string(row_bytes()) + " bytes; TMA copies rows of a multiple of 16 bytes";
  if (swizzle_bytes != 0 && row_bytes() != swizzle_bytes)
    return "a box row is " + std::to_string(row_bytes()) + " bytes under a " + std::to_string(swizzle_bytes) +
           "-byte swizzle; a swizzled box row must fill the swizzle span exactly";
  return {};
}

int64_t Box::shared_address(int64_t start, const int64_t *index) const {
  int64_t offset = 0;
  for (size_t d = 0; d < extent.size(); ++d) offset = offset * extent[d] + index[d];
  return wgmma::SmemLayout{swizzle_bytes, 0, 0}.swizzle(start + offset * elem_bytes);
}

std::string check_tensor(const std::vector<int64_t> &shape, int elem_bytes) {
  if (shape.empty() || static_cast<int>(shape.size()) > kMaxDims)
    return "a tensor map describes 1 to " + std::to_string(kMaxDims) + " dimensions, not " +
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

}  // namespace tessera::ir::tma
