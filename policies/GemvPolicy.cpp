//===- policies/GemvPolicy.cpp - Configs for matrix-vector products ---------===//
//
// y[b, m] = sum_k W[m, k] * x[b, k] streams the matrix once: its bytes over
// the bandwidth reached is the time. The weights may be packed (int4 nibbles
// in uint32 words, decoded by an inlined prologue): the stream is the packed
// buffer, `pack` weights per element, found from the prologue's reads.
//
// Inner layout (k contiguous): threads_x threads per row, threads_y rows per
// block, each thread `reduce_step` vector loads of `vector` weights per step.
// Only when k is a constant multiple of threads_x * reduce_step * vector are
// the loads staged as vector moves (Gemv.h); otherwise they are scalar and
// masked, which the estimate counts as one element in flight per step.
// Outer layout (m contiguous): threads_x threads along m, `vector` rows each,
// threads_y threads splitting k, `reduce_step` k per step.
//
// Scored by the roofline over the parameters' bytes (the matrix rounded to
// sectors per contiguous run a warp reads), the latency hiding of the bytes
// in flight per thread, and the cross-thread combining of every output (times
// the batch). x in shared memory costs its bytes of shared memory per block
// (occupancy) and one barrier; what it saves (L1 reloads of x) the model
// cannot see, so it is proposed next to the same config without it.
//
// What the rule accepts for any value: a symbolic k is reduced by one thread
// (threads_x = 1 inner, threads_y = 1 outer) and is never staged in shared
// memory; staged elements within half a thread's registers (validate).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>

#include "MemoryModel.h"
#include "Policies.h"

#include "tessera/rules/Gemv.h"

