//===- tessera/ir/Tma.h - Hopper's tensor copies: boxes and their rules ----===//
//
// What T.tma_load (ir/Intrinsics.def) means, in one place for the
// interpreter, the SIMT emulator, the CUDA code generator and the host that
// encodes the tensor map (runtime/TensorMap.h).
//
// A tiled TMA copy moves a box of a global tensor (row-major, contiguous,
// at most 5 dimensions) into shared memory:
//   - the box is written row-major (its last extent fastest), densely;
//   - with a swizzle of S = 32, 64 or 128 bytes, each 16-byte chunk of the
//     shared address is XORed with the address's S-byte row within the
//     8-row pattern (ir/Wgmma.h's swizzle of the whole address, the same
//     that wgmma's K-major layouts read), so a box row must be S bytes;
//   - elements whose coordinates fall outside the tensor are zero; the
//     copy still counts every byte of the box towards its mbarrier.
//
// The limits are those of cuTensorMapEncodeTiled (CUDA driver API, cuda.h)
// and cp.async.bulk.tensor (PTX ISA): box extents 1..256, a box row a
// multiple of 16 bytes, tensor strides multiples of 16 bytes below 2^40,
// the shared destination 128-byte aligned (a swizzled one on its pattern:
// 8 rows of S bytes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::ir::tma {

/// The most dimensions a tensor map describes (support/TensorMapLimits.h).
inline constexpr int kMaxDims = 5;
/// The largest box extent along any dimension.
inline constexpr int64_t kMaxBoxExtent = 256;

/// The box one T.tma_load copies.
struct Box {
  std::vector<int64_t> extent;  ///< outermost first, as the tensor's dimensions
  int swizzle_bytes = 0;        ///< 0 (none), 32, 64 or 128
  int elem_bytes = 1;

  int64_t elements() const;
  /// Every byte of the box, the count its mbarrier expects.
  int64_t bytes() const { return elements() * elem_bytes; }
  /// Bytes of one row (the last extent).
  int64_t row_bytes() const { return extent.empty() ? 0 : extent.back() * elem_bytes; }
  /// The alignment the shared destination needs, in bytes.
  int64_t alignment() const { return swizzle_bytes == 0 ? 128 : 8 * swizzle_bytes; }
  /// Empty when the box can be copied, else why not.
  std::string check() const;
  /// Where element `index` (one coordinate per extent, within the box)
  /// lands: the byte address `start` + its row-major offset, swizzled.
  /// `start` counts from a base aligned to 1024 bytes.
  int64_t shared_address(int64_t start, const int64_t *index) const;
  /// Calls `fn(index, source)` for every element of the box that starts at
  /// coordinates `first` (one per dimension) of a row-major tensor of
  /// `shape`, in row-major order: `index` its place in the box, `source` its
  /// element offset in the tensor, or -1 where it falls outside (a zero).
  template <typename Fn>
  void for_each_element(const int64_t *first, const std::vector<int64_t> &shape, Fn &&fn) const {
    const size_t n = extent.size();
    int64_t index[kMaxDims] = {};
    for (int64_t i = 0, count = elements(); i < count; ++i) {
      int64_t source = 0;
      bool inside = true;
      for (size_t d = 0; d < n; ++d) {
        const int64_t c = first[d] + index[d];
        inside = inside && c >= 0 && c < shape[d];
        source = source * shape[d] + c;
      }
      fn(static_cast<const int64_t *>(index), inside ? source : int64_t{-1});
      for (size_t d = n; d-- > 0 && ++index[d] == extent[d];) index[d] = 0;
    }
  }
};

/// Empty when a row-major tensor of `shape` with `elem_bytes`-byte
/// elements can be described by a tensor map, else why not (too many
/// dimensions, an empty or too large dimension, a stride not a multiple of
/// 16 bytes): support::tensor_map_shape_problem, the rule the driver layer
/// checks too.
std::string check_tensor(const std::vector<int64_t> &shape, int elem_bytes);

}  // namespace tessera::ir::tma
