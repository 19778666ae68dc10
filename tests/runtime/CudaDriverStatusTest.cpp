//===- CudaDriverStatusTest.cpp - The lazy driver without a device (unit) --===//
//
// Runs everywhere: on a machine without a driver the status is a value with a
// message, and asking for a device is a RuntimeError, never a crash.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/runtime/NVRTC.h"

namespace tessera::runtime {
namespace {

TEST(CudaDriverStatus, IsAValueWithAMeaningfulMessage) {
  DriverStatus s = driver_status();
  EXPECT_EQ(s, driver_status()) << "loaded once";
  const std::string &msg = driver_message();
  ASSERT_FALSE(msg.empty());
  if (s == DriverStatus::Ok) {
    EXPECT_GT(device_count(), 0);
    EXPECT_GT(driver_version(), 0);
    EXPECT_NE(msg.find("CUDA driver"), std::string::npos) << msg;
    return;
  }
  EXPECT_EQ(device_count(), 0);
  if (s == DriverStatus::NoLibrary) {
    EXPECT_NE(msg.find("libcuda.so.1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no CUDA driver"), std::string::npos) << msg;
  }
}

TEST(CudaDriverStatus, DeviceWorkWithoutDriverIsRuntimeError) {
  if (driver_status() == DriverStatus::Ok) GTEST_SKIP() << "a device is present";
  try {
    Device::get(0);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError &e) {
    EXPECT_EQ(e.error_name(), to_string(driver_status()));
    EXPECT_NE(std::string(e.what()).find("no CUDA device: " + driver_message()), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(DeviceBuffer(64), RuntimeError);
  EXPECT_THROW(query_device(0), RuntimeError);
  EXPECT_THROW(Module::load({0x7f, 'E', 'L', 'F'}), RuntimeError);
  EXPECT_THROW(time_launches([] {}, 0), RuntimeError);
  // Empty handles are harmless to destroy.
  DeviceBuffer empty;
  Module none;
  EXPECT_EQ(empty.size(), 0u);
}

TEST(CudaDriverStatus, ProbeMissingLibrary) {
  auto [status, msg] = probe_driver("libtessera-no-such-driver.so");
  EXPECT_EQ(status, DriverStatus::NoLibrary);
  EXPECT_NE(msg.find("libtessera-no-such-driver.so not found"), std::string::npos) << msg;
}

#ifdef TESSERA_CUDA_STUB_LIBRARY
// The toolkit's link stub exports every entry point (so this also proves that
// each versioned name tessera looks up exists) and fails cuInit.
TEST(CudaDriverStatus, ProbeToolkitStubLibrary) {
  // The stub's SONAME is libcuda.so.1: once it is loaded, dlopen("libcuda.so.1")
  // would find it, so settle this process's own status first.
  DriverStatus before = driver_status();
  auto [status, msg] = probe_driver(TESSERA_CUDA_STUB_LIBRARY);
  EXPECT_EQ(status, DriverStatus::StubLibrary) << to_string(status) << ": " << msg;
  EXPECT_NE(msg.find("stub"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << msg;
  EXPECT_EQ(driver_status(), before);
}
#endif

TEST(CudaDriverStatus, StatusNames) {
  EXPECT_STREQ(to_string(DriverStatus::Ok), "Ok");
  EXPECT_STREQ(to_string(DriverStatus::NoLibrary), "NoLibrary");
  EXPECT_STREQ(to_string(DriverStatus::MissingSymbol), "MissingSymbol");
  EXPECT_STREQ(to_string(DriverStatus::StubLibrary), "StubLibrary");
  EXPECT_STREQ(to_string(DriverStatus::NoDevice), "NoDevice");
  EXPECT_STREQ(to_string(DriverStatus::InitFailed), "InitFailed");
}

TEST(KernelArgs, PacksAlignedScalarsAndPointers) {
  KernelArgs args;
  args.scalar<char>('x').pointer(0x1234).scalar<int>(7).scalar<double>(2.5);
  ASSERT_EQ(args.count(), 4u);
  void **p = args.data();
  EXPECT_EQ(*static_cast<char *>(p[0]), 'x');
  EXPECT_EQ(*static_cast<unsigned long long *>(p[1]), 0x1234u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p[1]) % alignof(unsigned long long), 0u);
  EXPECT_EQ(*static_cast<int *>(p[2]), 7);
  EXPECT_EQ(*static_cast<double *>(p[3]), 2.5);
  EXPECT_EQ(args.buffer_bytes(), 0u);
}

TEST(KernelTimer, Median) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({5}), 5);
  EXPECT_THROW(median({}), InternalError);
}

TEST(Dim3, Prints) { EXPECT_EQ(Dim3(4, 2).str(), "(4, 2, 1)"); }

TEST(NvrtcStub, UnavailableIsAClearUserError) {
  if (nvrtc_available()) GTEST_SKIP() << "built with NVRTC";
  try {
    compile_cuda("", {});
    FAIL() << "expected UserError";
  } catch (const CompileError &) {
    FAIL() << "expected a plain UserError";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("NVRTC not available"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compile_many(std::vector<std::string>{"x"}, {}), UserError);
  EXPECT_TRUE(nvrtc_supported_archs().empty());
}

}  // namespace
}  // namespace tessera::runtime