namespace tessera::policies {

using namespace memory;
using analysis::BlockInfo;

namespace {

struct GemvShape {
  bool inner = true;
  int64_t rows = 1, k = 1, batch = 1;  ///< at the hint
  bool k_constant = true, sizes_constant = true;
  double w_bytes = 2;  ///< bytes of one element of the weight stream
  int64_t pack = 1;    ///< weights per stream element
  double x_bytes = 2;  ///< bytes of one element of x
  bool x_is_param = false;
  double all_bytes = 0;  ///< every parameter
  double w_total = 0;    ///< the weight stream's parameter bytes
};

bool uses(const analysis::Access &a, int iter) {
  for (const auto &d : a.dim_iters)
    if (std::find(d.begin(), d.end(), iter) != d.end()) return true;
  return false;
}

/// Extent product of `b`'s iters that `a` uses and `other` does not (k excluded).
int64_t own_extent(const BlockInfo &b, const analysis::Access &a, const analysis::Access &other, int k) {
  int64_t n = 1;
  for (size_t i = 0; i < b.iters.size(); ++i) {
    int it = static_cast<int>(i);
    if (it != k && uses(a, it) && !uses(other, it)) n *= ir::as_const_int(b.iters[i].dom.extent).value_or(1);
  }
  return n;
}

GemvShape gemv_shape(const ir::PrimFunc &f, const ProposeOptions &options) {
  const int64_t hint = options.symbolic_hint;
  GemvShape s;
  ir::PrimFunc sized = sized_for(f, options);
  analysis::FuncInfo info = analysis::analyze(sized), original = analysis::analyze(f);
  s.all_bytes = param_bytes(sized, sized.body());
  std::vector<int> reds = info.reduction_blocks();
  if (reds.empty() || original.reduction_blocks().empty()) return s;
  const BlockInfo &r = info.blocks[reds[0]];
  const BlockInfo &r0 = original.blocks[original.reduction_blocks()[0]];
  if (r.reads.size() != 2) return s;
  int k = -1;
  for (size_t i = 0; i < r.iters.size(); ++i)
    if (r.iters[i].kind == ir::IterKind::Reduce) k = static_cast<int>(i);
  if (k < 0) return s;
  // The matrix has the larger iteration space of its own (the vector at most a batch).
  const analysis::Access *mat = &r.reads[0], *vec = &r.reads[1];
  if (own_extent(r, *vec, *mat, k) > own_extent(r, *mat, *vec, k)) std::swap(mat, vec);
  s.inner = mat->inner_iter() == k;
  s.k = ir::as_const_int(r.iters[k].dom.extent).value_or(hint);
  s.k_constant = ir::as_const_int(r0.iters[k].dom.extent).has_value();
  s.sizes_constant = iter_extent(r0).has_value();
  s.rows = own_extent(r, *mat, *vec, k);
  s.batch = own_extent(r, *vec, *mat, k);
  s.x_bytes = element_bytes(vec->buffer);
  s.x_is_param = is_param(sized, vec->buffer);
  s.w_bytes = element_bytes(mat->buffer);
  s.w_total = double(numel(mat->buffer).value_or(s.rows * s.k)) * s.w_bytes;
  // A weight computed by a prologue block streams from that block's widest
  // read along k: the parameter with the fewest elements per k (most packed
  // last: int4 words before their scales).
  if (!is_param(sized, mat->buffer)) {
    for (const BlockInfo &p : info.blocks) {
      if (p.writes.empty() || !p.writes[0].buffer.same_as(mat->buffer)) continue;
      int64_t best = 0;
      for (const analysis::Access &a : p.reads) {
        if (!is_param(sized, a.buffer) || a.buffer.ndim() == 0) continue;
        auto last = ir::as_const_int(a.buffer.shape().back());
        if (!last || *last <= 0) continue;
        int64_t pack = std::max<int64_t>(1, (s.k + *last - 1) / *last);
        if (best == 0 || pack < best) {
          best = pack;
          s.pack = pack;
          s.w_bytes = element_bytes(a.buffer);
          s.w_total = double(numel(a.buffer).value_or(0)) * s.w_bytes;
        }
      }
    }
  }
  return s;
}

std::vector<Candidate> propose_gemv(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m,
                                    const Arch &arch, const ProposeOptions &options) {
  GemvShape s = gemv_shape(f, options);
  std::unique_ptr<rules::Config> seed_any = rule.default_config(m, arch);
  const auto *seed = dynamic_cast<const rules::GemvConfig *>(seed_any.get());
  if (!seed) return {};
  const int64_t warp = std::max(arch.compute.warp_size, 1);
  const int64_t most = arch.limits.max_threads_per_block;
  const int64_t staged_limit = arch.limits.max_regs_per_thread / 2;
  const double per_weight = s.w_bytes / double(s.pack);
  const int64_t x_shared_bytes = s.k * s.batch * int64_t(std::ceil(s.x_bytes));
  // x in shared memory: the rule needs a constant k and x read from one buffer
  // (a parameter, or whatever the default found), within a block's shared memory.
  const bool x_shared_ok =
      seed->x_in_shared || (s.k_constant && s.x_is_param && x_shared_bytes <= arch.max_smem_per_block());
  const int64_t eb = std::max<int64_t>(1, int64_t(std::ceil(s.w_bytes)));
  const double max_move = std::max(1, arch.memory.max_vector_bytes);

  auto score = [&](const rules::GemvConfig &c) {
    Estimate e;
    e.threads = c.threads_x * c.threads_y;
    const int64_t steps = c.unroll ? c.reduce_step : 1;
    double dram = s.all_bytes - s.w_total;
    int64_t splitting = 1;
    double loads_per_vector = 1;
    if (s.inner) {
      int64_t chunk = c.threads_x * c.reduce_step * c.vector;
      bool vector_loads = s.k_constant && s.k % chunk == 0;
      // Per step a row's threads read `chunk` contiguous weights.
      int64_t run = std::max<int64_t>(1, std::min(chunk, s.k) / s.pack);
      dram += double(sector_bytes(arch, s.rows * ceil_div(s.k, std::min(chunk, s.k)), run, eb)) *
              (s.w_bytes / eb);
      e.cost.grid = ceil_div(s.rows, c.threads_y);
      e.in_flight_per_thread = double(steps) * (vector_loads ? double(c.vector) * per_weight : s.w_bytes);
      e.active_threads =
          std::min(e.cost.grid * e.threads, s.rows * std::min(c.threads_x, ceil_div(s.k, c.vector)));
      e.groups_per_block = c.threads_y;
      splitting = c.threads_x;
      e.reduce_cycles = double(s.batch) * reduce_cycles(arch, std::min(c.threads_x, ceil_div(s.k, c.vector)));
      // Loads per vector of weights: whole moves when staged, else one per element.
      loads_per_vector = vector_loads
                             ? std::ceil(double(c.vector) * per_weight / max_move) +
                                   double(s.batch) * std::ceil(double(c.vector) * s.x_bytes / max_move)
                             : double(c.vector) / double(s.pack) + double(s.batch * c.vector);
    } else {
      bool adjacent = s.sizes_constant && c.threads_y == 1;
      int64_t run = std::min(c.threads_x * (adjacent ? c.vector : 1), s.rows);
      dram += double(sector_bytes(arch, s.k * ceil_div(s.rows, run), run, eb)) * (s.w_bytes / eb) /
              double(s.pack);
      e.cost.grid = ceil_div(s.rows, c.threads_x * c.vector);
      e.in_flight_per_thread = double(steps) * double(c.vector) * per_weight;
      e.active_threads =
          std::min(e.cost.grid * e.threads, ceil_div(s.rows, c.vector) * std::min(c.threads_y, s.k));
      e.groups_per_block = c.threads_x * c.vector;
      splitting = c.threads_y;
      e.reduce_cycles = double(s.batch) * reduce_cycles(arch, std::min(c.threads_y, s.k), c.threads_x);
      // W[k, m:m+vector] in moves when adjacent and unpacked; x once per k.
      bool moves = adjacent && s.pack == 1;
      loads_per_vector =
          (moves ? std::ceil(double(c.vector) * s.w_bytes / max_move) : double(c.vector)) + double(s.batch);
    }
    // Per weight: a multiply-add per batch row and its conversion (or
    // decoding), its share of the loads, and of the loop: unrolled, the index
    // math and loop test of a step of reduce_step vectors; else every weight
    // is an iteration of its own.
    double per_weight_ops = double(s.batch) + (s.pack > 1 ? 3 : 1);
    double per_weight_loop = c.unroll ? step_instructions(c.reduce_step, c.reduce_step) / double(c.vector)
                                      : step_instructions(c.reduce_step * c.vector, 1);
    e.warp_instructions = double(s.rows) * double(s.k) / double(warp) *
                          (per_weight_ops + loads_per_vector / double(c.vector) + per_weight_loop);
    e.cost.dram_bytes = dram;
    e.groups = splitting > 1 ? s.rows : 0;
    double staged =
        double(c.reduce_step) * (double(c.vector) * (per_weight + s.x_bytes)) + double(4 * s.batch);
    int64_t smem = c.x_in_shared ? x_shared_bytes : 0;
    e.occ = occupancy(arch,
                      {.threads = e.threads, .regs_per_thread = registers(arch, staged), .smem_bytes = smem});
    if (c.x_in_shared)
      e.extra_us = cycles_to_us(arch, shared_round_cycles()) *
                   double(ceil_div(e.cost.grid, std::max<int64_t>(1, e.occ.blocks_per_sm) *
                                                    std::max(arch.compute.sm_count, 1)));
    return e;
  };

  if (options.score_only)
    return score_only<rules::GemvConfig>(*options.score_only, [&](const auto &c) { return score(c).us(arch); });
  std::vector<Candidate> pool;
  auto add = [&](const rules::GemvConfig &c) {
    pool.push_back({std::make_unique<rules::GemvConfig>(c), score(c).us(arch), ""});
  };
  add(*seed);
  const int64_t lanes = std::max<int64_t>(1, int64_t(arch.memory.max_vector_bytes / s.w_bytes));
  const int64_t rows_cap = int64_t(1) << ceil_log2(s.rows);
  const int64_t k_cap = int64_t(1) << ceil_log2(s.k);
  // The threads that split k: one for a symbolic k.
  std::vector<int64_t> k_threads =
      s.k_constant ? powers_of_two(1, std::min(most, k_cap)) : std::vector<int64_t>{1};
  std::vector<bool> x_shared = x_shared_ok ? std::vector<bool>{false, true} : std::vector<bool>{false};
  if (s.inner) {
    for (int64_t tx : k_threads)
      for (int64_t ty : powers_of_two(1, std::min(most / tx, rows_cap))) {
        if (tx * ty < warp && ty < rows_cap) continue;
        // A vector of whole stream elements, at most one load's worth.
        for (int64_t loads : powers_of_two(1, lanes)) {
          int64_t vector = loads * s.pack;
          if (vector > 128 || (tx > 1 && tx * vector > k_cap)) continue;
          for (int64_t step : {1, 2, 4, 8}) {
            if (step * vector > staged_limit || (step > 1 && tx * step * vector > k_cap)) continue;
            for (bool unroll : {true, false})
              for (bool xs : x_shared) {
                rules::GemvConfig c = *seed;
                c.threads_x = tx, c.threads_y = ty, c.vector = vector, c.reduce_step = step;
                c.unroll = unroll, c.x_in_shared = xs;
                add(c);
              }
          }
        }
      }
  } else {
    for (int64_t ty : k_threads)
      for (int64_t tx : powers_of_two(1, std::min(most / ty, rows_cap))) {
        if (tx * ty < warp && tx < rows_cap) continue;
        for (int64_t vector : powers_of_two(1, lanes)) {
          if (tx * vector > rows_cap * 2) continue;
          for (int64_t step : {1, 2, 4, 8}) {
            if (step * vector > staged_limit || (ty > 1 && ty * step > k_cap)) continue;
            for (bool unroll : {true, false})
              for (bool xs : x_shared) {
                rules::GemvConfig c = *seed;
                c.threads_x = tx, c.threads_y = ty, c.vector = vector, c.reduce_step = step;
                c.unroll = unroll, c.x_in_shared = xs;
                add(c);
              }
          }
        }
      }
  }
  rank(pool, options.topk,
       [&](const rules::Config &c) { return score(dynamic_cast<const rules::GemvConfig &>(c)).why(arch); });
  return pool;
}

class GemvPolicy final : public Policy {
 public:
  const char *name() const override { return "gemv"; }
  bool handles(const std::string &rule) const override { return rule == "gemv"; }
  std::vector<Candidate> propose(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m,
                                 const Arch &arch, const ProposeOptions &options) const override {
    return propose_gemv(f, rule, m, arch, options);
  }
};

}  // namespace

const Policy &gemv_policy() {
  static const GemvPolicy policy;
  return policy;
}

}  // namespace tessera::policies
