//===- policies/SimtGemmModel.cpp - What a SIMT GEMM tiling costs -----------===//
#include "SimtGemmModel.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tessera::policies {

namespace {

/// The round trip of a global load a block waits for at each K step's
/// barrier, in SM clocks: an L2 hit takes about 200 to 300 and a DRAM access
/// about 450 to 700 on every GPU from Volta to Hopper (published
/// microbenchmarks); the tiles come mostly from L2. A property of the memory
/// system Arch does not describe; it only ranks K steps and occupancy
/// against each other (fewer, longer steps and more resident blocks hide it).
constexpr double kFetchLatencyCycles = 400;

/// The share of the shorter of SM time and DRAM time added to the longer.
constexpr double kTransferOverlapLoss = 0.1;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// DRAM bytes of the operands and the output (see the file comment).
double dram_traffic(const Arch &arch, const SimtGemm &g, const Occupancy &occ) {
  const double grid = double(g.grid_x * g.grid_y * g.grid_z);
  const double slots = double(std::max<int64_t>(occ.blocks_per_sm, 1) * arch.compute.sm_count);
  const double wave = std::min(grid, slots);
  const double cols = std::min(double(g.grid_x), wave);
  const double rows = std::min(std::ceil(wave / double(g.grid_x)), double(g.grid_y * g.grid_z));
  const double waves = std::ceil(grid / wave);
  const double share = double(arch.memory.l2_bytes) / 2;
  const double own = grid * (g.a_panel_bytes + g.b_panel_bytes);
  const double a_once = double(g.grid_y * g.grid_z) * g.a_panel_bytes;
  const double b_whole = double(g.grid_x) * g.b_panel_bytes;
  const double b_once = (g.b_per_z ? double(g.grid_z) : 1.0) * b_whole;
  const double b_reuse =
      b_whole <= share ? b_once : std::min(grid * g.b_panel_bytes, waves * cols * g.b_panel_bytes);
  const double reuse = a_once + b_reuse;
  const double footprint = rows * g.a_panel_bytes + cols * g.b_panel_bytes;
  const double kept = footprint <= share ? 1.0 : share / footprint;
  return kept * reuse + (1 - kept) * std::max(own, reuse) + g.c_bytes;
}

}  // namespace

WarpReads warp_reads(const Arch &arch, const SimtGemm &g) {
  WarpReads r;
  const int64_t warp = std::max(arch.compute.warp_size, 1);
  const int64_t lanes = std::min(warp, g.threads_x * g.threads_y);
  const int64_t max_move = std::max(arch.memory.max_vector_bytes, 1);
  // A warp's lanes: threadIdx.x fastest.
  std::vector<int64_t> lanes_at(static_cast<size_t>(lanes));
  auto wavefronts = [&](auto &&address, int64_t access) {
    for (int64_t l = 0; l < lanes; ++l) lanes_at[static_cast<size_t>(l)] = address(l);
    return double(smem_wavefronts(arch, lanes_at, access));
  };
  auto row_of = [&](int64_t l) { return std::min(l / g.threads_x, g.threads_y - 1); };
  if (g.a_fragment) {
    const int64_t bytes = g.thread_m * g.a.bytes;
    r.a_loads = double(ceil_div(bytes, max_move));
    r.a_wavefronts =
        r.a_loads * wavefronts([&](int64_t l) { return row_of(l) * bytes; }, std::min(bytes, max_move));
  } else {
    r.a_loads = double(g.thread_m);  // one scalar per row, broadcast along threadIdx.x
    r.a_wavefronts =
        g.a_lanes.empty() ? r.a_loads : r.a_loads * double(smem_wavefronts(arch, g.a_lanes, g.a.bytes));
  }
  const int64_t b_bytes = g.thread_n * g.b.bytes;
  r.b_loads = double(ceil_div(b_bytes, max_move));
  r.b_wavefronts = r.b_loads * wavefronts([&](int64_t l) { return (l % g.threads_x) * b_bytes; },
                                          std::min(b_bytes, max_move));
  return r;
}

GemmEstimate estimate(const Arch &arch, const SimtGemm &g) {
  return estimate(arch, g, warp_reads(arch, g));
}

