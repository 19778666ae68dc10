//===- policies/TensorCorePolicy.cpp - Tilings for the tensor-core GEMM -----===//
//
// Proposes matmul_tensor_core configs: block tiles {64, 128, 256}^2, warp
// layouts whose warp tiles are 32..128 x 32..128, K steps 32 and 64, 2 to 4
// stages, padded rows; each checked by TensorCoreConfig::validate (registers,
// shared memory) and scored by an estimate in microseconds:
//
//   compute  the flops of every tile the grid runs, wave by wave (a partial
//            last wave costs a whole one), at the Arch's mma.sync ceiling
//            (Arch::mma_sync_peak_tops) times an efficiency: per 16-wide K
//            slice a warp issues (wm/16)(wn/8) mma for wm/16 + wn/16 ldmatrix,
//            so small warp tiles spend their issue slots on loads; fewer
//            than 8 resident warps per SM leave tensor pipes idle; 2 stages
//            expose part of the copy latency;
//   memory   A re-read once per column of tiles and B once per row, at the
//            DRAM bandwidth;
//   score    max(compute, memory).
//
// Deterministic: the same problem and Arch give the same list.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>

#include "Policies.h"

#include "tessera/policies/CostModel.h"
#include "tessera/rules/MatmulTensorCore.h"

namespace tessera::policies {

namespace {

double mma_peak_tops(const Arch &arch, ir::DataType in) {
  for (const MmaSupport &s : arch.tensor_cores.mma)
    if (s.dtype == in.str() && s.accumulator == "float32") return arch.mma_sync_peak_tops(s);
  return 0;
}

class TensorCorePolicy final : public Policy {
 public:
  const char *name() const override { return "tensor_core"; }
  bool handles(const std::string &rule) const override { return rule == "matmul_tensor_core"; }

  std::vector<Candidate> propose(const ir::PrimFunc &, const rules::Rule &, const rules::Match &m, const Arch &arch,
                                 const ProposeOptions &options) const override {
    rules::TensorCoreProblem p = rules::tensor_core_problem(m);
    // A symbolic extent is scored at a typical size.
    const double M = p.m > 0 ? p.m : 1024, N = p.n > 0 ? p.n : 1024, K = p.k > 0 ? p.k : 1024;
    const double batch = p.batch > 0 ? p.batch : 1;
    const double peak = mma_peak_tops(arch, p.in) * 1e12;
    std::vector<Candidate> out;
    for (int64_t bm : {64, 128, 256})
      for (int64_t bn : {64, 128, 256})
        for (auto [wm, wn] : {std::pair<int64_t, int64_t>{1, 2}, {2, 1}, {2, 2}, {2, 4}, {4, 2}, {1, 4}, {4, 1}})
          for (int64_t bk : {32, 64})
            for (int64_t stages : {2, 3, 4}) {
              rules::TensorCoreConfig c;
              c.block_m = bm, c.block_n = bn, c.block_k = bk, c.warps_m = wm, c.warps_n = wn, c.stages = stages;
              c.pad = 8;
              if (c.warp_m() < 32 || c.warp_n() < 32 || c.warp_m() > 128 || c.warp_n() > 128) continue;
              try {
                c.validate(arch);
              } catch (const rules::ConfigError &) {
                continue;
              }
              Occupancy occ = occupancy(arch, {c.threads(), c.registers(), c.shared_bytes()});
              if (occ.blocks_per_sm == 0) continue;
              const double tiles = std::ceil(M / bm) * std::ceil(N / bn) * batch;
              const int64_t w = waves(arch, static_cast<int64_t>(tiles), occ);
              const double per_wave = double(occ.blocks_per_sm) * arch.compute.sm_count;
              const double slices = std::ceil(K / bk) * (bk / 16.0);
              const double mma = c.warp_m() / 16.0 * (c.warp_n() / 8.0), ldsm = c.warp_m() / 16.0 + c.warp_n() / 16.0;
              double eff = mma / (mma + 0.5 * ldsm);
              eff *= std::sqrt(std::min(1.0, double(occ.blocks_per_sm * c.warps()) / 8.0));
              if (stages == 2) eff *= 0.85;
              const double flops = double(w) * per_wave * 2.0 * bm * bn * slices * 16.0;
              const double compute_us = peak > 0 ? flops / (peak * eff) * 1e6 : 1e30;
              const double bytes =
                  (M * K * std::ceil(N / bn) + N * K * std::ceil(M / bm)) * batch * 2.0 + M * N * batch * 4.0;
              const double memory_us = bytes / (arch.memory.dram_bandwidth_gbps * 1e3);
              Candidate cand;
              cand.score = std::max(compute_us, memory_us);
              char why[160];
              std::snprintf(why, sizeof why, "%lld waves of %.0f blocks, mma efficiency %.2f, compute %.1f us, dram %.1f us",
                            static_cast<long long>(w), per_wave, eff, compute_us, memory_us);
              cand.why = why;
              cand.config = std::make_unique<rules::TensorCoreConfig>(c);
              out.push_back(std::move(cand));
            }
    std::stable_sort(out.begin(), out.end(), [](const Candidate &a, const Candidate &b) { return a.score < b.score; });
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
