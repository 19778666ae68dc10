//===- policies/GemmPolicy.cpp - Roller-style tilings for the SIMT GEMM rules ===//
//
// The policy for the rules that run rules/GemmSchedule.h's shared-memory GEMM
// on CUDA cores: matmul and conv2d. Roller (ROLLER_DLIGHT.md section 2) grows
// one tile greedily, scores with DRAM traffic and waves only, caps shared
// memory at the 48 KB static limit, takes divisors or padding without
// weighing them and prefers 128 threads by rule. Here instead every tiling in
// a small, transaction-aware space is scored by one model that also sees the
// SM (policies/SimtGemmModel.h: FMA, issue and shared-memory pipes, fetch
// latency per K step, occupancy from the real register and shared-memory
// estimates against the opt-in maximum, the tail round, padding issued past
// the edges), which decides the thread count and the thread tile:
//
//   block tiles  each dimension: the powers of two up to the first that
//                covers the extent, the extent's divisors (no padding) and the
//                extent itself; a dimension contiguous in memory only in whole
//                sectors (block_n x bytes a multiple of 32 B) or covering the
//                extent;
//   thread tiles divisors of the block tile (up to 16 x 8), the thread count
//                a multiple of the warp, at most the block limit;
//   conv2d forms the direct form (block_h x block_w pixel tiles, K steps of
//                input channels over the whole window) and, when every
//                extent is constant, the implicit GEMM (the matmul's tiles
//                over M = images x out_h x out_w, N = out_c, K = window x
//                in_c; its model re-reads each input pixel once per window
//                tap and issues the gather's index arithmetic per A move),
//                each form finished on its own, then ranked together with
//                at least a quarter of the top k from each (merge_forms);
//   K steps      the same sizes over K (input channels for direct conv2d), growing
//                while the tiles fit the opt-in shared memory and the unrolled
//                K step stays small enough to compile in a second or two;
//   stages       each K step unpipelined and, where the GPU has
//                cp.async, as a 2- and 3-stage pipeline (that many copies of
//                the tiles in shared memory, the fetch latency hidden behind
//                the steps in flight); not for a padded convolution, whose
//                input gather goes through registers (ptxas hoists the next
//                tile's loads over the compute and spills); per thread tiling only its best K step
//                and depth is kept, so that the top k are k different tilings;
//   layout       the rule's own vectors and pads for each of the best 2k
//                tilings (fit_matmul_layout, fit_conv2d_layout), with a
//                narrower A vector where the widest one's pads cannot keep the
//                A reads free of bank conflicts; rescored with the real bank
//                conflicts, validated; of tilings the model cannot tell apart
//                (same block tile and estimate) one is kept.
//
// Candidates are sorted by estimate, ties by the config's text (the first
// pass: by the tile sizes, the conv2d form first). A symbolic
// extent is sized for options.symbolic_hint; the rule masks any tiling and
// fit_*_layout keeps vector moves off a symbolic contiguous dimension, so
// every candidate runs for any value.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include "Policies.h"
#include "SimtGemmModel.h"

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/MatmulView.h"
#include "tessera/rules/Conv2d.h"
#include "tessera/rules/Matmul.h"

