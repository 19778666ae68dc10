//===- policies/CostModel.cpp - The Roller-style estimates -----------------===//
#include "tessera/policies/CostModel.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <fmt/format.h>

namespace tessera::policies {

namespace {
/// The share of the less busy pipes' time sm_time adds to the busiest one's.
constexpr double kPipeOverlapLoss = 0.1;
}  // namespace

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

int64_t smem_wavefronts(const Arch &arch, const std::vector<int64_t> &lane_addresses, int64_t access_bytes) {
  const int64_t banks = std::max(arch.memory.smem_banks, 1),
                bank_bytes = std::max(arch.memory.smem_bank_bytes, 1);
  const size_t phase = size_t(std::max<int64_t>(1, banks * bank_bytes / std::max(access_bytes, bank_bytes)));
  const size_t words_per_lane = size_t(std::max<int64_t>(1, (access_bytes + bank_bytes - 1) / bank_bytes));
  // The distinct words of each bank in a phase, `cap` slots per bank (scratch
  // kept between calls: policies call this in their inner loops).
  const size_t cap = phase * words_per_lane;
  // Power-of-two banks and bank widths (every GPU's) by shift and mask: this runs per lane.
  const bool pow2 = (banks & (banks - 1)) == 0 && (bank_bytes & (bank_bytes - 1)) == 0;
  const int shift = pow2 ? std::countr_zero(static_cast<uint64_t>(bank_bytes)) : 0;
  auto divide = [&](int64_t bytes) { return pow2 ? bytes >> shift : bytes / bank_bytes; };
  auto bank_of = [&](int64_t word) { return pow2 ? word & (banks - 1) : word % banks; };
  thread_local std::vector<int64_t> slots, count;
  slots.resize(size_t(banks) * cap);
  count.resize(size_t(banks));
  int64_t total = 0;
  for (size_t start = 0; start < lane_addresses.size(); start += phase) {
    std::fill(count.begin(), count.end(), 0);
    int64_t worst = 0;
    for (size_t l = start; l < lane_addresses.size() && l < start + phase; ++l)
      for (size_t w = 0; w < words_per_lane; ++w) {
        const int64_t word = divide(lane_addresses[l]) + int64_t(w);
        const size_t bank = size_t(bank_of(word));
        int64_t *own = &slots[bank * cap];
        if (std::find(own, own + count[bank], word) != own + count[bank]) continue;  // broadcast
        own[count[bank]++] = word;
        worst = std::max(worst, count[bank]);
      }
    total += worst;
  }
  return total;
}

SmTime sm_time(const Arch &arch, const BlockWork &work, int64_t grid, int64_t threads, const Occupancy &occ) {
  SmTime t;
  if (occ.blocks_per_sm <= 0) {
    t.us = INFINITY;
    t.bound = "no block fits";
    return t;
  }
  const ArchCompute &cu = arch.compute;
  const double clock_hz = double(std::max(cu.boost_clock_mhz, 1)) * 1e6;
  const double sms = double(std::max(cu.sm_count, 1));
  const int64_t warp = std::max(cu.warp_size, 1);
  // Per SM and clock: warp-wide FMAs (peak counts a multiply-add as 2),
  // issued warp instructions, shared-memory wavefronts.
  const double fma_rate = cu.peak_fp32_tflops * 1e12 / (2 * sms * clock_hz) / double(warp);
  const double issue_rate = double(std::max(cu.warp_schedulers_per_sm, 1));
  const double wavefront_bytes = double(std::max(arch.memory.smem_banks * arch.memory.smem_bank_bytes, 1));
  const double smem_rate = arch.memory.smem_bandwidth_gbps * 1e9 / (sms * clock_hz) / wavefront_bytes;
  struct Pipe {
    double cycles;
    const char *name;
  };
  Pipe pipes[] = {{work.fma / std::max(fma_rate, 1e-9), "fma"},
                  {(work.fma + work.other) / issue_rate, "issue"},
                  {work.smem_wavefronts / std::max(smem_rate, 1e-9), "shared memory"}};
  Pipe busiest = pipes[0];
  double all = 0;
  for (const Pipe &p : pipes) {
    all += p.cycles;
    if (p.cycles > busiest.cycles) busiest = p;
  }
  // The other pipes are never perfectly hidden behind the busiest one.
  busiest.cycles += kPipeOverlapLoss * (all - busiest.cycles);
  const int64_t warps = (threads + warp - 1) / warp;
  auto round_cycles = [&](int64_t resident, const char **bound) {
    double fraction = double(resident * warps * warp) / std::max(arch.limits.max_threads_per_sm, 1);
    double hiding = std::min(1.0, std::max(fraction, 1e-3) * 4);
    double piped = double(resident) * busiest.cycles / hiding;
    double alone = busiest.cycles + work.stall_cycles;
    *bound = piped >= alone ? busiest.name : "latency";
    return std::max(piped, alone);
  };
  const int64_t per_sm = (std::max<int64_t>(grid, 1) + cu.sm_count - 1) / std::max(cu.sm_count, 1);
  const int64_t full = per_sm / occ.blocks_per_sm, rest = per_sm % occ.blocks_per_sm;
  double cycles = 0;
  const char *bound = busiest.name;
  if (full > 0) cycles += double(full) * round_cycles(occ.blocks_per_sm, &bound);
  const char *tail_bound = bound;
  if (rest > 0) cycles += round_cycles(rest, full > 0 ? &tail_bound : &bound);
  t.us = cycles / clock_hz * 1e6;
  t.bound = bound;
  t.rounds = full + (rest > 0);
  return t;
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
