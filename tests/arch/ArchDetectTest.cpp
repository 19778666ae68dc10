//===- ArchDetectTest.cpp - From a device's properties to an Arch ----------===//
//
// Arch::from_device is a pure function of DeviceProperties and the presets, so
// it is tested here with the numbers real devices report, no GPU needed.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/arch/Arch.h"
#include "tessera/runtime/DetectArch.h"
#include "tessera/runtime/CudaDriver.h"

namespace tessera {
namespace {

using runtime::DeviceProperties;

const std::vector<Arch> &presets() {
  static const std::vector<Arch> all = Arch::presets();
  return all;
}

/// What the driver reports for an H100 PCIe (cuDeviceGetAttribute values).
DeviceProperties h100_pcie_device() {
  DeviceProperties p;
  p.name = "NVIDIA H100 PCIe";
  p.cc_major = 9;
  p.cc_minor = 0;
  p.sm_count = 114;
  p.total_memory = 85031714816;  // 79.2 GiB: less than the 80 GiB on the box
  p.warp_size = 32;
  p.max_threads_per_block = 1024;
  p.max_threads_per_sm = 2048;
  p.max_blocks_per_sm = 32;
  p.smem_per_block = 49152;
  p.smem_per_block_optin = 232448;
  p.smem_per_sm = 233472;
  p.regs_per_block = 65536;
  p.regs_per_sm = 65536;
  p.l2_bytes = 52428800;
  p.clock_khz = 1755000;
  p.memory_clock_khz = 1593000;
  p.memory_bus_width_bits = 5120;
  return p;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(ArchFromDevice, H100PcieMapsToItsPresetAndKeepsTheDeviceValues) {
  Arch a = Arch::from_device(h100_pcie_device(), presets());
  Arch preset = Arch::by_name("h100_pcie");
  EXPECT_EQ(a.name, "h100_pcie");
  EXPECT_EQ(a.description, "NVIDIA H100 PCIe");
  EXPECT_EQ(a.fingerprint(), preset.fingerprint());
  EXPECT_EQ(a.compute.sm_count, 114);
  EXPECT_EQ(a.memory.dram_bytes, 85031714816);
  EXPECT_NEAR(a.memory.dram_bandwidth_gbps, 2039.04, 1e-6);  // 2 x 1593 MHz x 640 bytes
  // Same SMs and clock as the preset: the vendor's peaks are kept as they are.
  EXPECT_EQ(a.compute.peak_fp32_tflops, preset.compute.peak_fp32_tflops);
  EXPECT_EQ(a.tensor_cores, preset.tensor_cores);
  EXPECT_EQ(a.memory.smem_bandwidth_gbps, preset.memory.smem_bandwidth_gbps);
  ASSERT_TRUE(a.detected.has_value());
  EXPECT_EQ(a.detected->base_preset, "h100_pcie");
  EXPECT_EQ(a.detected->device_name, "NVIDIA H100 PCIe");
  EXPECT_EQ(a.detected->from_device.size(), 14u);
  EXPECT_TRUE(contains(a.detected->from_device, "/compute/sm_count"));
  EXPECT_TRUE(contains(a.detected->from_device, "/limits/smem_per_block_optin_bytes"));
  EXPECT_TRUE(a.detected->rescaled.empty());
  EXPECT_TRUE(a.aliases.empty());
  EXPECT_TRUE(check_arch(a).empty());
}

TEST(ArchFromDevice, OtherSmCountRescalesThePeaks) {
  DeviceProperties p = h100_pcie_device();
  p.name = "NVIDIA H100 cut down";
  p.sm_count = 120;  // nearer 114 (h100_pcie) than 132 (h100_sxm)
  Arch a = Arch::from_device(p, presets());
  Arch base = Arch::by_name("h100_pcie");
  EXPECT_EQ(a.detected->base_preset, "h100_pcie");
  EXPECT_EQ(a.compute.sm_count, 120);
  EXPECT_EQ(a.fingerprint(), "h100_pcie/sm_90/120sm");
  double ratio = 120.0 / 114.0;
  EXPECT_NEAR(a.compute.peak_fp32_tflops, base.compute.peak_fp32_tflops * ratio, 1e-9);
  EXPECT_NEAR(a.find_mma("float16", "float32")->peak_tops, base.find_mma("float16", "float32")->peak_tops * ratio,
              1e-9);
  EXPECT_NEAR(a.memory.smem_bandwidth_gbps, a.derived_smem_bandwidth_gbps(), 1e-9);
  EXPECT_TRUE(contains(a.detected->rescaled, "/compute/peak_fp32_tflops"));
  EXPECT_TRUE(contains(a.detected->rescaled, "/tensor_cores/mma/0/peak_tops"));
  EXPECT_TRUE(contains(a.detected->rescaled, "/memory/smem_bandwidth_gbps"));
  // Shapes and features are the preset's.
  EXPECT_EQ(a.find_mma("float16", "float32")->shapes, base.find_mma("float16", "float32")->shapes);
  EXPECT_TRUE(a.tensor_cores.wgmma);
}

TEST(ArchFromDevice, MemorySizeBreaksASmCountTie) {
  DeviceProperties p = h100_pcie_device();
  p.sm_count = 132;
  p.clock_khz = 1980000;
  p.total_memory = 150754820096;  // 140.4 GiB
  EXPECT_EQ(Arch::from_device(p, presets()).detected->base_preset, "h200");
  p.total_memory = 85031714816;
  EXPECT_EQ(Arch::from_device(p, presets()).detected->base_preset, "h100_sxm");
}

TEST(ArchFromDevice, UnreportedValuesComeFromThePreset) {
  DeviceProperties p = h100_pcie_device();
  p.clock_khz = 0;
  p.memory_clock_khz = 0;  // no bandwidth derivable
  p.l2_bytes = 0;
  Arch a = Arch::from_device(p, presets());
  Arch preset = Arch::by_name("h100_pcie");
  EXPECT_EQ(a.compute.boost_clock_mhz, preset.compute.boost_clock_mhz);
  EXPECT_EQ(a.memory.dram_bandwidth_gbps, preset.memory.dram_bandwidth_gbps);
  EXPECT_EQ(a.memory.l2_bytes, preset.memory.l2_bytes);
  EXPECT_FALSE(contains(a.detected->from_device, "/compute/boost_clock_mhz"));
  EXPECT_FALSE(contains(a.detected->from_device, "/memory/dram_bandwidth_gbps"));
  EXPECT_FALSE(contains(a.detected->from_device, "/memory/l2_bytes"));
  EXPECT_EQ(a.detected->from_device.size(), 11u);
}

TEST(ArchFromDevice, EachFamilyFindsItsPreset) {
  struct Case {
    int major, minor, sms;
    const char *preset;
  };
  for (Case c : {Case{8, 0, 108, "a100_sxm4_80gb"}, Case{8, 6, 72, "a10"}, Case{8, 6, 82, "rtx3090"},
                 Case{8, 9, 58, "l4"}, Case{8, 9, 128, "rtx4090"}, Case{8, 9, 142, "l40s"},
                 Case{8, 9, 144, "l40s"}}) {
    DeviceProperties p;
    p.name = "synthetic";
    p.cc_major = c.major;
    p.cc_minor = c.minor;
    p.sm_count = c.sms;
    Arch a = Arch::from_device(p, presets());
    EXPECT_EQ(a.detected->base_preset, c.preset) << c.major << "." << c.minor << " " << c.sms;
    EXPECT_EQ(a.compute.sm_count, c.sms);
  }
}

TEST(ArchFromDevice, NewerMinorVersionUsesTheSameMajorsPreset) {
  DeviceProperties p;
  p.name = "NVIDIA Orin";
  p.cc_major = 8;
  p.cc_minor = 7;
  p.sm_count = 16;
  Arch a = Arch::from_device(p, presets());
  EXPECT_EQ(a.detected->base_preset, "a10");  // sm_86, nearest SM count
  EXPECT_EQ(a.arch_flag(), "sm_87");          // the device's own target
  EXPECT_EQ(a.find_mma("float8_e4m3fn", "float32"), nullptr);
}

TEST(ArchFromDevice, UnknownComputeCapabilityIsAUserError) {
  for (auto [major, minor] : {std::pair{7, 0}, std::pair{7, 5}, std::pair{10, 0}, std::pair{12, 0}}) {
    DeviceProperties p;
    p.name = "some gpu";
    p.cc_major = major;
    p.cc_minor = minor;
    p.sm_count = 80;
    try {
      Arch::from_device(p, presets());
      FAIL() << major << "." << minor << " should have no preset";
    } catch (const UserError &e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(std::to_string(major) + "." + std::to_string(minor) + ", and no GPU description covers it"),
                std::string::npos)
          << msg;
      EXPECT_NE(msg.find("known: 8.0, 8.6, 8.9, 9.0"), std::string::npos) << msg;
    }
  }
}

TEST(ArchFromDevice, InconsistentDeviceValuesAreAnArchError) {
  DeviceProperties p = h100_pcie_device();
  p.smem_per_block_optin = 300000;  // more than the SM has
  try {
    Arch::from_device(p, presets());
    FAIL() << "expected an ArchError";
  } catch (const ArchError &e) {
    EXPECT_EQ(e.source(), "device 0 (NVIDIA H100 PCIe)");
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.problems()[0].path, "/limits/smem_per_block_optin_bytes");
  }
}

TEST(ArchFromDevice, DetectedArchRoundTripsThroughJson) {
  DeviceProperties p = h100_pcie_device();
  p.sm_count = 120;
  Arch a = Arch::from_device(p, presets());
  EXPECT_EQ(Arch::from_json(a.to_json(), "detected"), a);
  EXPECT_EQ(Arch::parse(a.to_json().dump(), "detected"), a);
}

TEST(ArchDetect, WithoutADeviceCarriesTheDriverMessage) {
  if (runtime::driver_status() == runtime::DriverStatus::Ok) {
    Arch a = runtime::detect_arch();  // on a GPU machine: it works and validates
    EXPECT_TRUE(check_arch(a).empty());
    return;
  }
  try {
    runtime::detect_arch();
    FAIL() << "expected a UserError";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find(runtime::driver_message()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera
