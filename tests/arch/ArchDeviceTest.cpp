//===- ArchDeviceTest.cpp - Arch::detect on a live device (label gpu) ------===//
#include <gtest/gtest.h>

#include <iostream>

#include "tessera/arch/Arch.h"
#include "tessera/runtime/DetectArch.h"
#include "tessera/runtime/CudaDriver.h"

namespace tessera {
namespace {

TEST(ArchDetectOnDevice, AgreesWithTheDriver) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  runtime::DeviceProperties p = runtime::query_device(0);
  Arch a = runtime::detect_arch(0);
  EXPECT_TRUE(check_arch(a).empty());
  EXPECT_EQ(a.compute.sm_count, p.sm_count);
  EXPECT_EQ(a.limits.smem_per_block_optin_bytes, p.smem_per_block_optin);
  EXPECT_EQ(a.arch_flag(), p.arch());
  ASSERT_TRUE(a.detected.has_value());
  EXPECT_EQ(a.detected->device_name, p.name);
  std::cout << a.to_json().dump(2) << "\n";
  // The result is a valid description on its own.
  EXPECT_EQ(Arch::from_json(a.to_json(), "detected"), a);
}

TEST(ArchDetectOnDevice, MissingOrdinalIsAUserError) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  EXPECT_THROW(runtime::detect_arch(runtime::device_count()), UserError);
}

}  // namespace
}  // namespace tessera