namespace tessera::policies {

namespace {

using rules::Conv2dConfig;
using rules::MatmulConfig;

constexpr int64_t kMaxBlockTile = 256;    ///< outputs along one dimension of a block
constexpr int64_t kMaxThreadM = 16;       ///< rows per thread
constexpr int64_t kMaxThreadN = 8;        ///< columns per thread
constexpr int64_t kMaxKStep = 128;        ///< reduce elements (input channels) per K step
constexpr int64_t kFinalistsPerPick = 2;  ///< tilings fitted and rescored per candidate asked for
constexpr int64_t kMaxSimtStages = 3;     ///< deepest matmul pipeline proposed (each stage a copy of the tiles)
/// FMAs in the unrolled K step of one thread (block_k x thread tile): NVRTC's
/// time grows with it, and the tuner compiles every candidate (for sm_90 on
/// the 2-core CPU machine, under load: about 10 s for a 128 x 8 x 8 body,
/// 1 to 2 s for 32 x 8 x 8).
constexpr int64_t kMaxUnrolledFmas = 2048;

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// Tile sizes along a dimension of `extent` (see the file comment): powers of
/// two up to the first covering it, divisors of a constant extent from
/// `min_divisor`, the extent itself; at most `cap`; a multiple of `align`
/// unless it covers the extent. Increasing.
std::vector<int64_t> tile_sizes(int64_t extent, bool symbolic, int64_t align, int64_t cap,
                                int64_t min_divisor = 8) {
  std::set<int64_t> s;
  for (int64_t p = 1; p <= cap; p *= 2) {
    s.insert(p);
    if (p >= extent) break;
  }
  if (!symbolic) {
    for (int64_t d : divisors(extent))
      if (d >= min_divisor && d <= cap) s.insert(d);
    if (extent <= cap) s.insert(extent);
  }
  std::vector<int64_t> out;
  for (int64_t v : s)
    if (v % std::max<int64_t>(align, 1) == 0 || v >= extent) out.push_back(v);
  return out;
}

/// Elements of `bytes` in one DRAM sector (1 when a sector holds less than one).
int64_t per_sector(const Arch &arch, int64_t bytes) {
  return std::max<int64_t>(1, arch.memory.sector_bytes / std::max<int64_t>(bytes, 1));
}

/// The widest power-of-two move of `bytes` elements (at most the arch's)
/// dividing `run`: the first pass's stand-in for the rule's vectors.
int64_t move_lanes(const Arch &arch, int64_t run, int64_t bytes) {
  int64_t v = std::max<int64_t>(1, arch.memory.max_vector_bytes / std::max<int64_t>(bytes, 1));
  while (v > 1 && run % v != 0) v /= 2;
  return v;
}

/// Whether a thread block of `threads` threads with `regs` registers each fits `arch`.
bool fits_registers(const Arch &arch, int64_t threads, int64_t regs) {
  return regs <= arch.limits.max_regs_per_thread && regs * threads <= arch.limits.regs_per_block;
}

/// A tiling's sizes, in a fixed order per rule (unused entries 0): the tie-break of the first pass.
using Key = std::array<int64_t, 7>;

/// A tiling scored in the first pass. `key` orders equal scores.
template <class C>
struct Scored {
  double us = 0;
  Key key{};
  C config;
};

/// What finish() needs of a rule's config type.
template <class C>
struct Hooks {
  std::function<void(C &)> fit;              ///< the rule's vectors and pads for the tiling
  std::function<SimtGemm(const C &)> model;  ///< the model, A reads at the config's pads
  std::function<Key(const C &)> block_tile;  ///< the block's tile and K step
};

/// The first pass's winners to candidates: the best `finalists` tilings get
/// the rule's layout, each also with a narrower A vector while the widest
/// leaves the A reads conflicting (its pads are multiples of the vector), are
/// validated and rescored, sorted by (estimate, text) and cut to `topk`;
/// among tilings the model cannot tell apart (the same block tile and
/// estimate: thread tiles of one shape turned around) only the first is kept.
template <class C>
std::vector<Candidate> finish(std::vector<Scored<C>> scored, const Arch &arch, int64_t topk,
                              const Hooks<C> &hooks) {
  std::sort(scored.begin(), scored.end(), [](const Scored<C> &a, const Scored<C> &b) {
    return std::tie(a.us, a.key) < std::tie(b.us, b.key);
  });
  const size_t finalists = static_cast<size_t>(std::max<int64_t>(topk, 1) * kFinalistsPerPick);
  struct Final {
    double us;
    std::string text;
    C config;
    std::string why;
  };
  std::vector<Final> finals;
  const Scored<C> *previous = nullptr;
  for (size_t i = 0; i < scored.size() && finals.size() < finalists; ++i) {
    if (previous && previous->us == scored[i].us &&
        hooks.block_tile(previous->config) == hooks.block_tile(scored[i].config))
      continue;  // indistinguishable from the one before
    previous = &scored[i];
    std::optional<Final> best;
    C c = scored[i].config;
    c.vector_a = c.vector_b = c.vector_c = 0;  // the widest
    for (int64_t cap = 0;;) {
      C x = c;
      x.vector_a = cap;
      hooks.fit(x);
      try {
        x.validate(arch);
      } catch (const rules::ConfigError &) {
        break;  // a pad that no longer fits the shared memory
      }
      const SimtGemm g = hooks.model(x);
      const WarpReads reads = warp_reads(arch, g);
      const GemmEstimate e = estimate(arch, g, reads);
      if (std::isfinite(e.us) && (!best || e.us < best->us)) best = Final{e.us, x.str(), x, explain(g, e)};
      if (reads.a_wavefronts <= reads.a_loads || x.vector_a <= 1) break;
      cap = x.vector_a / 2;
    }
    if (best) finals.push_back(std::move(*best));
  }
  std::sort(finals.begin(), finals.end(),
            [](const Final &a, const Final &b) { return std::tie(a.us, a.text) < std::tie(b.us, b.text); });
  std::vector<Candidate> out;
  const Final *last = nullptr;
  for (Final &f : finals) {
    if (static_cast<int64_t>(out.size()) >= topk) break;
    if (last && last->us == f.us && hooks.block_tile(last->config) == hooks.block_tile(f.config)) continue;
    out.push_back({std::make_unique<C>(f.config), f.us, f.why});
    last = &f;
  }
  return out;
}

/// The best of the K steps tried for one tiling, or nothing.
template <class C>
struct BestStep {
  std::optional<Scored<C>> best;
  void offer(double us, const Key &key, const C &c) {
    if (std::isfinite(us) && (!best || us < best->us)) best = Scored<C>{us, key, c};
  }
  /// Offers `c` unpipelined and, where the GPU has cp.async and `pipeline`
  /// allows, as 2- and 3-stage pipelines while they fit its shared memory,
  /// each scored by `score`; `c` is left unpipelined.
  template <class Score>
  void offer_stages(const Arch &arch, bool pipeline, C &c, const Key &key, Score &&score) {
    for (int64_t stages = 1; stages <= (arch.memory.cp_async && pipeline ? kMaxSimtStages : 1); ++stages) {
      c.stages = stages;
      if (c.shared_bytes() > arch.max_smem_per_block()) break;
      offer(score(c), key, c);
    }
    c.stages = 1;
  }
};

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

/// What the matmul schedule sees of a function (extents at the hint when symbolic).
struct MatmulProblem {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool m_symbolic = false, n_symbolic = false, k_symbolic = false;
  bool a_k_inner = true;  ///< A stored [.., M, K] ("n"), else [.., K, M]
  bool b_n_inner = true;  ///< B stored [.., K, N] ("n"), else [.., N, K]
  bool c_n_inner = true;  ///< the stored output's contiguous dimension is N
  int64_t out_bytes = 4;
};

/// The problem of the function's one reduction block, or why not.
analysis::MatchResult<MatmulProblem> matmul_problem(const ir::PrimFunc &f, const ProposeOptions &options) {
  using R = analysis::MatchResult<MatmulProblem>;
  analysis::FuncInfo info = analysis::analyze(f);
  std::vector<int> reds = info.reduction_blocks();
  if (reds.size() != 1) return R::fail("the function does not have one reduction block");
  auto v = analysis::match_matmul(info, reds[0]);
  if (!v) return R::fail(v.reason());
  if (v->m.size() != 1 || v->n.size() != 1 || v->k.size() != 1) return R::fail("not one iter per role");
  const analysis::BlockInfo &blk = info.blocks[reds[0]];
  MatmulProblem p;
  auto extent = [&](int iter, bool &symbolic) {
    const ir::Expr &extent = blk.iters[iter].dom.extent;
    symbolic = !ir::as_const_int(extent).has_value();
    return sized_extent(extent, options);
  };
  for (int it : v->batch) {
    bool symbolic = false;
    p.batch *= extent(it, symbolic);
  }
  p.m = extent(v->m[0], p.m_symbolic);
  p.n = extent(v->n[0], p.n_symbolic);
  p.k = extent(v->k[0], p.k_symbolic);
  p.a_k_inner = v->a.inner() == analysis::MatmulRole::K;
  p.b_n_inner = v->b.inner() == analysis::MatmulRole::N;
  p.c_n_inner = v->c.inner() == analysis::MatmulRole::N;
  const analysis::BlockInfo &last = v->epilogue.empty() ? blk : info.blocks[v->epilogue.back()];
  p.out_bytes = last.writes[0].buffer.dtype().bytes();
  return R(p);
}

/// The model of `c` on `p`; `banks`: with the A reads' addresses at c's pads
/// (the second pass), else one wavefront per A load.
SimtGemm matmul_model(const Arch &arch, const MatmulProblem &p, const MatmulConfig &c, bool banks) {
  SimtGemm g;
  g.grid_x = ceil_div(p.n, c.block_n);
  g.grid_y = ceil_div(p.m, c.block_m);
  g.grid_z = p.batch;
  g.threads_x = c.block_n / c.thread_n;
  g.threads_y = c.block_m / c.thread_m;
  g.thread_m = c.thread_m;
  g.thread_n = c.thread_n;
  g.k_steps = ceil_div(p.k, c.block_k);
  g.k_per_step = c.block_k;
  g.registers = c.registers();
  g.smem_bytes = c.shared_bytes();
  g.stages = c.stages;
  g.acc_bytes = c.acc_bytes;
  g.a_fragment = !p.a_k_inner;
  if (banks && p.a_k_inner) {
    // Thread row r reads row r x thread_m of the [block_m, pitch + pad] tile.
    const int64_t pitch = p.k <= c.block_k ? p.k : c.block_k;
    for (int64_t l = 0; l < std::min<int64_t>(arch.compute.warp_size, c.threads()); ++l)
      g.a_lanes.push_back(std::min(l / g.threads_x, g.threads_y - 1) * c.thread_m * (pitch + c.pad_a) *
                          c.a_bytes);
  }
  const int64_t em = std::min(c.block_m, p.m), en = std::min(c.block_n, p.n), ek = std::min(c.block_k, p.k);
  g.a = p.a_k_inner ? TileFetch{em, ek, c.a_bytes, c.vector_a} : TileFetch{ek, em, c.a_bytes, c.vector_a};
  g.b = p.b_n_inner ? TileFetch{ek, en, c.b_bytes, c.vector_b} : TileFetch{en, ek, c.b_bytes, c.vector_b};
  g.a_panel_bytes =
      double(p.a_k_inner ? sector_bytes(arch, em, p.k, c.a_bytes) : sector_bytes(arch, p.k, em, c.a_bytes));
  g.b_panel_bytes =
      double(p.b_n_inner ? sector_bytes(arch, p.k, en, c.b_bytes) : sector_bytes(arch, en, p.k, c.b_bytes));
  g.b_per_z = true;
  g.c_bytes = double(p.c_n_inner ? sector_bytes(arch, p.batch * p.m, p.n, p.out_bytes)
                                 : sector_bytes(arch, p.batch * p.n, p.m, p.out_bytes));
  g.flops = 2.0 * double(p.batch) * double(p.m) * double(p.n) * double(p.k);
  const double issued =
      double(g.grid_y * c.block_m) * double(g.grid_x * c.block_n) * double(g.k_steps * c.block_k);
  g.padded_fraction = 1 - double(p.m) * double(p.n) * double(p.k) / issued;
  return g;
}

/// Calls fn(bm, bn, tm, tn, threads) for every block tile of bms x bns and
/// thread tile tm x tn (divisors, at most kMaxThreadM x kMaxThreadN) whose
/// thread count is a whole number of warps within the block limit.
template <typename F>
void for_each_thread_tiling(const std::vector<int64_t> &bms, const std::vector<int64_t> &bns, const Arch &arch,
                            F &&fn) {
  const int64_t warp = arch.compute.warp_size;
  for (int64_t bm : bms)
    for (int64_t bn : bns)
      for (int64_t tm : divisors(bm)) {
        if (tm > kMaxThreadM) break;
        for (int64_t tn : divisors(bn)) {
          if (tn > kMaxThreadN) break;
          const int64_t threads = (bm / tm) * (bn / tn);
          if (threads % warp != 0 || threads > arch.limits.max_threads_per_block) continue;
          fn(bm, bn, tm, tn, threads);
        }
      }
}

std::vector<Candidate> propose_matmul(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m,
                                      const Arch &arch, const ProposeOptions &options) {
  auto def = rule.default_config(m, arch);
  auto problem = matmul_problem(f, options);
  if (!problem) return {};  // propose() falls back to the default config
  const MatmulProblem &p = *problem;
  if (options.score_only)
    return score_only<MatmulConfig>(*options.score_only, [&](const MatmulConfig &c) {
      const SimtGemm g = matmul_model(arch, p, c, true);
      return estimate(arch, g, warp_reads(arch, g)).us;
    });
  const auto &facts = dynamic_cast<const MatmulConfig &>(*def);
  // block_m is contiguous only in A stored [K, M]; block_n in B [K, N] and
  // the output; the K step in A [M, K] and B [N, K].
  const std::vector<int64_t> bms =
      tile_sizes(p.m, p.m_symbolic, p.a_k_inner ? 1 : per_sector(arch, facts.a_bytes), kMaxBlockTile);
  const std::vector<int64_t> bns = tile_sizes(
      p.n, p.n_symbolic, p.b_n_inner || p.c_n_inner ? per_sector(arch, facts.b_bytes) : 1, kMaxBlockTile);
  const std::vector<int64_t> bks = tile_sizes(
      p.k, p.k_symbolic,
      p.a_k_inner || !p.b_n_inner ? per_sector(arch, p.a_k_inner ? facts.a_bytes : facts.b_bytes) : 1,
      kMaxKStep);
  std::vector<Scored<MatmulConfig>> tilings;
  MatmulConfig c = facts;
  c.pad_a = c.pad_b = 0;
  c.unroll = true;
  c.stages = 1;
  for_each_thread_tiling(bms, bns, arch, [&](int64_t bm, int64_t bn, int64_t tm, int64_t tn, int64_t threads) {
    c.block_m = bm, c.block_n = bn, c.thread_m = tm, c.thread_n = tn;
    c.vector_c = move_lanes(arch, tn, p.out_bytes);
    BestStep<MatmulConfig> step;
    std::optional<WarpReads> reads;  // the same for every K step
    for (int64_t bk : bks) {
      if (bk * tm * tn > kMaxUnrolledFmas && bk != bks.front()) break;
      c.block_k = bk;
      c.vector_a = move_lanes(arch, p.a_k_inner ? std::min(bk, p.k) : std::min(bm, p.m), c.a_bytes);
      c.vector_b = p.b_n_inner ? move_lanes(arch, std::min(bn, p.n), c.b_bytes) : 1;
      if (c.shared_bytes() > arch.max_smem_per_block()) break;
      if (!fits_registers(arch, threads, c.registers())) break;
      step.offer_stages(arch, true, c, Key{bm, bn, tm, tn, 0, 0, 0}, [&](const MatmulConfig &x) {
        const SimtGemm g = matmul_model(arch, p, x, false);
        if (!reads) reads = warp_reads(arch, g);
        return estimate(arch, g, *reads).us;
      });
    }
    if (step.best) tilings.push_back(std::move(*step.best));
  });
  Hooks<MatmulConfig> hooks{
      [&](MatmulConfig &x) { rules::fit_matmul_layout(m, arch, x); },
      [&](const MatmulConfig &x) { return matmul_model(arch, p, x, true); },
      [](const MatmulConfig &x) { return Key{x.block_m, x.block_n, x.block_k, 0, 0, 0, 0}; }};
  return finish(std::move(tilings), arch, options.topk, hooks);
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

/// A conv2d problem with extents at the hint where symbolic.
struct ConvProblem {
  rules::Conv2dProblem sizes;
  bool symbolic_h = false, symbolic_w = false, symbolic_oc = false, symbolic_ic = false;
  bool constant = true;  ///< every extent constant: the implicit GEMM can fuse them
};

ConvProblem conv_problem(const rules::Match &m, int64_t hint) {
  ConvProblem p{rules::conv2d_problem(m)};
  auto at_hint = [&](int64_t &v, bool *symbolic) {
    if (symbolic) *symbolic = v < 1;
    if (v < 1) p.constant = false, v = hint;
  };
  at_hint(p.sizes.images, nullptr);
  at_hint(p.sizes.out_h, &p.symbolic_h);
  at_hint(p.sizes.out_w, &p.symbolic_w);
  at_hint(p.sizes.out_c, &p.symbolic_oc);
  at_hint(p.sizes.in_c, &p.symbolic_ic);
  return p;
}

/// The model of `c` on `cp`; `banks` as for matmul_model.
SimtGemm conv_model(const Arch &arch, const ConvProblem &cp, const Conv2dConfig &c, bool banks) {
  const rules::Conv2dProblem &p = cp.sizes;
  SimtGemm g;
  const int64_t tiles_h = ceil_div(p.out_h, c.block_h), tiles_w = ceil_div(p.out_w, c.block_w);
  g.grid_x = ceil_div(p.out_c, c.block_n);
  g.grid_y = p.images * tiles_h * tiles_w;
  g.threads_x = c.block_n / c.thread_n;
  g.threads_y = (c.block_h / c.thread_h) * (c.block_w / c.thread_w);
  g.thread_m = c.thread_h * c.thread_w;
  g.thread_n = c.thread_n;
  g.k_steps = ceil_div(p.in_c, c.block_k);
  g.k_per_step = c.kernel_h * c.kernel_w * c.block_k;
  g.registers = c.gemm().registers();
  g.smem_bytes = c.shared_bytes();
  g.stages = c.stages;
  g.acc_bytes = c.acc_bytes;
  if (banks && p.in_channels_inner) {
    // Thread (y, x) of the pixel grid reads its first pixel's channel from
    // the [halo_h, halo_w, pitch + pad] input tile.
    const int64_t pitch = p.in_c <= c.block_k ? p.in_c : c.block_k, across = c.block_w / c.thread_w;
    for (int64_t l = 0; l < std::min<int64_t>(arch.compute.warp_size, g.threads_x * g.threads_y); ++l) {
      const int64_t ty = std::min(l / g.threads_x, g.threads_y - 1), y = ty / across, x = ty % across;
      g.a_lanes.push_back((y * c.thread_h * c.stride_h * c.halo_w() + x * c.thread_w * c.stride_w) *
                          (pitch + c.pad_a) * c.a_bytes);
    }
  }
  // The input rows and columns the output tile reads, within the (padded) input.
  const int64_t in_h = (p.out_h - 1) * c.stride_h + (c.kernel_h - 1) * c.dilation_h + 1;
  const int64_t in_w = (p.out_w - 1) * c.stride_w + (c.kernel_w - 1) * c.dilation_w + 1;
  const int64_t hh = std::min(c.halo_h(), in_h), hw = std::min(c.halo_w(), in_w);
  const int64_t ek = std::min(c.block_k, p.in_c), en = std::min(c.block_n, p.out_c);
  const int64_t window = c.kernel_h * c.kernel_w;
  g.a = p.in_channels_inner ? TileFetch{hh * hw, ek, c.a_bytes, c.vector_a}
                            : TileFetch{hh * ek, hw, c.a_bytes, c.vector_a};
  g.b = p.weights_out_inner ? TileFetch{window * ek, en, c.b_bytes, c.vector_b}
                            : TileFetch{en * ek * c.kernel_h, c.kernel_w, c.b_bytes, c.vector_b};
  g.a_panel_bytes = double(p.in_channels_inner ? sector_bytes(arch, hh * hw, p.in_c, c.a_bytes)
                                               : sector_bytes(arch, hh * p.in_c, hw, c.a_bytes));
  g.b_panel_bytes =
      double(p.weights_out_inner ? sector_bytes(arch, window * p.in_c, en, c.b_bytes)
                                 : sector_bytes(arch, en * p.in_c * c.kernel_h, c.kernel_w, c.b_bytes));
  g.b_per_z = false;
  const int64_t pixels = p.images * p.out_h * p.out_w;
  g.c_bytes =
      double(p.out_channels_inner ? sector_bytes(arch, pixels, p.out_c, p.out_bytes)
                                  : sector_bytes(arch, p.images * p.out_c * p.out_h, p.out_w, p.out_bytes));
  g.flops = 2.0 * double(pixels) * double(p.out_c) * double(window * p.in_c);
  const double issued = double(tiles_h * c.block_h) * double(tiles_w * c.block_w) *
                        double(g.grid_x * c.block_n) * double(g.k_steps * c.block_k);
  g.padded_fraction = 1 - double(p.out_h) * double(p.out_w) * double(p.out_c) * double(p.in_c) / issued;
  return g;
}

/// Instructions an implicit-GEMM A move issues for its gather index: a
/// division and a remainder by a constant (multiply-high, shift,
/// multiply-subtract: about 4) per digit beyond the first that the fused M
/// (images, rows, columns) and the fused K (window rows, columns, channels)
/// are split back into, digits of extent 1 folded away; the window
/// coordinates and the input address (about 5 multiply-adds); the padding
/// block's four bounds and select (about 5) when one is inlined.
int64_t gather_ops(const rules::Conv2dProblem &p, const Conv2dConfig &c) {
  auto splits = [](std::initializer_list<int64_t> extents) {
    int64_t digits = 0;
    for (int64_t e : extents) digits += e > 1;
    return std::max<int64_t>(digits - 1, 0);
  };
  return 4 * (splits({p.images, p.out_h, p.out_w}) + splits({c.kernel_h, c.kernel_w, p.in_c})) + 5 +
         (p.padded ? 5 : 0);
}

/// The model of the implicit-GEMM form of `c` on `cp`: the matmul M = images
/// x out_h x out_w, N = out_c, K = window x in_c, with the A tile gathered
/// (the im2col rows: each input pixel fetched once per window tap covering
/// it, in runs of at most one tap's channels, and the gather's index
/// arithmetic per move); `banks` as for matmul_model.
SimtGemm implicit_model(const Arch &arch, const ConvProblem &cp, const Conv2dConfig &c, bool banks) {
  const rules::Conv2dProblem &p = cp.sizes;
  const int64_t window = c.kernel_h * c.kernel_w;
  const int64_t M = p.images * p.out_h * p.out_w, N = p.out_c, K = window * p.in_c;
  SimtGemm g;
  g.grid_x = ceil_div(N, c.block_n);
  g.grid_y = ceil_div(M, c.block_m);
  g.threads_x = c.block_n / c.thread_n;
  g.threads_y = c.block_m / c.thread_m;
  g.thread_m = c.thread_m;
  g.thread_n = c.thread_n;
  g.k_steps = ceil_div(K, c.block_k);
  g.k_per_step = c.block_k;
  g.registers = c.gemm().registers();
  g.smem_bytes = c.shared_bytes();
  g.stages = c.stages;
  g.acc_bytes = c.acc_bytes;
  if (banks) {
    // Thread row r reads row r x thread_m of the [block_m, pitch + pad] tile.
    const int64_t pitch = K <= c.block_k ? K : c.block_k;
    for (int64_t l = 0; l < std::min<int64_t>(arch.compute.warp_size, g.threads_x * g.threads_y); ++l)
      g.a_lanes.push_back(std::min(l / g.threads_x, g.threads_y - 1) * c.thread_m * (pitch + c.pad_a) *
                          c.a_bytes);
  }
  const int64_t em = std::min(c.block_m, M), en = std::min(c.block_n, N), ek = std::min(c.block_k, K);
  // A tile row: the K step's fused elements, contiguous in the input only
  // within one tap's channels (channels innermost), else element by element.
  const int64_t run = p.in_channels_inner ? std::gcd(ek, p.in_c) : 1;
  g.a = TileFetch{em * (ek / run), run, c.a_bytes, c.vector_a};
  g.a_gather_ops = gather_ops(p, c);
  g.a_panel_bytes = double(p.in_channels_inner ? sector_bytes(arch, em * window, p.in_c, c.a_bytes)
                                               : sector_bytes(arch, em * K, 1, c.a_bytes));
  // B: the weights as [K, N] rows of out channels when those are innermost,
  // else gathered element by element.
  g.b = p.weights_out_inner ? TileFetch{ek, en, c.b_bytes, c.vector_b} : TileFetch{ek * en, 1, c.b_bytes, 1};
  g.b_panel_bytes = double(p.weights_out_inner ? sector_bytes(arch, K, en, c.b_bytes)
                                               : sector_bytes(arch, K * en, 1, c.b_bytes));
  g.b_per_z = false;
  g.c_bytes = double(p.out_channels_inner ? sector_bytes(arch, M, N, p.out_bytes)
                                          : sector_bytes(arch, p.images * N * p.out_h, p.out_w, p.out_bytes));
  g.flops = 2.0 * double(M) * double(N) * double(K);
  const double issued =
      double(g.grid_y * c.block_m) * double(g.grid_x * c.block_n) * double(g.k_steps * c.block_k);
  g.padded_fraction = 1 - double(M) * double(N) * double(K) / issued;
  return g;
}

/// The first pass over implicit-GEMM tilings (as propose_matmul's, on the
/// GEMM view), appended to `tilings`; `bns` as for the direct form.
void implicit_tilings(const ConvProblem &cp, const Conv2dConfig &facts, const Arch &arch,
                      const std::vector<int64_t> &bns, std::vector<Scored<Conv2dConfig>> &tilings) {
  const rules::Conv2dProblem &p = cp.sizes;
  const int64_t M = p.images * p.out_h * p.out_w, K = facts.kernel_h * facts.kernel_w * p.in_c;
  const std::vector<int64_t> bms = tile_sizes(M, false, 1, kMaxBlockTile);
  const std::vector<int64_t> bks =
      tile_sizes(K, false, p.in_channels_inner ? per_sector(arch, facts.a_bytes) : 1, kMaxKStep);
  Conv2dConfig c = facts;
  c.form = Conv2dConfig::kImplicitGemm;
  c.pad_a = c.pad_b = 0;
  c.unroll = true;
  c.stages = 1;
  for_each_thread_tiling(bms, bns, arch, [&](int64_t bm, int64_t bn, int64_t tm, int64_t tn, int64_t threads) {
    c.block_m = bm, c.block_n = bn, c.thread_m = tm, c.thread_n = tn;
    c.vector_c = move_lanes(arch, tn, p.out_bytes);
    c.vector_b = p.weights_out_inner ? move_lanes(arch, std::min(bn, p.out_c), c.b_bytes) : 1;
    BestStep<Conv2dConfig> step;
    std::optional<WarpReads> reads;  // the same for every K step
    for (int64_t bk : bks) {
      if (bk * tm * tn > kMaxUnrolledFmas && bk != bks.front()) break;
      c.block_k = bk;
      c.vector_a = p.padded || !p.in_channels_inner
                       ? 1
                       : move_lanes(arch, std::gcd(std::min(bk, K), p.in_c), c.a_bytes);
      if (c.shared_bytes() > arch.max_smem_per_block()) break;
      if (!fits_registers(arch, threads, c.gemm().registers())) break;
      step.offer_stages(arch, !p.padded, c, Key{1, bm, bn, tm, tn, 0, 0}, [&](const Conv2dConfig &x) {
        const SimtGemm g = implicit_model(arch, cp, x, false);
        if (!reads) reads = warp_reads(arch, g);
        return estimate(arch, g, *reads).us;
      });
    }
    if (step.best) tilings.push_back(std::move(*step.best));
  });
}

/// The top `topk` of two forms' candidates (each sorted by estimate, then
/// text) by estimate, then text, with at least `topk` / kFormShare (one from
/// topk = 2) of each form where it has that many: the model charges the
/// implicit GEMM's extra A traffic and gather arithmetic, but no device
/// measurement has checked how it ranks the two forms against each other,
/// so the tuner measures the best of both.
std::vector<Candidate> merge_forms(std::vector<Candidate> direct, std::vector<Candidate> implicit,
                                   int64_t topk) {
  constexpr int64_t kFormShare = 4;
  auto before = [](const Candidate &a, const Candidate &b) {
    return std::pair(a.score, a.config->str()) < std::pair(b.score, b.config->str());
  };
  const size_t total =
      std::min(static_cast<size_t>(std::max<int64_t>(topk, 0)), direct.size() + implicit.size());
  const size_t floor = topk >= 2 ? static_cast<size_t>(std::max<int64_t>(topk / kFormShare, 1)) : 0;
  // How many implicit ones the plain ranking takes, moved into the floors.
  size_t ranked = 0;
  for (size_t d = 0; d + ranked < total;) {
    if (ranked < implicit.size() && (d == direct.size() || before(implicit[ranked], direct[d])))
      ++ranked;
    else
      ++d;
  }
  const size_t most = std::min(implicit.size(), total - std::min(floor, direct.size()));
  const size_t taken = std::min(std::max(ranked, std::min(floor, implicit.size())), most);
  std::vector<Candidate> out;
  for (size_t i = 0; i < taken; ++i) out.push_back(std::move(implicit[i]));
  for (size_t d = 0; d < total - taken; ++d) out.push_back(std::move(direct[d]));
  std::sort(out.begin(), out.end(), before);
  return out;
}

std::vector<Candidate> propose_conv2d(const rules::Rule &rule, const rules::Match &m, const Arch &arch,
                                      const ProposeOptions &options) {
  auto def = rule.default_config(m, arch);
  const auto &facts = dynamic_cast<const Conv2dConfig &>(*def);
  const ConvProblem cp = conv_problem(m, options.symbolic_hint);
  const rules::Conv2dProblem &p = cp.sizes;
  const int64_t warp = arch.compute.warp_size;
  const std::vector<int64_t> bhs = tile_sizes(p.out_h, cp.symbolic_h, 1, kMaxBlockTile);
  const std::vector<int64_t> bws = tile_sizes(p.out_w, cp.symbolic_w, 1, kMaxBlockTile);
  const std::vector<int64_t> bns = tile_sizes(
      p.out_c, cp.symbolic_oc,
      p.weights_out_inner || p.out_channels_inner ? per_sector(arch, facts.b_bytes) : 1, kMaxBlockTile);
  const std::vector<int64_t> bks = tile_sizes(
      p.in_c, cp.symbolic_ic, p.in_channels_inner ? per_sector(arch, facts.a_bytes) : 1, kMaxKStep);
  std::vector<Scored<Conv2dConfig>> tilings;
  Conv2dConfig c = facts;
  c.pad_a = c.pad_b = 0;
  c.unroll = true;
  c.stages = 1;
  for (int64_t bh : bhs)
    for (int64_t bw : bws) {
      if (bh * bw > kMaxBlockTile) break;
      for (int64_t bn : bns)
        for (int64_t th = 1; th <= bh && th <= kMaxThreadM; th *= 2)
          for (int64_t tw = 1; tw <= bw && th * tw <= kMaxThreadM; tw *= 2) {
            if (bh % th != 0 || bw % tw != 0) continue;
            for (int64_t tn : divisors(bn)) {
              if (tn > kMaxThreadN) break;
              const int64_t threads = (bh / th) * (bw / tw) * (bn / tn);
              if (threads % warp != 0 || threads > arch.limits.max_threads_per_block) continue;
              c.block_h = bh, c.block_w = bw, c.block_n = bn, c.thread_h = th, c.thread_w = tw,
              c.thread_n = tn;
              c.vector_c = move_lanes(arch, tn, p.out_bytes);
              c.vector_b = p.weights_out_inner ? move_lanes(arch, std::min(bn, p.out_c), c.b_bytes) : 1;
              BestStep<Conv2dConfig> step;
              std::optional<WarpReads> reads;  // the same for every K step
              for (int64_t bk : bks) {
                if (bk * th * tw * tn > kMaxUnrolledFmas && bk != bks.front()) break;
                c.block_k = bk;
                c.vector_a =
                    p.padded || !p.in_channels_inner ? 1 : move_lanes(arch, std::min(bk, p.in_c), c.a_bytes);
                if (c.shared_bytes() > arch.max_smem_per_block()) break;
                if (!fits_registers(arch, threads, c.gemm().registers())) break;
                step.offer_stages(arch, !p.padded, c, Key{0, bh, bw, bn, th, tw, tn}, [&](const Conv2dConfig &x) {
                  const SimtGemm g = conv_model(arch, cp, x, false);
                  if (!reads) reads = warp_reads(arch, g);
                  return estimate(arch, g, *reads).us;
                });
              }
              if (step.best) tilings.push_back(std::move(*step.best));
            }
          }
    }
  std::vector<Scored<Conv2dConfig>> implicit;
  if (cp.constant) implicit_tilings(cp, facts, arch, bns, implicit);
  // The keys lead with the form (0 direct, 1 implicit_gemm).
  Hooks<Conv2dConfig> hooks{
      [&](Conv2dConfig &x) { rules::fit_conv2d_layout(m, arch, x); },
      [&](const Conv2dConfig &x) {
        return x.implicit_gemm() ? implicit_model(arch, cp, x, true) : conv_model(arch, cp, x, true);
      },
      [](const Conv2dConfig &x) {
        return x.implicit_gemm() ? Key{1, x.block_m, x.block_n, x.block_k, 0, 0, 0}
                                 : Key{0, x.block_h, x.block_w, x.block_n, x.block_k, 0, 0};
      }};
  return merge_forms(finish(std::move(tilings), arch, options.topk, hooks),
                     finish(std::move(implicit), arch, options.topk, hooks), options.topk);
}

//===----------------------------------------------------------------------===//
// The policy
//===----------------------------------------------------------------------===//

class GemmPolicy final : public Policy {
 public:
  const char *name() const override { return "gemm"; }
  bool handles(const std::string &rule) const override { return rule == "matmul" || rule == "conv2d"; }
  std::vector<Candidate> propose(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m,
                                 const Arch &arch, const ProposeOptions &options) const override {
    const std::string r = rule.name();
    std::vector<Candidate> out;
    if (r == "matmul") out = propose_matmul(f, rule, m, arch, options);
    if (r == "conv2d") out = propose_conv2d(rule, m, arch, options);
    if (out.empty())
      out.push_back({rule.default_config(m, arch), 0, "the rule's default config (no tiling fits)"});
    return out;
  }
};

}  // namespace

const Policy &gemm_policy() {
  static const GemmPolicy policy;
  return policy;
}

}  // namespace tessera::policies
