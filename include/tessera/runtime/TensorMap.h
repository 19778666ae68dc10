//===- tessera/runtime/TensorMap.h - Tensor maps for T.tma_load, host side -===//
//
// A kernel with T.tma_load (ir/Tma.h) takes one 128-byte CUtensorMap per
// entry of lower::tensor_map_params, after its other parameters. The host
// fills each from the array bound to the tensor's buffer parameter, in two
// steps:
//
//   TensorMapBox box{TensorMapDataType::Float16, 2, {64, 64}, 128};
//   TensorMapEncoding e = tensor_map_encoding(box, {100, 200}, "A");
//   // pure: e.global_dim == {200, 100}, e.global_strides == {400}, ...
//   std::array<unsigned char, 128> map = encode_tensor_map(e, buffer.ptr());
//   args.raw(map.data(), map.size(), kTensorMapAlignment);
//
// tensor_map_encoding computes every argument of cuTensorMapEncodeTiled but
// the address, needs no driver and is what the unit tests check;
// encode_tensor_map calls the driver (CudaDriver.h). The enum values are
// cuda.h's (DriverApiCheck.cpp compares them whenever the toolkit is present).
// The box of an IR copy (ir::tma::Box and a dtype) is runtime/TmaEncoding.h's.
//
// Errors: UserError for a tensor or box a tensor map cannot describe (the
// reason, and the tensor's name when given), a device pointer not 16-byte
// aligned, or a driver without cuTensorMapEncodeTiled; RuntimeError when
// there is no usable driver or the driver refuses the encoding.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>


namespace tessera::runtime {

/// The size of a CUtensorMap, and the alignment its parameter needs.
inline constexpr size_t kTensorMapBytes = 128;
inline constexpr size_t kTensorMapAlignment = 64;
/// The alignment cuTensorMapEncodeTiled requires of the tensor's address.
inline constexpr uint64_t kTensorMapAddressAlignment = 16;

/// CUtensorMapDataType: the element type TMA copies. Integers are copied as
/// unsigned ones of the same width (a copy moves bits; out-of-bounds
/// elements are zero either way).
enum class TensorMapDataType : int {
  UInt8 = 0,
  UInt16 = 1,
  UInt32 = 2,
  Int32 = 3,
  UInt64 = 4,
  Int64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  BFloat16 = 9,
};

/// CUtensorMapInterleave (tessera only uses None).
enum class TensorMapInterleave : int { None = 0, Bytes16 = 1, Bytes32 = 2 };

/// CUtensorMapSwizzle, for the swizzles ir::tma::Box knows.
enum class TensorMapSwizzle : int { None = 0, Bytes32 = 1, Bytes64 = 2, Bytes128 = 3 };

/// CUtensorMapL2promotion: the granularity at which L2 fills from DRAM.
enum class TensorMapL2Promotion : int { None = 0, Bytes64 = 1, Bytes128 = 2, Bytes256 = 3 };

/// CUtensorMapFloatOOBfill: None fills out-of-bounds elements with zero.
enum class TensorMapOobFill : int { None = 0, NanRequestZeroFma = 1 };

/// Every argument of cuTensorMapEncodeTiled except the map and the address.
/// The arrays are innermost dimension first, as the driver takes them (the
/// reverse of ir::tma::Box::extent and of a tensor's shape).
struct TensorMapEncoding {
  std::string tensor;  ///< the tensor's name, for messages ("" when unknown)
  TensorMapDataType data_type = TensorMapDataType::UInt8;
  uint32_t rank = 0;
  std::vector<uint64_t> global_dim;      ///< rank elements counts
  std::vector<uint64_t> global_strides;  ///< rank - 1 byte strides, of dimensions 1 .. rank-1
  std::vector<uint32_t> box_dim;         ///< rank box extents
  std::vector<uint32_t> element_strides; ///< rank ones: every element of the box
  TensorMapInterleave interleave = TensorMapInterleave::None;
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;
  TensorMapL2Promotion l2_promotion = TensorMapL2Promotion::Bytes128;
  TensorMapOobFill oob_fill = TensorMapOobFill::None;
};

/// What a tensor map copies, besides the tensor's shape: the element type,
/// and the box (outermost extent first) with its swizzle. The compiler side
/// makes it from an IR box (runtime/TensorMapOfBox.h); a kernel package
/// stores it (dispatch/KernelPlan.h).
struct TensorMapBox {
  TensorMapDataType data_type = TensorMapDataType::UInt8;
  int element_bytes = 1;
  std::vector<int64_t> extent;  ///< outermost first, as the tensor's dimensions
  int swizzle_bytes = 0;        ///< 0, 32, 64 or 128
};

/// The encoding of a tensor map that copies `box` out of a row-major,
/// contiguous tensor of `shape` (outermost first). No driver is needed.
/// UserError, naming `tensor` when given, when the tensor cannot be described
/// (support::tensor_map_shape_problem: e.g. rows not a multiple of 16 bytes)
/// or the box and the tensor differ in rank.
TensorMapEncoding tensor_map_encoding(const TensorMapBox &box, const std::vector<int64_t> &shape,
                                      const std::string &tensor = "");

/// The 128-byte CUtensorMap for `encoding` over the tensor at
/// `device_pointer` on `device` (whose primary context is made current).
/// UserError when the pointer is not 16-byte aligned (checked before the
/// driver is touched) or the driver lacks cuTensorMapEncodeTiled;
/// RuntimeError when there is no usable driver, or naming
/// cuTensorMapEncodeTiled and the CUresult when the driver refuses.
std::array<unsigned char, kTensorMapBytes> encode_tensor_map(const TensorMapEncoding &encoding,
                                                             uint64_t device_pointer, int device = 0);

}  // namespace tessera::runtime
