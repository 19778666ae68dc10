//===- tessera/bench/BenchEnvironment.h - Where a GPU benchmark ran, and its ceiling -===//
//
// What every GPU benchmark in bench/ records next to its numbers (DESIGN.md,
// "Measuring on a GPU": device, driver, toolkit and git hash), and the
// physical ceiling memory-bound kernels are judged against: the bandwidth of
// a large device-to-device copy on the same device.
//
//   nlohmann::json report = run_environment("abc1234");   // date, git, nvrtc, device...
//   CopyBandwidth copy = measure_copy_bandwidth();        // 1 GiB, read + write
//   double fraction = kernel_gbps / copy.gbps;
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "tessera/runtime/KernelTimer.h"

namespace tessera::bench {

/// Today's date in UTC, "2026-11-21".
std::string today();

/// {"date", "git", "nvrtc", "driver" (its status line), "driver_version"
/// (13000 for 13.0; 0 without a driver)} and, when the driver is usable, the
/// properties of device 0: "device" (its name), "arch" ("sm_90"),
/// "sm_count", "l2_bytes", "peak_dram_gbps" (theoretical).
nlohmann::json run_environment(const std::string &git);

/// A device-to-device copy (cuMemcpyDtoD on the default stream) timed as
/// KernelTimer does, without L2 flushes (the buffers are far larger than L2).
struct CopyBandwidth {
  size_t bytes = 0;             ///< copied per repetition
  runtime::TimingResult timing;
  double gbps = 0;              ///< 2 * bytes (read + write) / median, in GB/s
  nlohmann::json to_json() const;
};

/// Copies `bytes` between two fresh buffers of device 0. Needs a usable driver
/// (RuntimeError otherwise) and 2 * bytes of free device memory.
CopyBandwidth measure_copy_bandwidth(size_t bytes = size_t(1) << 30);

}  // namespace tessera::bench
