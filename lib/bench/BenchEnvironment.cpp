//===- lib/bench/BenchEnvironment.cpp - Where a GPU benchmark ran, and its ceiling -===//
#include "tessera/bench/BenchEnvironment.h"

#include <ctime>

#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/NVRTC.h"

namespace tessera::bench {

using nlohmann::json;

std::string today() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

json run_environment(const std::string &git) {
  json env = {{"date", today()}, {"git", git}, {"nvrtc", runtime::nvrtc_version()},
              {"driver", runtime::driver_message()}, {"driver_version", runtime::driver_version()}};
  if (runtime::driver_status() != runtime::DriverStatus::Ok) return env;
  runtime::DeviceProperties p = runtime::query_device(0);
  env.update({{"device", p.name},
              {"arch", p.arch()},
              {"sm_count", p.sm_count},
              {"l2_bytes", p.l2_bytes},
              {"peak_dram_gbps", p.peak_dram_gbps()}});
  return env;
}

json CopyBandwidth::to_json() const {
  return {{"bytes", bytes},          {"median_ms", timing.median_ms}, {"min_ms", timing.min_ms},
          {"max_ms", timing.max_ms}, {"repetitions", timing.repetitions}, {"gbps", gbps}};
}

CopyBandwidth measure_copy_bandwidth(size_t bytes) {
  runtime::DeviceBuffer src(bytes), dst(bytes);
  src.fill_bytes(0x5a);
  CopyBandwidth c;
  c.bytes = bytes;
  c.timing = runtime::time_launches([&] { dst.enqueue_copy_from(src, bytes); }, 2 * bytes,
                                    {.flush_l2 = runtime::TimingOptions::Flush::Never});
  c.gbps = 2.0 * double(bytes) / (c.timing.median_ms * 1e-3) / 1e9;
  return c;
}

}  // namespace tessera::bench
