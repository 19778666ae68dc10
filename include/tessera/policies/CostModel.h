//===- tessera/policies/CostModel.h - The Roller-style estimates ------------===//
//
// The pieces every policy scores with, all from Arch fields:
//
//   - memory traffic rounded to transactions: a tile row of `run` contiguous
//     elements costs whole sectors (Arch::memory.sector_bytes), so a 4-byte
//     access pattern with runs of 3 elements pays 32 bytes per run;
//   - occupancy: blocks resident per SM from threads, registers and shared
//     memory against the Arch limits (the CUDA occupancy calculation, with
//     register allocation granularity of 256 per warp and the per-block shared
//     memory reservation);
//   - waves: ceil(grid / (blocks per SM x SMs));
//   - a roofline time: max(traffic / DRAM bandwidth, flops / peak) per wave,
//     times the waves, which is what candidates are ranked by.
//
//   Occupancy occ = occupancy(arch, {.threads = 256, .regs_per_thread = 64, .smem_bytes = 12288});
//   double us = roofline_us(arch, {.dram_bytes = 3 << 20, .flops = 2e9, .grid = 1024}, occ);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

#include "tessera/arch/Arch.h"

namespace tessera::policies {

/// Bytes moved for `rows` rows of `run` contiguous elements of `elem_bytes`,
/// each row rounded up to whole sectors.
int64_t sector_bytes(const Arch &arch, int64_t rows, int64_t run, int64_t elem_bytes);

/// What one thread block asks of an SM.
struct BlockResources {
  int64_t threads = 0;
  int64_t regs_per_thread = 0;
  int64_t smem_bytes = 0;
};

/// Blocks resident per SM, and which limit decided it.
struct Occupancy {
  int64_t blocks_per_sm = 0;  ///< 0: the block cannot run at all
  const char *limit = "";     ///< "threads", "registers", "shared memory", "blocks"
  /// Resident warps / the SM's maximum.
  double fraction = 0;
};

/// The CUDA occupancy calculation for one block shape (0 blocks when a single
/// block exceeds a limit).
Occupancy occupancy(const Arch &arch, const BlockResources &block);

/// ceil(grid / (blocks_per_sm x sm_count)); grid when blocks_per_sm is 0.
int64_t waves(const Arch &arch, int64_t grid, const Occupancy &occ);

/// A kernel's whole cost, for roofline_us.
struct KernelCost {
  double dram_bytes = 0;  ///< after transaction rounding and L2 reuse
  double flops = 0;       ///< multiply-add = 2
  int64_t grid = 1;       ///< thread blocks
  bool half_precision = false;  ///< fp16 math (peak_fp16_tflops) instead of fp32
};

/// Estimated microseconds: the time of one full wave under the roofline
/// (memory at DRAM bandwidth, math at the CUDA-core peak scaled by the
/// fraction of warps resident, at least 1/4: latency hiding), times the
/// waves, the last wave counted whole (the tail effect Roller scores).
double roofline_us(const Arch &arch, const KernelCost &cost, const Occupancy &occ);

/// "2.1 us: 12.6 MB, 1.2 GFLOP, 3 waves x 2 blocks/SM (registers)"
std::string describe(const Arch &arch, const KernelCost &cost, const Occupancy &occ);

/// Divisors of n in increasing order (n >= 1).
std::vector<int64_t> divisors(int64_t n);

}  // namespace tessera::policies
