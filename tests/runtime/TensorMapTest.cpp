//===- TensorMapTest.cpp - The arguments of cuTensorMapEncodeTiled (unit) --===//
//
// tensor_map_encoding (runtime/TensorMap.h) needs no driver: every argument
// the host passes for a T.tma_load tensor map, innermost first, and the
// tensors and boxes a tensor map cannot describe, refused with the reason
// and the tensor's name. encode_tensor_map is checked only as far as it
// goes without a device (a misaligned address, no driver).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tessera/lower/TensorMaps.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/TmaEncoding.h"
#include "tessera/script/Parser.h"
#include "tessera/support/DataPaths.h"

namespace tessera::runtime {
namespace {

using ir::DataType;
using ir::tma::Box;

/// The message of the UserError `fn` throws ("" and a failure when none).
template <typename Fn>
std::string user_error(Fn fn) {
  try {
    fn();
  } catch (const UserError &e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return "";
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

// tests/codegen/hopper/tma_wgmma_nt_f16.py's A: (100, 200) float16, 64 x 64
// boxes under the 128-byte swizzle.
TEST(TensorMapEncoding, TwoDimensionalFloat16WithSwizzle) {
  TensorMapEncoding e = tensor_map_encoding(Box{{64, 64}, 128, 2}, DataType::float16(), {100, 200}, "A");
  EXPECT_EQ(e.tensor, "A");
  EXPECT_EQ(e.data_type, TensorMapDataType::Float16);
  EXPECT_EQ(static_cast<int>(e.data_type), 6);  // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  EXPECT_EQ(e.rank, 2u);
  EXPECT_EQ(e.global_dim, (std::vector<uint64_t>{200, 100}));
  EXPECT_EQ(e.global_strides, (std::vector<uint64_t>{400}));
  EXPECT_EQ(e.box_dim, (std::vector<uint32_t>{64, 64}));
  EXPECT_EQ(e.element_strides, (std::vector<uint32_t>{1, 1}));
  EXPECT_EQ(e.interleave, TensorMapInterleave::None);
  EXPECT_EQ(e.swizzle, TensorMapSwizzle::Bytes128);
  EXPECT_EQ(static_cast<int>(e.swizzle), 3);  // CU_TENSOR_MAP_SWIZZLE_128B
  EXPECT_EQ(e.l2_promotion, TensorMapL2Promotion::Bytes128);
  EXPECT_EQ(e.oob_fill, TensorMapOobFill::None);
}

// Its B: fewer rows (56) than the box (64) is fine: the rest reads as zeros.
TEST(TensorMapEncoding, BoxMayOverhangTheTensor) {
  TensorMapEncoding e = tensor_map_encoding(Box{{64, 64}, 128, 2}, DataType::float16(), {56, 200}, "B");
  EXPECT_EQ(e.global_dim, (std::vector<uint64_t>{200, 56}));
  EXPECT_EQ(e.box_dim, (std::vector<uint32_t>{64, 64}));
}

TEST(TensorMapEncoding, ThreeDimensionalFloat32WithoutSwizzle) {
  TensorMapEncoding e = tensor_map_encoding(Box{{2, 16, 8}, 0, 4}, DataType::float32(), {3, 40, 12});
  EXPECT_EQ(e.data_type, TensorMapDataType::Float32);
  EXPECT_EQ(e.rank, 3u);
  EXPECT_EQ(e.global_dim, (std::vector<uint64_t>{12, 40, 3}));
  // Rows of 12 * 4 = 48 bytes, planes of 40 rows.
  EXPECT_EQ(e.global_strides, (std::vector<uint64_t>{48, 48 * 40}));
  EXPECT_EQ(e.box_dim, (std::vector<uint32_t>{8, 16, 2}));
  EXPECT_EQ(e.element_strides, (std::vector<uint32_t>{1, 1, 1}));
  EXPECT_EQ(e.swizzle, TensorMapSwizzle::None);
}

TEST(TensorMapEncoding, OneDimension) {
  TensorMapEncoding e = tensor_map_encoding(Box{{32}, 0, 8}, DataType::float64(), {1000});
  EXPECT_EQ(e.data_type, TensorMapDataType::Float64);
  EXPECT_EQ(e.global_dim, (std::vector<uint64_t>{1000}));
  EXPECT_TRUE(e.global_strides.empty());
  EXPECT_EQ(e.box_dim, (std::vector<uint32_t>{32}));
}

TEST(TensorMapEncoding, DataTypesAndSwizzles) {
  EXPECT_EQ(tensor_map_data_type(DataType::bfloat16()), TensorMapDataType::BFloat16);
  EXPECT_EQ(tensor_map_data_type(DataType::int_(8)), TensorMapDataType::UInt8);
  EXPECT_EQ(tensor_map_data_type(DataType::uint(8)), TensorMapDataType::UInt8);
  EXPECT_EQ(tensor_map_data_type(DataType::int_(16)), TensorMapDataType::UInt16);
  EXPECT_EQ(tensor_map_data_type(DataType::int32()), TensorMapDataType::Int32);
  EXPECT_EQ(tensor_map_data_type(DataType::uint(32)), TensorMapDataType::UInt32);
  EXPECT_EQ(tensor_map_data_type(DataType::int64()), TensorMapDataType::Int64);
  EXPECT_EQ(tensor_map_data_type(DataType::uint(64)), TensorMapDataType::UInt64);
  EXPECT_EQ(tensor_map_encoding(Box{{8, 16}, 32, 2}, DataType::bfloat16(), {64, 64}).swizzle,
            TensorMapSwizzle::Bytes32);
  EXPECT_EQ(tensor_map_encoding(Box{{8, 64}, 64, 1}, DataType::int_(8), {64, 64}).swizzle, TensorMapSwizzle::Bytes64);
}

// Rows of 100 int8 elements are 100 bytes: not a multiple of 16.
TEST(TensorMapEncoding, RefusesRowsNotAMultipleOf16Bytes) {
  std::string msg =
      user_error([] { tensor_map_encoding(Box{{64, 64}, 64, 1}, DataType::int_(8), {100, 100}, "Q"); });
  EXPECT_TRUE(contains(msg, "'Q'")) << msg;
  EXPECT_TRUE(contains(msg, "(100, 100)")) << msg;
  EXPECT_TRUE(contains(msg, "100 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "multiples of 16 bytes")) << msg;
}

TEST(TensorMapEncoding, RefusesABoxOfMoreThan256) {
  std::string msg =
      user_error([] { tensor_map_encoding(Box{{300, 8}, 0, 2}, DataType::float16(), {1024, 1024}, "A"); });
  EXPECT_TRUE(contains(msg, "'A'")) << msg;
  EXPECT_TRUE(contains(msg, "300")) << msg;
  EXPECT_TRUE(contains(msg, "1 to 256")) << msg;
}

TEST(TensorMapEncoding, RefusesTypesWithoutATensorMapType) {
  std::string msg = user_error([] { tensor_map_encoding(Box{{16, 16}, 0, 1}, DataType::bool_(), {64, 64}, "M"); });
  EXPECT_TRUE(contains(msg, "'M'")) << msg;
  EXPECT_TRUE(contains(msg, "bool")) << msg;
  msg = user_error([] { tensor_map_data_type(DataType(ir::TypeCode::Float, 32, 4)); });
  EXPECT_TRUE(contains(msg, "TMA cannot copy")) << msg;
}

TEST(TensorMapEncoding, RefusesABoxOfAnotherRankOrElementSize) {
  std::string msg = user_error([] { tensor_map_encoding(Box{{64}, 0, 2}, DataType::float16(), {64, 64}, "A"); });
  EXPECT_TRUE(contains(msg, "1 dimensions, the tensor 2")) << msg;
  msg = user_error([] { tensor_map_encoding(Box{{8, 8}, 0, 4}, DataType::float16(), {64, 64}, "A"); });
  EXPECT_TRUE(contains(msg, "4-byte elements")) << msg;
}

// What CudaFunction passes for tests/codegen/hopper/tma_wgmma_nt_f16.py:
// the kernel's two tensor maps (lower::tensor_map_params), A's then B's,
// encoded from the parameters' shapes.
TEST(TensorMapEncoding, TheTmaKernelsMapsFromItsParameters) {
  std::ifstream in(support::data_root() / "tests" / "codegen" / "hopper" / "tma_wgmma_nt_f16.py");
  std::stringstream text;
  text << in.rdbuf();
  ASSERT_FALSE(text.str().empty());
  lower::LoweredFunc l = lower::lower(script::parse_func(text.str(), "tma_wgmma_nt_f16.py"));
  std::vector<lower::TensorMapParam> maps = lower::tensor_map_params(l);
  ASSERT_EQ(maps.size(), 2u);
  const std::vector<std::vector<int64_t>> shapes = {{100, 200}, {56, 200}};
  for (size_t i = 0; i < maps.size(); ++i) {
    const lower::KernelParam &p = l.params[maps[i].param];
    ASSERT_TRUE(p.is_buffer());
    EXPECT_EQ(p.buffer.name(), i == 0 ? "A" : "B");
    TensorMapEncoding e = tensor_map_encoding(maps[i].box, p.buffer.dtype(), shapes[i], p.buffer.name());
    EXPECT_EQ(e.data_type, TensorMapDataType::Float16);
    EXPECT_EQ(e.global_dim, (std::vector<uint64_t>{200, uint64_t(shapes[i][0])}));
    EXPECT_EQ(e.global_strides, (std::vector<uint64_t>{400}));
    EXPECT_EQ(e.box_dim, (std::vector<uint32_t>{64, 64}));
    EXPECT_EQ(e.swizzle, TensorMapSwizzle::Bytes128);
  }
}

TEST(TensorMapEncode, RefusesAMisalignedAddressBeforeTheDriver) {
  TensorMapEncoding e = tensor_map_encoding(Box{{64, 64}, 128, 2}, DataType::float16(), {100, 200}, "A");
  std::string msg = user_error([&] { encode_tensor_map(e, 0x1008); });
  EXPECT_TRUE(contains(msg, "'A'")) << msg;
  EXPECT_TRUE(contains(msg, "16-byte aligned")) << msg;
}

TEST(TensorMapEncode, WithoutADriverIsARuntimeError) {
  if (driver_status() == DriverStatus::Ok) GTEST_SKIP() << "a device is present";
  TensorMapEncoding e = tensor_map_encoding(Box{{64, 64}, 128, 2}, DataType::float16(), {100, 200}, "A");
  EXPECT_THROW(encode_tensor_map(e, 0x1000), RuntimeError);
}

}  // namespace
}  // namespace tessera::runtime