GemmEstimate estimate(const Arch &arch, const SimtGemm &g, const WarpReads &reads) {
  GemmEstimate e;
  const int64_t warp = std::max(arch.compute.warp_size, 1);
  const int64_t threads = g.threads_x * g.threads_y;
  const int64_t warps = ceil_div(threads, warp);
  const int64_t grid = g.grid_x * g.grid_y * g.grid_z;
  e.occ = occupancy(arch, {threads, g.registers, g.smem_bytes});
  const double wavefront = double(std::max(arch.memory.smem_banks * arch.memory.smem_bank_bytes, 1));

  // Per reduce iteration and warp.
  const double fma = double(g.thread_m * g.thread_n);
  // Operands wider or narrower than the accumulator are converted once per value.
  const double converts =
      double(g.a.bytes != g.acc_bytes ? g.thread_m : 0) + double(g.b.bytes != g.acc_bytes ? g.thread_n : 0);
  const double per_k_other = reads.a_loads + reads.b_loads + converts + 1;  // + the loop's address step

  // Per K step: every thread moves its chunks (a global load, a shared
  // store and their address arithmetic), two barriers.
  auto moves = [&](const TileFetch &t) {
    return double(ceil_div(t.rows * t.run, threads * std::max<int64_t>(t.vector, 1)));
  };
  auto fetch_wavefronts = [&](const TileFetch &t) {
    return double(sector_bytes(arch, t.rows, t.run, t.bytes)) / wavefront +
           std::ceil(double(t.rows * t.run * t.bytes) / wavefront);
  };
  const double per_step_other = double(4 + g.a_gather_ops) * moves(g.a) + 4 * moves(g.b) + 2;
  const double per_step_wavefronts = fetch_wavefronts(g.a) + fetch_wavefronts(g.b);

  const double iters = double(g.k_steps * g.k_per_step);
  BlockWork work;
  work.fma = double(warps) * iters * fma;
  // The write-back: one store per output (vectors aside), after the loop.
  work.other = double(warps) * (iters * per_k_other + double(g.k_steps) * per_step_other + fma);
  work.smem_wavefronts = double(warps) * iters * (reads.a_wavefronts + reads.b_wavefronts) +
                         double(g.k_steps) * per_step_wavefronts;
  work.stall_cycles = double(g.k_steps) * kFetchLatencyCycles;
  if (g.stages > 1) {
    // The fetch of step t + S - 1 is issued before step t computes: a step
    // waits only for what S - 1 steps of the block's own issue leave of the
    // round trip; the first fetch is waited out whole.
    const double issue_rate = double(std::max(arch.compute.warp_schedulers_per_sm, 1));
    const double step_cycles = (work.fma + work.other) / issue_rate / double(std::max<int64_t>(g.k_steps, 1));
    const double exposed = std::max(0.0, kFetchLatencyCycles - double(g.stages - 1) * step_cycles);
    work.stall_cycles = kFetchLatencyCycles + double(std::max<int64_t>(g.k_steps - 1, 0)) * exposed;
  }
  e.sm = sm_time(arch, work, grid, threads, e.occ);

  e.dram_bytes = dram_traffic(arch, g, e.occ);
  e.dram_us = roofline_us(arch, {e.dram_bytes, 0, grid, false}, e.occ);
  // DRAM transfers overlap the SMs' work, but not perfectly (as sm_time's pipes).
  e.us = std::max(e.sm.us, e.dram_us) + kTransferOverlapLoss * std::min(e.sm.us, e.dram_us);
  return e;
}

std::string explain(const SimtGemm &g, const GemmEstimate &e) {
  const int64_t threads = g.threads_x * g.threads_y;
  if (!std::isfinite(e.us))
    return fmt::format("does not fit on an SM: {} threads, {} registers each, {} bytes of shared memory",
                       threads, g.registers, g.smem_bytes);
  return fmt::format(
      "{:.2f} us ({:.1f} TFLOP/s): {}-bound, {} rounds x {} blocks/SM ({}); DRAM {:.1f} MB {:.2f} us; {} "
      "threads, {}x{} each, {:.0f}% padding",
      e.us, g.flops / e.us / 1e6, e.dram_us > e.sm.us ? "DRAM" : e.sm.bound, e.sm.rounds, e.occ.blocks_per_sm,
      e.occ.limit, e.dram_bytes / 1e6, e.dram_us, threads, g.thread_m, g.thread_n, 100 * g.padded_fraction);
}

}  // namespace tessera::policies
