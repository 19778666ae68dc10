//===- policies/TensorCorePolicy.cpp - Tilings for the tensor-core GEMM -----===//
//
// Proposes matmul_tensor_core configs: block tiles {64, 128, 256}^2, warp
// layouts whose warp tiles are 32..128 x 32..128, K steps of 64 and 128
// bytes (32 and 64 16-bit elements, 64 and 128 int8, 16 and 32 tf32), 2 to
// 4 stages, float16 accumulators where rules::preferred_acc_bytes says so,
// rows XOR-swizzled or padded by 16 bytes (tf32: padded only; both
// conflict-free for ldmatrix: the model cannot tell them apart but by the
// shared memory the padding takes, so both reach the measurement, swizzled
// first: on the H100 run of 2026-11-27 the fastest of the top-20 was a
// swizzled config for float16 1024^3, 2048^3 and 4096^3, 1.19-2.08x the
// padded top-1); each checked by TensorCoreConfig::validate (registers,
// shared memory) and scored by an estimate in microseconds:
//
//   compute  the flops of every tile the grid runs, wave by wave (a partial
//            last wave costs a whole one), at the Arch's mma.sync ceiling
//            (Arch::mma_sync_peak_tops) times an efficiency: the share of a
//            warp's issue slots per K tile that are mma, against ldmatrix
//            (wm/16 + wn/16 per 16-wide slice), its cp.async share and a
//            wait + barrier, so small warp tiles and short K steps lose;
//            fewer than 8 resident warps per SM leave tensor pipes idle; 2
//            stages expose part of the copy latency (H100 run 4: 2-stage
//            configs were 3-8% slower than 3-stage ones);
//   memory   each wave reads the A rows and B columns of its tiles once
//            (its blocks walk K together; the live slices sit in L2), at the
//            DRAM bandwidth; block rasterization (panels of 4, 8 or 16 tile
//            rows) is set where that traffic takes over half the compute
//            time and a panel cuts it by a tenth or more;
//   L2       every block reads its A rows and B columns from L2, at the
//            Arch's L2 bandwidth (ArchMemory::l2_bandwidth): the bound of
//            small tiles of a large GEMM (H100, 8192^3 float16 by wgmma:
//            64 x 128 tiles at 2950 us, 128 x 256 at 1860; the DRAM model
//            alone ranked the first ahead);
//   score    max(compute, memory, L2).
//
// Hopper (Arch tensor_cores.wgmma, 16-bit inputs in any layout or int8
// with both operands K-major, into 32-bit accumulators): the wgmma kernel
// too, block 64 or 128
// (one warpgroup per 64 rows) x 64/128/256, 128-byte K rows, 2 to 6 stages,
// scored at the wgmma peak (the Arch's, not derated) times kWgmmaEfficiency
// (and occupancy: a second warpgroup or block fills the tensor pipe while
// one waits at its barrier), or by the shared-memory bandwidth its tiles
// take at every K step when that is longer. Where the Arch has TMA and TMA
// can copy both tiles (ProposeOptions::tensor_map_kernels on), each such
// config is followed by its warp-specialised, TMA-fed twin and, where the
// tiles outnumber the blocks the GPU holds at once, that twin made
// persistent (a block per slot walking its tiles), scored by the same model
// (not yet calibrated apart: no GPU has timed them).
//
// Where both kernels are proposed, each keeps at least half of the top-k
// (the model is not calibrated between them; the measurement decides).
//
// Deterministic: the same problem and Arch give the same list.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <optional>

#include "Policies.h"

#include "tessera/policies/CostModel.h"
#include "tessera/rules/MatmulTensorCore.h"

namespace tessera::policies {

namespace {

double mma_peak_tops(const Arch &arch, ir::DataType in, int64_t acc_bytes) {
  const MmaSupport *s = rules::tensor_core_mma(arch, in, acc_bytes);
  return s ? arch.mma_sync_peak_tops(*s) : 0;
}

/// The Arch's tensor-core peak, which wgmma reaches (float32 or int32 accumulators).
double wgmma_peak_tops(const Arch &arch, ir::DataType in) {
  const MmaSupport *s = rules::tensor_core_mma(arch, in, 4);
  return s ? s->peak_tops : 0;
}

/// What the wgmma kernel (stage 2a: cp.async-fed, waited each K tile, no
/// warp specialisation) reaches of the wgmma peak with its pipes full:
/// measured on the H100 (2026-11-27, 128 x 256 tiles, 4096^3): float16
/// 241 us and int8 118 us against the 0.7 this was first, 0.59 and 0.61.
constexpr double kWgmmaEfficiency = 0.6;

class TensorCorePolicy final : public Policy {
 public:
  const char *name() const override { return "tensor_core"; }
  bool handles(const std::string &rule) const override { return rule == "matmul_tensor_core"; }

