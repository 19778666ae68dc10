//===- lib/runtime/TmaEncoding.cpp - The tensor map of an IR copy ----------===//
#include "tessera/runtime/TmaEncoding.h"

#include <optional>

#include "tessera/support/Error.h"

namespace tessera::runtime {

namespace {

/// "the tensor 'A'" or "a tensor", for messages.
std::string describe(const std::string &tensor) {
  return tensor.empty() ? std::string("a tensor") : "the tensor '" + tensor + "'";
}

/// The tensor-map type of `dtype`, or none.
std::optional<TensorMapDataType> data_type_of(ir::DataType dtype) {
  if (dtype.lanes() == 1) {
    switch (dtype.code()) {
      case ir::TypeCode::Float:
        if (dtype.bits() == 16) return TensorMapDataType::Float16;
        if (dtype.bits() == 32) return TensorMapDataType::Float32;
        if (dtype.bits() == 64) return TensorMapDataType::Float64;
        break;
      case ir::TypeCode::BFloat:
        if (dtype.bits() == 16) return TensorMapDataType::BFloat16;
        break;
      // A copy moves bits: signed integers without a signed type of their
      // width go as unsigned ones (there is no INT8 or INT16 in cuda.h).
      case ir::TypeCode::Int:
        if (dtype.bits() == 8) return TensorMapDataType::UInt8;
        if (dtype.bits() == 16) return TensorMapDataType::UInt16;
        if (dtype.bits() == 32) return TensorMapDataType::Int32;
        if (dtype.bits() == 64) return TensorMapDataType::Int64;
        break;
      case ir::TypeCode::UInt:
        if (dtype.bits() == 8) return TensorMapDataType::UInt8;
        if (dtype.bits() == 16) return TensorMapDataType::UInt16;
        if (dtype.bits() == 32) return TensorMapDataType::UInt32;
        if (dtype.bits() == 64) return TensorMapDataType::UInt64;
        break;
      case ir::TypeCode::Bool:
      case ir::TypeCode::Handle:
        break;
    }
  }
  return std::nullopt;
}

std::string unsupported_type(ir::DataType dtype) {
  return "TMA cannot copy elements of type " + dtype.str() +
         ": a tensor map holds 8-, 16-, 32- or 64-bit integers, float16, bfloat16, float32 or float64";
}

}  // namespace

TensorMapDataType tensor_map_data_type(ir::DataType dtype) {
  if (auto t = data_type_of(dtype)) return *t;
  throw UserError(unsupported_type(dtype));
}

TensorMapBox tensor_map_box(const ir::tma::Box &box, ir::DataType dtype, const std::string &tensor) {
  const std::string what = "T.tma_load from " + describe(tensor) + " of type " + dtype.str();
  std::optional<TensorMapDataType> type = data_type_of(dtype);
  if (!type) throw UserError(what + ": " + unsupported_type(dtype));
  if (std::string bad = box.check(); !bad.empty()) throw UserError(what + ": " + bad);
  if (box.elem_bytes != dtype.bytes())
    throw UserError(what + ": the box is of " + std::to_string(box.elem_bytes) + "-byte elements, the tensor's are " +
                    std::to_string(dtype.bytes()) + " bytes");
  return {*type, dtype.bytes(), box.extent, box.swizzle_bytes};
}

TensorMapEncoding tensor_map_encoding(const ir::tma::Box &box, ir::DataType dtype, const std::vector<int64_t> &shape,
                                      const std::string &tensor) {
  std::string shape_text = "(";
  for (size_t i = 0; i < shape.size(); ++i) shape_text += (i ? ", " : "") + std::to_string(shape[i]);
  shape_text += shape.size() == 1 ? ",)" : ")";
  const std::string what = "T.tma_load from " + describe(tensor) + " of shape " + shape_text + " and type " +
                           dtype.str();
  if (!data_type_of(dtype)) throw UserError(what + ": " + unsupported_type(dtype));
  const int elem_bytes = dtype.bytes();
  if (std::string bad = box.check(); !bad.empty()) throw UserError(what + ": " + bad);
  if (std::string bad = ir::tma::check_tensor(shape, elem_bytes); !bad.empty()) throw UserError(what + ": " + bad);
  if (box.extent.size() != shape.size())
    throw UserError(what + ": the box has " + std::to_string(box.extent.size()) + " dimensions, the tensor " +
                    std::to_string(shape.size()) + "; a tensor map's box has one extent per dimension");
  if (box.elem_bytes != elem_bytes)
    throw UserError(what + ": the box is of " + std::to_string(box.elem_bytes) + "-byte elements, the tensor's are " +
                    std::to_string(elem_bytes) + " bytes");
  // Every rule checked: the driver layer fills in the dimensions and strides.
  return tensor_map_encoding(tensor_map_box(box, dtype, tensor), shape, tensor);
}

}  // namespace tessera::runtime
