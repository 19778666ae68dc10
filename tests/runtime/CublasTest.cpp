//===- CublasTest.cpp - cuBLAS loading without a device (unit) -------------===//
//
// Runs everywhere: libcublas either opens (it is in the toolkit) or the error
// lists every name tried; a handle without a usable driver is a
// CublasUnavailable carrying the driver's message, never a crash (libcublas
// carries its own CUDA runtime, which must not be reached without a driver).
// The GEMM descriptor's arithmetic and text need nothing.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tessera/runtime/Cublas.h"

namespace tessera::runtime {
namespace {

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

TEST(Cublas, LibraryOpensOrListsEveryNameTried) {
  try {
    const CublasLibrary &lib = Cublas::library();
    EXPECT_TRUE(contains(lib.path, "libcublas.so")) << lib.path;
    EXPECT_GE(lib.major, 11) << "cublasGemmEx with a compute type needs cuBLAS 11";
    EXPECT_TRUE(contains(lib.str(), "cuBLAS " + std::to_string(lib.major) + ".")) << lib.str();
    EXPECT_EQ(&lib, &Cublas::library()) << "loaded once";
  } catch (const CublasUnavailable &e) {
    for (const char *name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so:"})
      EXPECT_TRUE(contains(e.what(), name)) << e.what();
  }
}

TEST(Cublas, HandleWithoutADeviceIsCublasUnavailable) {
  if (driver_status() == DriverStatus::Ok) {
    Cublas blas = Cublas::load();
    EXPECT_EQ(blas.device(), 0);
    return;
  }
  try {
    Cublas::load();
    FAIL() << "expected CublasUnavailable without a usable driver";
  } catch (const CublasUnavailable &e) {
    // Either the library is missing (listing the names) or the device is.
    std::string msg = e.what();
    EXPECT_TRUE(contains(msg, driver_message()) || contains(msg, "libcublas.so.13")) << msg;
  }
}

TEST(Cublas, UnavailableIsAUserError) {
  // Callers that report bad setups (the benchmarks) catch UserError.
  static_assert(std::is_base_of_v<UserError, CublasUnavailable>);
  if (driver_status() == DriverStatus::Ok) GTEST_SKIP() << "a device is present";
  EXPECT_THROW(Cublas::load(), UserError);
}

TEST(GemmDesc, DescribesARowMajorGemm) {
  GemmDesc g{.m = 64, .n = 32, .k = 16, .b_transposed = true, .a_dtype = ir::DataType::float16(),
             .b_dtype = ir::DataType::float16(), .c_dtype = ir::DataType::float32()};
  EXPECT_EQ(g.layout(), "nt");
  EXPECT_EQ(g.str(), "gemm 64x32x16 nt float16->float32");
  EXPECT_DOUBLE_EQ(g.flops(), 2.0 * 64 * 32 * 16);
  EXPECT_EQ(g.a_bytes(), 64u * 16 * 2);
  EXPECT_EQ(g.b_bytes(), 16u * 32 * 2);
  EXPECT_EQ(g.c_bytes(), 64u * 32 * 4);
  g.batch = 3;
  g.a_transposed = true;
  g.b_transposed = false;
  EXPECT_EQ(g.layout(), "tn");
  EXPECT_EQ(g.str(), "bmm 3x64x32x16 tn float16->float32");
  EXPECT_EQ(g.c_bytes(), 3u * 64 * 32 * 4);
  EXPECT_DOUBLE_EQ(g.flops(), 3 * 2.0 * 64 * 32 * 16);
}

}  // namespace
}  // namespace tessera::runtime
