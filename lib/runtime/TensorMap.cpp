//===- lib/runtime/TensorMap.cpp - Tensor maps for T.tma_load, host side ---===//
#include "tessera/runtime/TensorMap.h"

#include <cstring>
#include <optional>

#include "DriverApi.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/support/TensorMapLimits.h"

namespace tessera::runtime {

namespace {

/// "the tensor 'A'" or "a tensor", for messages.
std::string describe(const std::string &tensor) {
  return tensor.empty() ? std::string("a tensor") : "the tensor '" + tensor + "'";
}

std::string shape_str(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

TensorMapSwizzle swizzle_of(int swizzle_bytes) {
  switch (swizzle_bytes) {
    case 0: return TensorMapSwizzle::None;
    case 32: return TensorMapSwizzle::Bytes32;
    case 64: return TensorMapSwizzle::Bytes64;
    case 128: return TensorMapSwizzle::Bytes128;
  }
  throw UserError("a tensor map swizzles 0, 32, 64 or 128 bytes, not " + std::to_string(swizzle_bytes));
}

}  // namespace

TensorMapEncoding tensor_map_encoding(const TensorMapBox &box, const std::vector<int64_t> &shape,
                                      const std::string &tensor) {
  const std::string what = "the tensor map of " + describe(tensor) + " of shape " + shape_str(shape);
  if (std::string bad = support::tensor_map_shape_problem(shape, box.element_bytes); !bad.empty())
    throw UserError(what + ": " + bad);
  if (box.extent.size() != shape.size())
    throw UserError(what + ": the box has " + std::to_string(box.extent.size()) + " dimensions, the tensor " +
                    std::to_string(shape.size()) + "; a tensor map's box has one extent per dimension");
  TensorMapEncoding e;
  e.tensor = tensor;
  e.data_type = box.data_type;
  e.rank = static_cast<uint32_t>(shape.size());
  // The driver takes every array innermost dimension first.
  uint64_t stride = static_cast<uint64_t>(box.element_bytes);
  for (size_t d = shape.size(); d-- > 0;) {
    e.global_dim.push_back(static_cast<uint64_t>(shape[d]));
    e.box_dim.push_back(static_cast<uint32_t>(box.extent[d]));
    e.element_strides.push_back(1);
    // The stride of the dimension outside this one (none for the outermost).
    stride *= static_cast<uint64_t>(shape[d]);
    if (d > 0) e.global_strides.push_back(stride);
  }
  e.interleave = TensorMapInterleave::None;
  e.swizzle = swizzle_of(box.swizzle_bytes);
  // L2 fills of 128 bytes: a swizzled box row is at most 128 bytes (the
  // swizzle span) and an unswizzled one is usually a multiple of it, so one
  // fill serves one box row and nothing past it is fetched at the tensor's
  // edges. 256 might serve the next box along a row as well; that is a
  // tuning question for measurements, not a correctness one.
  e.l2_promotion = TensorMapL2Promotion::Bytes128;
  // Zeros outside the tensor: what the interpreter and the emulator model.
  e.oob_fill = TensorMapOobFill::None;
  return e;
}

std::array<unsigned char, kTensorMapBytes> encode_tensor_map(const TensorMapEncoding &encoding,
                                                             uint64_t device_pointer, int device) {
  const std::string what = "the tensor map of " + describe(encoding.tensor);
  if (device_pointer % kTensorMapAddressAlignment != 0)
    throw UserError(what + ": its device address " + std::to_string(device_pointer) + " is not " +
                    std::to_string(kTensorMapAddressAlignment) + "-byte aligned, as TMA requires");
  TESSERA_ICHECK(encoding.rank >= 1 && encoding.global_dim.size() == encoding.rank &&
                 encoding.box_dim.size() == encoding.rank && encoding.element_strides.size() == encoding.rank &&
                 encoding.global_strides.size() == encoding.rank - 1)
      << "a malformed TensorMapEncoding (use tensor_map_encoding)";
  Device::get(device);  // RuntimeError without a usable driver
  const detail::cu::Api &api = detail::cu::api();
  if (!api.cuTensorMapEncodeTiled)
    throw UserError(what + ": the CUDA driver " + std::to_string(driver_version() / 1000) + "." +
                    std::to_string(driver_version() % 1000 / 10) +
                    " lacks cuTensorMapEncodeTiled; kernels with T.tma_load need a CUDA 12.0 driver or later");
  // cuda.h declares CUtensorMap 128-byte aligned (the driver documents 64).
  alignas(128) unsigned char map[kTensorMapBytes] = {};
  detail::cu::check(
      api.cuTensorMapEncodeTiled(map, static_cast<int>(encoding.data_type), encoding.rank,
                                 reinterpret_cast<void *>(static_cast<uintptr_t>(device_pointer)),
                                 encoding.global_dim.data(),
                                 encoding.global_strides.empty() ? nullptr : encoding.global_strides.data(),
                                 encoding.box_dim.data(), encoding.element_strides.data(),
                                 static_cast<int>(encoding.interleave), static_cast<int>(encoding.swizzle),
                                 static_cast<int>(encoding.l2_promotion), static_cast<int>(encoding.oob_fill)),
      "cuTensorMapEncodeTiled", "(" + what + ")");
  std::array<unsigned char, kTensorMapBytes> out;
  std::memcpy(out.data(), map, kTensorMapBytes);
  return out;
}

}  // namespace tessera::runtime
