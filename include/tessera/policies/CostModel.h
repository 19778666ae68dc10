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
//   - an SM pipe model for kernels whose time is spent on the SMs (a SIMT
//     GEMM issues FMAs, shared memory loads and barriers; which of the FMA
//     pipe, the warp schedulers and the shared memory banks saturates first
//     decides its speed, not its DRAM traffic):
//
//   SmTime t = sm_time(arch, {.fma = 8192, .other = 3000, .smem_wavefronts = 2500}, grid, 256, occ);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

/// Shared-memory wavefronts (bank sweeps) one warp instruction takes, lane l
/// accessing `access_bytes` from byte address lane_addresses[l]: lanes are
/// served in phases that together move banks x bank bytes (the whole warp for
/// 4-byte accesses, 8 lanes for 16-byte ones); in a phase, a bank holding k
/// distinct words takes k wavefronts (one word is broadcast to every lane).
/// 32 lanes reading 32 consecutive floats: 1; a column of a 32 x 32 float
/// tile: 32; 32 lanes reading one address: 1.
int64_t smem_wavefronts(const Arch &arch, const std::vector<int64_t> &lane_addresses, int64_t access_bytes);

/// The work of one thread block as an SM runs it, for sm_time: warp
/// instructions by pipe, and the cycles all its warps wait with nothing to
/// issue (a memory fetch at a barrier), which other resident blocks may fill.
struct BlockWork {
  double fma = 0;              ///< FMA warp instructions (the CUDA-core math pipe)
  double other = 0;            ///< every other warp instruction (loads, stores, conversions, barriers)
  double smem_wavefronts = 0;  ///< L1/shared-memory wavefronts of banks x bank bytes (global loads
                               ///< through L1 count the bytes of the sectors they touch)
  double stall_cycles = 0;     ///< cycles the whole block waits (latency exposed at barriers)
};

/// An SM-level time estimate, and what bounds it.
struct SmTime {
  double us = 0;
  const char *bound = "";  ///< "fma", "issue", "shared memory" or "latency"
  int64_t rounds = 0;      ///< rounds of resident blocks on the busiest SM (the last may be partial)
};

/// Microseconds for `grid` blocks of `work`, each `threads` threads, spread
/// evenly over the SMs and run `occ.blocks_per_sm` at a time. A round of r
/// resident blocks takes the longer of
///   - their pipe time: r x the block's busiest pipe (FMA at the CUDA-core rate
///     peak_fp32_tflops gives per SM and clock, issue at warp_schedulers_per_sm
///     per clock, wavefronts at smem_bandwidth_gbps per SM and clock) plus a
///     tenth of the other pipes' time (an instruction mix never overlaps
///     perfectly; it also ranks tilings bound by the same pipe by their
///     slack), divided by the latency hiding of r blocks' warps (min(1, 4 x
///     resident fraction), as roofline_us);
///   - one block's own pipe time plus its stalls (what other blocks cannot fill);
/// the last, partial round counted at its own size (the tail effect).
/// Infinity when the block cannot run (occ.blocks_per_sm == 0).
SmTime sm_time(const Arch &arch, const BlockWork &work, int64_t grid, int64_t threads, const Occupancy &occ);

/// Divisors of n in increasing order (n >= 1).
std::vector<int64_t> divisors(int64_t n);

}  // namespace tessera::policies
