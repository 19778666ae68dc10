//===- policies/CostModel.cpp - The Roller-style estimates -----------------===//
#include "tessera/policies/CostModel.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace tessera::policies {

int64_t sector_bytes(const Arch &arch, int64_t rows, int64_t run, int64_t elem_bytes) {
  int64_t sector = std::max<int64_t>(arch.memory.sector_bytes, 1);
  int64_t bytes = run * elem_bytes;
  return rows * ((bytes + sector - 1) / sector) * sector;
}

Occupancy occupancy(const Arch &arch, const BlockResources &block) {
  const ArchLimits &lim = arch.limits;
  Occupancy occ;
  int64_t warp = std::max(arch.compute.warp_size, 1);
  int64_t warps = (block.threads + warp - 1) / warp;
  if (block.threads <= 0 || block.threads > lim.max_threads_per_block) return occ;
  if (block.regs_per_thread > lim.max_regs_per_thread) return occ;
  if (block.smem_bytes > arch.max_smem_per_block()) return occ;
  // Registers are allocated per warp in units of 256.
  int64_t regs_warp = (std::max<int64_t>(block.regs_per_thread, 1) * warp + 255) / 256 * 256;
  if (regs_warp * warps > lim.regs_per_block) return occ;
  struct Bound {
    int64_t blocks;
    const char *name;
  };
  Bound bounds[] = {
      {lim.max_threads_per_sm / (warps * warp), "threads"},
      {lim.regs_per_sm / (regs_warp * warps), "registers"},
      {block.smem_bytes > 0 ? lim.smem_per_sm_bytes / (block.smem_bytes + lim.smem_reserved_per_block_bytes)
                            : lim.max_blocks_per_sm,
       "shared memory"},
      {lim.max_blocks_per_sm, "blocks"},
  };
  occ.blocks_per_sm = bounds[0].blocks;
  occ.limit = bounds[0].name;
  for (const Bound &b : bounds)
    if (b.blocks < occ.blocks_per_sm) occ.blocks_per_sm = b.blocks, occ.limit = b.name;
  occ.blocks_per_sm = std::max<int64_t>(occ.blocks_per_sm, 0);
  occ.fraction = double(occ.blocks_per_sm * warps * warp) / std::max(lim.max_threads_per_sm, 1);
  return occ;
}

int64_t waves(const Arch &arch, int64_t grid, const Occupancy &occ) {
  int64_t slots = occ.blocks_per_sm * std::max(arch.compute.sm_count, 1);
  if (slots <= 0) return std::max<int64_t>(grid, 1);
  return std::max<int64_t>((grid + slots - 1) / slots, 1);
}

double roofline_us(const Arch &arch, const KernelCost &cost, const Occupancy &occ) {
  if (occ.blocks_per_sm <= 0) return INFINITY;
  int64_t w = waves(arch, cost.grid, occ);
  double grid = double(std::max<int64_t>(cost.grid, 1));
  // Per wave: a full wave's share of the work (the last wave counts whole).
  double share = double(std::min<int64_t>(cost.grid, occ.blocks_per_sm * arch.compute.sm_count)) / grid;
  double mem_s = cost.dram_bytes * share / (arch.memory.dram_bandwidth_gbps * 1e9);
  double peak = (cost.half_precision ? arch.compute.peak_fp16_tflops : arch.compute.peak_fp32_tflops) * 1e12;
  // Fewer resident warps hide less latency: below a quarter of the SM's warps
  // the math rate falls with them.
  double busy = std::min(1.0, std::max(occ.fraction, 1e-3) * 4);
  double math_s = cost.flops * share / (peak * busy);
  // A wave that does not fill the SMs leaves bandwidth unused too.
  double fill = std::min(1.0, double(cost.grid) / double(arch.compute.sm_count));
  mem_s /= std::max(fill, 1e-3);
  return double(w) * std::max(mem_s, math_s) * 1e6;
}

std::string describe(const Arch &arch, const KernelCost &cost, const Occupancy &occ) {
  return fmt::format("{:.2f} us: {:.2f} MB, {:.3g} GFLOP, {} waves x {} blocks/SM ({})",
                     roofline_us(arch, cost, occ), cost.dram_bytes / 1e6, cost.flops / 1e9,
                     waves(arch, cost.grid, occ), occ.blocks_per_sm, occ.limit);
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> lo, hi;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      lo.push_back(d);
      if (d != n / d) hi.push_back(n / d);
    }
  lo.insert(lo.end(), hi.rbegin(), hi.rend());
  return lo;
}

}  // namespace tessera::policies
