//===- policies/SimtGemmModel.h - What a SIMT GEMM tiling costs -------------===//
//
// Private to policies/. The estimate the GEMM policy ranks tilings by, for
// the loop structure of rules/GemmSchedule.h (the matmul rule, and the conv2d
// rule's GEMM view): a block of threads_y x threads_x threads computes
// thread_m x thread_n outputs per thread; per K step every thread fetches
// vector-wide chunks of the A and B tiles into shared memory between two
// barriers, then for each of the step's reduce iterations loads its A values
// (thread_m scalar loads, or vector loads when A is stored K-major) and its
// B slice (vector loads) from shared memory and issues thread_m x thread_n
// FMAs. Two estimates, the slower wins plus a tenth of the other (the
// overlap is never perfect):
//
//   SM time   (CostModel sm_time) per block, in warp instructions and
//             shared-memory wavefronts: FMAs; loads, conversions and the
//             fetch's moves and barriers; wavefronts of the compute reads
//             (CostModel smem_wavefronts of the lanes' addresses: B slices
//             side by side along threadIdx.x, A rows broadcast along it and
//             apart by the padded pitch across threadIdx.y), of
//             the fetch's global loads (the sectors each tile row touches) and
//             of its shared stores (an A gather's index arithmetic per move
//             too); plus one global-memory round trip per K
//             step that the block waits out at its barrier (one pipeline
//             stage) unless other resident blocks fill it; with S > 1
//             stages only what S - 1 steps of the block's own issue do not
//             cover (and the first fetch whole). Tiles past the
//             problem's edges still issue (predicated), so padding costs its
//             share here;
//   DRAM time (CostModel roofline_us) of the operand traffic with L2 reuse:
//             the blocks of one wave (resident at once, launched in order with
//             blockIdx.x fastest) share A row panels and B column panels, read
//             from DRAM once when the wave's panels fit in half the L2 (the
//             other half holds the output and what other waves left); B is
//             read once in all when a whole B fits there too. Above that the
//             reuse falls in proportion and the rest is each block's own
//             reload (M N K (a_bytes / block_n + b_bytes / block_m), sector
//             rounded); plus the output written once.
//
//   SimtGemm g = ...;                       // from a MatmulConfig or Conv2dConfig
//   GemmEstimate e = estimate(arch, g);     // e.us, e.sm.bound, e.dram_bytes, ...
//   std::string why = explain(g, e);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/arch/Arch.h"
#include "tessera/policies/CostModel.h"

namespace tessera::policies {

/// One operand's shared tile per K step: `rows` rows of `run` contiguous
/// elements of `bytes` each (clipped to the problem), moved `vector` at a time.
struct TileFetch {
  int64_t rows = 1, run = 1, bytes = 4, vector = 1;
};

/// A SIMT GEMM launch (see the file comment).
struct SimtGemm {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1;  ///< blocks along N, along M, along the batch
  int64_t threads_x = 1, threads_y = 1;        ///< threads along N and along M
  int64_t thread_m = 1, thread_n = 1;          ///< outputs per thread
  int64_t k_steps = 1;                         ///< K steps per block
  int64_t k_per_step = 1;  ///< reduce iterations per K step (the step as tiled, past the edge too)
  int64_t stages = 1;      ///< shared tiles in flight (> 1: a cp.async pipeline over the K steps)
  int64_t registers = 0;   ///< per thread
  int64_t smem_bytes = 0;  ///< per block
  int64_t acc_bytes = 4;
  bool a_fragment = false;  ///< a thread's A values move as vectors (A stored K-major)
  /// Byte address in the A tile each lane of a warp reads (its first row) in
  /// one reduce iteration, the tile's row pitch and pad included; empty: one
  /// wavefront per load, what a good pad gives (the first pass, before pads).
  /// Unused for an A fragment, whose lanes read thread_m contiguous values.
  std::vector<int64_t> a_lanes;
  TileFetch a, b;  ///< the tiles fetched per K step
  /// Instructions each A move issues beyond its load, store and address
  /// step: the implicit GEMM's gather (the fused M and K indices divided
  /// back into pixel and window coordinates, the window bounds); 0 for a
  /// plain tile.
  int64_t a_gather_ops = 0;
  double a_panel_bytes = 0;    ///< one block's A over the whole reduction, as DRAM sectors
  double b_panel_bytes = 0;    ///< one block's B over the whole reduction, as DRAM sectors
  bool b_per_z = true;         ///< B differs along grid z (a batched matmul)
  double c_bytes = 0;          ///< the output written, as DRAM sectors
  double flops = 0;            ///< useful work, a multiply-add counted 2
  double padded_fraction = 0;  ///< issued outputs x reduce steps past the problem / issued
};

struct GemmEstimate {
  double us = 0;
  double dram_bytes = 0;
  Occupancy occ;
  SmTime sm;
  double dram_us = 0;
};

/// What a warp's compute reads of one reduce iteration cost: they depend on
/// the thread tiling and the A pad, not on the block tile or the K step, so a
/// search computes them once per thread tiling.
struct WarpReads {
  double a_loads = 0, a_wavefronts = 0, b_loads = 0, b_wavefronts = 0;
};
WarpReads warp_reads(const Arch &arch, const SimtGemm &g);

/// The estimate for `g` on `arch` (us is infinity when a block cannot run),
/// with its reads as warp_reads(arch, g) gives them.
GemmEstimate estimate(const Arch &arch, const SimtGemm &g, const WarpReads &reads);
GemmEstimate estimate(const Arch &arch, const SimtGemm &g);

/// "487.12 us (35.3 TFLOP/s): latency-bound, 1 rounds x 1 blocks/SM
/// (registers); DRAM 131.1 MB 40.35 us; 512 threads, 8x8 each, 0% padding"
std::string explain(const SimtGemm &g, const GemmEstimate &e);

}  // namespace tessera::policies