  std::vector<Candidate> propose(const ir::PrimFunc &, const rules::Rule &, const rules::Match &m, const Arch &arch,
                                 const ProposeOptions &options) const override {
    rules::TensorCoreProblem p = rules::tensor_core_problem(m);
    // A symbolic extent is scored at its size in options (the hint, or a
    // dynamic plan's cell).
    const double M = double(sized_extent(p.m_extent, options)), N = double(sized_extent(p.n_extent, options));
    const double K = double(sized_extent(p.k_extent, options)), batch = double(sized_extent(p.batch_extent, options));
    const int64_t acc_bytes = rules::preferred_acc_bytes(arch, p);
    // The estimate of one config; its raster (panels of tile rows) chosen
    // here where `choose_raster` (a proposal: the candidate with its config
    // and explanation), else the config's own (an estimate: the score alone).
    auto evaluate = [&](rules::TensorCoreConfig c, bool choose_raster) -> std::optional<Candidate> {
      const int64_t bm = c.block_m, bn = c.block_n, bk = c.block_k, in_bytes = c.in_bytes;
      const double peak = (c.wgmma ? wgmma_peak_tops(arch, p.in) : mma_peak_tops(arch, p.in, c.acc_bytes)) * 1e12;
      Occupancy occ = occupancy(arch, {c.threads(), c.launch_registers(), c.shared_bytes()});
      if (occ.blocks_per_sm == 0) return std::nullopt;
      const double tiles_y = std::ceil(M / bm), tiles_x = std::ceil(N / bn);
      const double tiles = tiles_y * tiles_x * batch;
      const int64_t w = waves(arch, static_cast<int64_t>(tiles), occ);
      const double per_wave = double(occ.blocks_per_sm) * arch.compute.sm_count;
      const double k_tiles = std::ceil(K / bk);
      // Issue slots per warp and K tile: the mma themselves, ldmatrix
      // (half an mma each), the cp.async of the thread's share of the
      // tiles (a quarter each) and the wait + barrier (about 32).
      const double mma_k = double(c.mma_k());
      const double mma = c.warp_m() / 16.0 * (c.warp_n() / 8.0) * (bk / mma_k);
      // tf32 fragments are loaded and rounded element by element (six per
      // m16n8 pair of tiles; a load and three integer operations each,
      // counted as two ldmatrix).
      const double ldsm = in_bytes == 4 ? (c.warp_m() / 16.0 * 4 + c.warp_n() / 8.0 * 2) * 2 * (bk / mma_k)
                                        : (c.warp_m() / 16.0 + c.warp_n() / 16.0) * (bk / mma_k);
      const double copies = double(bm + bn) * bk * in_bytes / 16.0 / double(c.threads());
      double eff = mma / (mma + 0.5 * ldsm + 0.25 * copies + 32.0);
      // Fewer than 8 resident warps leave tensor pipes idle; 2 stages
      // expose part of each copy's latency.
      eff *= std::sqrt(std::min(1.0, double(occ.blocks_per_sm * c.warps()) / 8.0));
      if (c.wgmma) {
        // One warpgroup instruction per K step, no fragments; each K tile
        // waits for its wgmma before the barrier that lets the stage be
        // refilled, so the tensor pipe idles for a barrier per tile unless
        // a second warpgroup (or block) fills it.
        eff = kWgmmaEfficiency * std::sqrt(std::min(1.0, double(occ.blocks_per_sm * bm / 64) / 2.0));
      }
      if (c.stages == 2) eff *= 0.85;
      const double flops = double(w) * per_wave * 2.0 * bm * bn * k_tiles * bk;
      double compute_us = peak > 0 ? flops / (peak * eff) * 1e6 : 1e30;
      if (c.wgmma) {
        // wgmma reads its tiles from shared memory at every K step (each
        // warpgroup its 64 A rows and all block_n B rows), on top of the
        // cp.async writes: small tiles are bound by shared-memory bandwidth
        // (64 x 64: about as many bytes per step as the tensor core's time).
        const double per_tile = (double(bm / 64) * (64 + bn) + double(bm + bn)) * double(bk * in_bytes);
        const double smem_us = double(w) * per_wave * k_tiles * per_tile / (arch.memory.smem_bandwidth_gbps * 1e3);
        compute_us = std::max(compute_us, smem_us);
      }
      // DRAM: the blocks of a wave walk K together, so each wave reads the
      // A rows and B columns of its tiles once (the live K slices of them
      // sit in L2). Row-major order makes a wave a few full tile rows;
      // panels of P tile rows (raster) shrink what it reads when that is less.
      const double c_bytes = M * N * 4.0 * batch;
      auto wave_bytes = [&](double rows, double cols) { return (rows * bm + cols * bn) * K * double(in_bytes); };
      const double row_major = wave_bytes(std::min(tiles_y, std::ceil(per_wave / tiles_x)), std::min(tiles_x, per_wave));
      auto panel_bytes = [&](double panel) { return wave_bytes(panel, std::min(tiles_x, std::ceil(per_wave / panel))); };
      double best = row_major;
      if (choose_raster) {
        c.raster = 0;
        const double dram_us_per_byte = 1.0 / (arch.memory.dram_bandwidth_gbps * 1e3);
        const bool memory_matters = double(w) * best * dram_us_per_byte > 0.5 * compute_us;
        for (int64_t panel : {4, 8, 16}) {
          if (!memory_matters || panel >= tiles_y) continue;
          double b = panel_bytes(double(panel));
          if (b < 0.9 * best) best = b, c.raster = panel;
        }
      } else if (c.raster > 0 && double(c.raster) < tiles_y) {
        best = panel_bytes(double(c.raster));
      }
      const double bytes = double(w) * best + c_bytes;
      const double memory_us = bytes / (arch.memory.dram_bandwidth_gbps * 1e3);
      const double l2_us = tiles * k_tiles * double((bm + bn) * bk * in_bytes) / (arch.memory.l2_bandwidth() * 1e3);
      Candidate cand;
      cand.score = std::max({compute_us, memory_us, l2_us});
      if (!choose_raster) return cand;
      char why[192];
      std::snprintf(why, sizeof why,
                    "%lld waves of %.0f blocks, mma efficiency %.2f, compute %.1f us, dram %.1f us, l2 %.1f us",
                    static_cast<long long>(w), per_wave, eff, compute_us, memory_us, l2_us);
      cand.why = why;
      cand.config = std::make_unique<rules::TensorCoreConfig>(c);
      return cand;
    };
    if (options.score_only)
      return score_only<rules::TensorCoreConfig>(*options.score_only, [&](const rules::TensorCoreConfig &c) {
        std::optional<Candidate> e = evaluate(c, false);
        return e ? e->score : std::numeric_limits<double>::quiet_NaN();
      });
    std::vector<Candidate> out;
    const int64_t in_bytes = p.in.bytes();
    // A config's tiles given: the workload's facts filled in, kept if valid
    // (then true).
    auto consider = [&](rules::TensorCoreConfig c) {
      c.in_bytes = in_bytes;
      c.a_elementwise = p.a_elementwise, c.b_elementwise = p.b_elementwise;
      try {
        c.validate(arch);
      } catch (const rules::ConfigError &) {
        return false;
      }
      std::optional<Candidate> e = evaluate(c, true);
      if (e) out.push_back(std::move(*e));
      return e.has_value();
    };
    for (int64_t bm : {64, 128, 256})
      for (int64_t bn : {64, 128, 256})
        for (auto [wm, wn] : {std::pair<int64_t, int64_t>{1, 2}, {2, 1}, {2, 2}, {2, 4}, {4, 2}, {1, 4}, {4, 1}})
          for (int64_t bk_bytes : {64, 128})
            for (int64_t stages : {2, 3, 4})
              for (bool swizzle : {true, false}) {
                if (swizzle && in_bytes == 4) continue;  // tf32 tiles are padded
                rules::TensorCoreConfig c;
                c.acc_bytes = acc_bytes;
                c.block_m = bm, c.block_n = bn, c.block_k = bk_bytes / in_bytes, c.warps_m = wm, c.warps_n = wn;
                c.stages = stages;
                c.pad = swizzle ? 0 : 16 / in_bytes;
                c.swizzle = swizzle;
                if (c.warp_m() < 32 || c.warp_n() < 32 || c.warp_m() > 128 || c.warp_n() > 128) continue;
                consider(c);
              }
    // Hopper: the wgmma kernel where the Arch has it and it reads the
    // operands as they are (16-bit: K- or MN-major; int8: K-major),
    // float32/int32 accumulators. (An int8 M- or N-major operand would be
    // transposed on its way in: a config may ask for it, but the policy does
    // not propose what it cannot yet estimate against the measured mma.sync
    // configs.)
    if (options.hopper_kernels && arch.tensor_cores.wgmma && acc_bytes == 4 &&
        (in_bytes == 2 || (in_bytes == 1 && p.k_major)))
      // (block_m, warps_m): two warpgroups of two m64 subtiles each, two of
      // one, one of one; the larger tiles first where the estimates tie
      // (more reuse).
      for (auto [bm, wm] : {std::pair<int64_t, int64_t>{256, 8}, {128, 8}, {64, 4}})
        for (int64_t bn : {256, 128, 64})
          for (int64_t stages : {2, 3, 4, 5, 6}) {
            rules::TensorCoreConfig c;
            c.wgmma = true;
            c.acc_bytes = 4;
            c.block_m = bm, c.block_n = bn, c.block_k = 128 / in_bytes;
            c.warps_m = wm, c.warps_n = 1, c.stages = stages, c.pad = 0, c.swizzle = true;
            consider(c);
            // Its Hopper-native twin where TMA can copy both tiles: fed by
            // TMA, warp specialised (a producer warpgroup), right after it
            // with the same estimate (the model does not tell the two apart
            // until a GPU has measured them), so both are timed. (The
            // TMA-fed kernel without a producer warpgroup is a config away.)
            // (An M- or N-major tile arrives in 64-element spans.)
            if (options.tensor_map_kernels && arch.memory.tma && p.tma_copyable &&
                (p.a_k_major || c.block_m % 64 == 0) && (p.b_k_major || c.block_n % 64 == 0)) {
              c.tma = c.warp_specialized = true;
              consider(c);
              // And persistent where the tiles outnumber the blocks the GPU
              // holds at once: that many blocks, each walking its tiles, the
              // producer filling the next tile's stages during this one's
              // epilogue (same estimate: the model does not see the
              // epilogue or the pipeline's fill).
              const Occupancy occ = occupancy(arch, {c.threads(), c.launch_registers(), c.shared_bytes()});
              const int64_t slots = occ.blocks_per_sm * arch.compute.sm_count;
              if (slots > 0 && std::ceil(M / double(c.block_m)) * std::ceil(N / double(c.block_n)) * batch > slots) {
                c.persistent = slots;
                // Its epilogue by TMA store where the output allows it and
                // the slots fit (the persistent kernel is the one whose
                // epilogue overlaps the next tile's copies; the other twin
                // keeps the lanes' stores, so both kinds are measured).
                c.tma_store = p.tma_storable && c.block_n * p.out_bytes % 128 == 0;
                if (!consider(c) && c.tma_store) {
                  c.tma_store = false;
                  consider(c);
                }
              }
            }
          }
    auto by_score = [](const Candidate &a, const Candidate &b) { return a.score < b.score; };
    std::stable_sort(out.begin(), out.end(), by_score);
    // Two kernel families whose relative speed the model has not been
    // calibrated on (wgmma against mma.sync): each keeps at least half of
    // the top-k, so the measurement compares the best of both.
    auto is_wgmma = [](const Candidate &c) { return static_cast<const rules::TensorCoreConfig &>(*c.config).wgmma; };
    const int64_t half = options.topk / 2;
    int64_t wgmma_count = 0, mma_count = 0;
    for (const Candidate &c : out) (is_wgmma(c) ? wgmma_count : mma_count) += 1;
    if (wgmma_count > 0 && mma_count > 0) {
      const int64_t keep_mma = std::min(mma_count, std::max(half, options.topk - wgmma_count));
      const int64_t keep_wgmma = std::min(wgmma_count, options.topk - keep_mma);
      std::vector<Candidate> kept;
      int64_t taken_wgmma = 0, taken_mma = 0;
      for (Candidate &c : out) {
        int64_t &taken = is_wgmma(c) ? taken_wgmma : taken_mma;
        if (taken < (is_wgmma(c) ? keep_wgmma : keep_mma)) ++taken, kept.push_back(std::move(c));
      }
      out = std::move(kept);
    }
    if (static_cast<int64_t>(out.size()) > options.topk) out.resize(static_cast<size_t>(options.topk));
    return out;
  }
};

}  // namespace

const Policy &tensor_core_policy() {
  static const TensorCorePolicy p;
  return p;
}

}  // namespace tessera::policies
