//===- lib/arch/Detect.cpp - An Arch from a live device --------------------===//
//
// The driver knows the limits, the memory sizes and the clocks exactly; it
// knows nothing of peak throughputs or tensor-core shapes. from_device (a pure
// function of what the driver reported: runtime::detect_arch, beside the
// driver, queries the device and calls it) takes
// the first from the device and the rest from the closest preset, scaling the
// peaks by how much more (or less) SM x clock the device has, and records the
// provenance of every field it did not simply copy.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <tuple>

#include "tessera/arch/Arch.h"
#include "tessera/runtime/CudaDriver.h"

namespace tessera {

namespace {

std::string known_capabilities(const std::vector<Arch> &presets) {
  std::vector<ComputeCapability> ccs;
  for (const Arch &a : presets) ccs.push_back(a.compute_capability);
  std::sort(ccs.begin(), ccs.end());
  ccs.erase(std::unique(ccs.begin(), ccs.end()), ccs.end());
  std::string out;
  for (ComputeCapability cc : ccs) out += fmt::format("{}{}.{}", out.empty() ? "" : ", ", cc.major, cc.minor);
  return out.empty() ? "none" : out;
}

/// Copies the device's value into `field` when the device reported one (> 0)
/// and records the field's JSON path.
template <typename Field, typename Value>
void take(Field &field, Value device_value, const char *path, std::vector<std::string> &from_device) {
  if (device_value <= 0) return;
  field = static_cast<Field>(device_value);
  from_device.push_back(path);
}

}  // namespace

const Arch *Arch::closest_preset(ComputeCapability cc, int sm_count, int64_t dram_bytes,
                                 const std::vector<Arch> &presets) {
  // The capability to match: the device's own if a preset has it, else the
  // highest lower minor version of the same major (8.7 -> 8.6). A newer major
  // version is never guessed at: its instructions and limits differ.
  std::optional<ComputeCapability> target;
  for (const Arch &a : presets) {
    ComputeCapability c = a.compute_capability;
    if (c.major != cc.major || c.minor > cc.minor) continue;
    if (!target || c > *target) target = c;
  }
  if (!target) return nullptr;
  const Arch *best = nullptr;
  auto key = [&](const Arch &a) {
    return std::tuple(std::abs(a.compute.sm_count - sm_count), std::llabs(a.memory.dram_bytes - dram_bytes), a.name);
  };
  for (const Arch &a : presets)
    if (a.compute_capability == *target && (!best || key(a) < key(*best))) best = &a;
  return best;
}

Arch Arch::from_device(const runtime::DeviceProperties &p, const std::vector<Arch> &presets) {
  ComputeCapability cc{p.cc_major, p.cc_minor};
  const Arch *base = closest_preset(cc, p.sm_count, p.total_memory, presets);
  if (!base)
    throw UserError(fmt::format("device {} ({}) has compute capability {}.{}, and no GPU description covers it "
                                "(known: {}); add one to arch/ (see arch/SCHEMA.md) or name a preset",
                                p.ordinal, p.name, cc.major, cc.minor, known_capabilities(presets)));
  Arch a = *base;
  a.description = p.name;
  a.aliases.clear();  // a detected GPU is not a preset: by_name never returns it
  a.compute_capability = cc;
  ArchDetection d{.device_name = p.name, .ordinal = p.ordinal, .base_preset = base->name};

  // Step 1. What the driver reports.
  take(a.compute.sm_count, p.sm_count, "/compute/sm_count", d.from_device);
  take(a.compute.warp_size, p.warp_size, "/compute/warp_size", d.from_device);
  take(a.compute.boost_clock_mhz, p.clock_khz / 1000, "/compute/boost_clock_mhz", d.from_device);
  take(a.memory.dram_bytes, p.total_memory, "/memory/dram_bytes", d.from_device);
  take(a.memory.dram_bandwidth_gbps, p.peak_dram_gbps(), "/memory/dram_bandwidth_gbps", d.from_device);
  take(a.memory.l2_bytes, p.l2_bytes, "/memory/l2_bytes", d.from_device);
  take(a.limits.max_threads_per_block, p.max_threads_per_block, "/limits/max_threads_per_block", d.from_device);
  take(a.limits.max_threads_per_sm, p.max_threads_per_sm, "/limits/max_threads_per_sm", d.from_device);
  take(a.limits.max_blocks_per_sm, p.max_blocks_per_sm, "/limits/max_blocks_per_sm", d.from_device);
  take(a.limits.regs_per_sm, p.regs_per_sm, "/limits/regs_per_sm", d.from_device);
  take(a.limits.regs_per_block, p.regs_per_block, "/limits/regs_per_block", d.from_device);
  take(a.limits.smem_per_sm_bytes, p.smem_per_sm, "/limits/smem_per_sm_bytes", d.from_device);
  take(a.limits.smem_per_block_bytes, p.smem_per_block, "/limits/smem_per_block_bytes", d.from_device);
  take(a.limits.smem_per_block_optin_bytes, p.smem_per_block_optin, "/limits/smem_per_block_optin_bytes",
       d.from_device);

  // Step 2. Peaks scale with SMs x clock; a device identical to its preset
  // (ratio 1) keeps the vendor's figures untouched.
  double ratio = double(a.compute.sm_count) * a.compute.boost_clock_mhz /
                 (double(base->compute.sm_count) * base->compute.boost_clock_mhz);
  if (ratio != 1.0) {
    a.compute.peak_fp32_tflops *= ratio;
    a.compute.peak_fp16_tflops *= ratio;
    d.rescaled = {"/compute/peak_fp32_tflops", "/compute/peak_fp16_tflops"};
    for (size_t i = 0; i < a.tensor_cores.mma.size(); ++i) {
      a.tensor_cores.mma[i].peak_tops *= ratio;
      d.rescaled.push_back(fmt::format("/tensor_cores/mma/{}/peak_tops", i));
    }
  }
  // Step 3. Derived fields follow the values they derive from.
  // (A relative tolerance: the preset stores the same product rounded to decimals.)
  double smem_bw = a.derived_smem_bandwidth_gbps();
  if (std::abs(smem_bw - a.memory.smem_bandwidth_gbps) > 1e-9 * smem_bw) {
    a.memory.smem_bandwidth_gbps = smem_bw;
    d.rescaled.push_back("/memory/smem_bandwidth_gbps");
  }
  a.detected = std::move(d);

  std::vector<ArchProblem> problems = check_arch(a);
  if (!problems.empty()) throw ArchError(fmt::format("device {} ({})", p.ordinal, p.name), std::move(problems));
  return a;
}

}  // namespace tessera
