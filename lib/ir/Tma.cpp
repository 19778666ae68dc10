//===- lib/ir/Tma.cpp - Hopper's tensor copies: boxes and their rules ------===//
#include "tessera/ir/Tma.h"

#include "tessera/support/TensorMapLimits.h"

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

static_assert(kMaxDims == support::kTensorMapMaxDims, "ir/Tma.h and support/TensorMapLimits.h disagree");

std::string check_tensor(const std::vector<int64_t> &shape, int elem_bytes) {
  return support::tensor_map_shape_problem(shape, elem_bytes);
}

}  // namespace tessera::ir::tma
