//===- policies/ReductionPolicy.cpp - Configs for row and column reductions -===//
//
// Serves the reduction rule (one reduction, inner or outer layout) and
// general_reduction (softmax, RMSNorm, layer norm: several reductions of a
// row, then an elementwise pass over it).
//
// Reduction. Inner (the reduce axis is contiguous): threads_x threads per row
// striding over it, threads_y rows per block. Outer (an output axis is
// contiguous): threads_x consecutive outputs per block, threads_y threads
// splitting the reduce axis. Scored by the roofline over the parameters'
// bytes, the dominant read rounded to sectors per contiguous run a warp
// touches (threads_x elements), divided by the latency hiding of threads x
// unrolled `vector`-wide loads in flight (inner), plus the cross-thread combining
// (MemoryModel.h) exposed per round of resident rows.
//
// General reduction. threads_x threads per row, rows_per_block rows per
// block; each reduction reads the row again, and so does the last block:
// only the first pass comes from DRAM when the rows resident on an SM fit on
// chip (MemoryModel.h reuse_capacity: half the unified L1 / shared memory,
// less the loads in flight), the rest in proportion to what does not fit.
// That is what keeps rows wide in threads: at a full SM of threads, 64 per
// row would keep 32 rows of 8 KB resident. Two phases are estimated (the reductions
// and the last block, both with `vector`-wide loads), and the combining of
// every reduction per row.
//
// A symbolic extent is estimated at the hint (or its ProposeOptions::sizes
// value); threads split a symbolic reduce extent as a constant one (the
// lowering masks the iterations past it, down to none), without vectors
// along it (they need a length they divide). Unroll factors at least the
// per-thread trip count are the same schedule: they are proposed once, as
// the trip count.
//
//===----------------------------------------------------------------------===//
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "MemoryModel.h"
#include "Policies.h"

#include "tessera/rules/GeneralReduction.h"
#include "tessera/rules/Reduction.h"

namespace tessera::policies {

using namespace memory;
using analysis::BlockInfo;
using ir::IterKind;

namespace {

/// Among the reads using a reduce iter (else all), the one using the most
/// iters: the read whose layout decides coalescing.
const analysis::Access *dominant_read(const BlockInfo &b) {
  const analysis::Access *best = nullptr;
  for (bool need_reduce : {true, false}) {
    for (const analysis::Access &a : b.reads) {
      std::vector<int> used = a.iters();
      bool reduces =
          std::any_of(used.begin(), used.end(), [&](int i) { return b.iters[i].kind == IterKind::Reduce; });
      if (need_reduce && !reduces) continue;
      if (!best || used.size() > best->iters().size()) best = &a;
    }
    if (best) return best;
  }
  return nullptr;
}

/// Unroll factors to try for a per-thread loop of `trips` iterations:
/// factors at least `trips` are one schedule, proposed as `trips`.
std::vector<int64_t> unroll_factors(std::optional<int64_t> trips) {
  std::set<int64_t> out;
  for (int64_t u : {1, 2, 4, 8})
    out.insert(trips ? std::clamp<int64_t>(u, 1, std::max<int64_t>(*trips, 1)) : u);
  return {out.begin(), out.end()};
}

// ---- Reduction -------------------------------------------------------------

struct ReductionShape {
  bool inner = true;
  int64_t spatial = 1, reduce = 1;  ///< at the hint
  bool reduce_constant = true;
  double elem_bytes = 4;             ///< of the dominant read
  double dominant_bytes = 0;         ///< its parameter's bytes (0: an intermediate)
  double other_bytes = 0;            ///< every other parameter
  bool writes_intermediate = false;  ///< an epilogue reads the reduced value
};

ReductionShape reduction_shape(const ir::PrimFunc &f, const ProposeOptions &options) {
  const int64_t hint = options.symbolic_hint;
  ReductionShape s;
  ir::PrimFunc sized = sized_for(f, options);
  analysis::FuncInfo original = analyze_inlined(f), info = analyze_inlined(sized);
  std::vector<int> reds = info.reduction_blocks(), reds_original = original.reduction_blocks();
  if (reds.empty() || reds_original.empty()) return s;
  const BlockInfo &r = info.blocks[reds[0]];
  s.reduce_constant = iter_extent(original.blocks[reds_original[0]], IterKind::Reduce).has_value();
  s.spatial = iter_extent(r, IterKind::Spatial).value_or(hint);
  s.reduce = iter_extent(r, IterKind::Reduce).value_or(hint);
  s.writes_intermediate = !r.writes.empty() && !is_param(sized, r.writes[0].buffer);
  double all = param_bytes(sized, sized.body());
  if (const analysis::Access *a = dominant_read(r)) {
    int inner = a->inner_iter();
    s.inner = inner < 0 || r.iters[inner].kind == IterKind::Reduce;
    s.elem_bytes = element_bytes(a->buffer);
    if (is_param(sized, a->buffer)) s.dominant_bytes = double(numel(a->buffer).value_or(0)) * s.elem_bytes;
  }
  s.other_bytes = std::max(0.0, all - s.dominant_bytes);
  return s;
}

std::vector<Candidate> propose_reduction(const ir::PrimFunc &f, const rules::Rule &rule,
                                         const rules::Match &m, const Arch &arch,
                                         const ProposeOptions &options) {
  ReductionShape s = reduction_shape(f, options);
  std::unique_ptr<rules::Config> seed_any = rule.default_config(m, arch);
  const auto *seed = dynamic_cast<const rules::ReductionConfig *>(seed_any.get());
  if (!seed) return {};
  const int64_t warp = std::max(arch.compute.warp_size, 1);
  const int64_t most = arch.limits.max_threads_per_block;
  // The contiguous axis and the other one: inner reduces along the
  // contiguous one, outer lays threads_x along it.
  const int64_t along = s.inner ? s.reduce : s.spatial, across = s.inner ? s.spatial : s.reduce;
  const int64_t eb = std::max<int64_t>(1, int64_t(std::ceil(s.elem_bytes)));

  auto score = [&](const rules::ReductionConfig &c) {
    Estimate e;
    e.threads = c.threads_x * c.threads_y;
    int64_t splitting = s.inner ? c.threads_x : c.threads_y;  // threads sharing one output
    int64_t vector = c.vector;                                  // elements per load
    int64_t trips = ceil_div(s.reduce, splitting * (s.inner ? vector : 1));
    int64_t unroll = std::min(c.unroll, trips);
    // A warp touches threads_x * vector consecutive elements of the contiguous axis per load.
    int64_t run = std::min(c.threads_x * vector, along);
    double dominant =
        s.dominant_bytes > 0
            ? double(sector_bytes(arch, across * ceil_div(along, run), run, eb)) * (s.elem_bytes / double(eb))
            : 0;
    e.cost.dram_bytes = dominant + s.other_bytes;
    e.cost.grid = s.inner ? ceil_div(s.spatial, c.threads_y) : ceil_div(s.spatial, c.threads_x * vector);
    e.occ = occupancy(arch, {.threads = e.threads,
                             .regs_per_thread = registers(arch, double(unroll * vector) * s.elem_bytes + 8),
                             .smem_bytes = 0});
    e.in_flight_per_thread = double(unroll * vector) * s.elem_bytes;
    e.active_threads =
        std::min(e.cost.grid * e.threads, ceil_div(s.spatial, s.inner ? 1 : vector) * std::min(splitting, s.reduce));
    e.groups = s.spatial;
    e.groups_per_block = s.inner ? c.threads_y : c.threads_x;
    e.reduce_cycles = reduce_cycles(arch, std::min(splitting, s.reduce), s.inner ? 1 : c.threads_x);
    // A combine per element, a load and the loop's steps per vector.
    e.warp_instructions = double(s.spatial) * double(s.reduce) / double(warp) *
                          (1 + (1 + step_instructions(trips, unroll)) / double(vector));
    // The reduced value through shared memory: one more round per output.
    if (s.writes_intermediate && !c.local_intermediates && splitting > 1)
      e.reduce_cycles += shared_round_cycles();
    return e;
  };

  if (options.score_only)
    return score_only<rules::ReductionConfig>(*options.score_only, [&](const auto &c) { return score(c).us(arch); });
  std::vector<Candidate> pool;
  auto add = [&](const rules::ReductionConfig &c) {
    pool.push_back({std::make_unique<rules::ReductionConfig>(c), score(c).us(arch), ""});
  };
  add(*seed);
  std::vector<int64_t> splits = powers_of_two(1, std::min(most, int64_t(1) << ceil_log2(s.reduce)));
  std::vector<int64_t> others = powers_of_two(1, std::min(most, int64_t(1) << ceil_log2(s.spatial)));
  std::vector<bool> locals =
      s.writes_intermediate ? std::vector<bool>{true, false} : std::vector<bool>{seed->local_intermediates};
  const int64_t most_lanes = std::max<int64_t>(1, int64_t(arch.memory.max_vector_bytes / s.elem_bytes));
  for (int64_t split : splits)
    for (int64_t other : others) {
      int64_t tx = s.inner ? split : other, ty = s.inner ? other : split;
      int64_t threads = tx * ty;
      // Within the block limit, and at least a warp unless the problem is smaller.
      if (threads > most) continue;
      if (threads < warp &&
          (split < int64_t(1) << ceil_log2(s.reduce) || other < int64_t(1) << ceil_log2(s.spatial)))
        continue;
      // Vectors along the contiguous axis that divide it and leave each
      // thread a whole one (outer: only with threads splitting the reduction).
      bool vectors = s.inner ? s.reduce_constant : ty > 1;
      for (int64_t vector : vectors ? powers_of_two(1, most_lanes) : std::vector<int64_t>{1}) {
        int64_t lanes_along = s.inner ? split : other;
        if (vector > 1 && (along % vector != 0 || vector * lanes_along > along)) continue;
        std::optional<int64_t> trips;
        if (s.reduce_constant) trips = ceil_div(s.reduce, split * vector);
        for (int64_t unroll : unroll_factors(trips))
          for (bool local : locals) {
            rules::ReductionConfig c = *seed;
            c.threads_x = tx, c.threads_y = ty, c.unroll = unroll, c.local_intermediates = local;
            c.vector = vector;
            add(c);
          }
      }
    }
  rank(pool, options.topk, [&](const rules::Config &c) {
    return score(dynamic_cast<const rules::ReductionConfig &>(c)).why(arch);
  });
  return pool;
}

// ---- General reduction -----------------------------------------------------

struct RowShape {
  int64_t rows = 1, cols = 1;  ///< at the hint
  int reductions = 1;          ///< blocks reducing each row before the last
  int last_reads = 1;          ///< loads per element of the last block (along the row)
  double elem_bytes = 2;       ///< of the row as the reductions read it
  double row_bytes = 0;        ///< the rows' parameter bytes (0: unknown)
  double all_bytes = 0;        ///< every parameter
};

RowShape row_shape(const ir::PrimFunc &f, const ProposeOptions &options) {
  const int64_t hint = options.symbolic_hint;
  RowShape s;
  ir::PrimFunc sized = sized_for(f, options);
  analysis::FuncInfo info = analyze_inlined(sized);
  s.all_bytes = param_bytes(sized, sized.body());
  // The reductions (a tuple reduction, sum and sum of squares in one block,
  // counts its parts: each is combined across the row's threads).
  std::vector<int> reds;
  s.reductions = 0;
  for (size_t i = 0; i < info.blocks.size(); ++i)
    if (info.blocks[i].is_reduction() || info.blocks[i].is_tuple_reduction()) {
      reds.push_back(static_cast<int>(i));
      s.reductions += static_cast<int>(info.blocks[i].writes.size());
    }
  if (reds.empty() || info.blocks.empty()) return s;
  const BlockInfo &r = info.blocks[reds[0]];
  s.rows = iter_extent(r, IterKind::Spatial).value_or(hint);
  const BlockInfo &last = info.blocks.back();
  s.last_reads =
      static_cast<int>(std::count_if(last.reads.begin(), last.reads.end(), [&](const analysis::Access &a) {
        return is_param(sized, a.buffer) && a.inner_iter() >= 0;
      }));
  s.cols = iter_extent(r, IterKind::Reduce).value_or(hint);
  if (const analysis::Access *a = dominant_read(r)) {
    s.elem_bytes = element_bytes(a->buffer);
    if (is_param(sized, a->buffer)) s.row_bytes = double(numel(a->buffer).value_or(0)) * s.elem_bytes;
  }
  return s;
}

std::vector<Candidate> propose_general_reduction(const ir::PrimFunc &f, const rules::Rule &rule,
                                                 const rules::Match &m, const Arch &arch,
                                                 const ProposeOptions &options) {
  RowShape s = row_shape(f, options);
  std::unique_ptr<rules::Config> seed_any = rule.default_config(m, arch);
  const auto *seed = dynamic_cast<const rules::GeneralReductionConfig *>(seed_any.get());
  if (!seed) return {};
  const int64_t warp = std::max(arch.compute.warp_size, 1);
  const int64_t most = arch.limits.max_threads_per_block;
  const int64_t sms = std::max(arch.compute.sm_count, 1);

  auto score = [&](const rules::GeneralReductionConfig &c) {
    Estimate reduce, last;
    // Elements per load: the vector where it divides the row (a row of
    // symbolic length that it does not divide starts unaligned, and the
    // kernel takes its scalar version there).
    const double lanes = double(s.cols % c.vector == 0 ? c.vector : 1);
    int64_t threads = c.threads_x * c.rows_per_block;
    int64_t grid = ceil_div(s.rows, c.rows_per_block);
    int64_t trips = ceil_div(s.cols, c.threads_x * c.vector);
    int64_t unroll = std::min(c.unroll, trips);
    int64_t last_trips = ceil_div(s.cols, c.threads_x * c.vector);
    int64_t last_unroll = std::min(c.unroll, last_trips);
    Occupancy occ = occupancy(
        arch, {.threads = threads,
               .regs_per_thread = registers(
                   arch, double(s.reductions) * 4 + double((unroll + last_unroll) * c.vector) * s.elem_bytes),
               .smem_bytes = c.local_intermediates ? 0 : int64_t(4 * s.reductions * c.rows_per_block)});
    // The rows resident on an SM against what stays on chip (reuse_capacity)
    // less the lines the loads in flight hold.
    double in_flight_reduce = double(unroll * c.vector) * s.elem_bytes;
    double in_flight_last = double(last_unroll * c.vector) * s.elem_bytes;
    int64_t resident_blocks = std::min(occ.blocks_per_sm, ceil_div(grid, sms));
    double resident_bytes = double(resident_blocks * c.rows_per_block * s.cols) * s.elem_bytes;
    double capacity =
        reuse_capacity(arch) - double(resident_blocks * threads) * std::max(in_flight_reduce, in_flight_last);
    double fits = resident_bytes > 0 ? std::clamp(capacity / resident_bytes, 0.0, 1.0) : 1;
    double reread = s.row_bytes * (1 - fits);
    for (Estimate *e : {&reduce, &last}) {
      e->threads = threads;
      e->cost.grid = grid;
      e->occ = occ;
      e->active_threads = std::min(grid * threads, s.rows * std::min(c.threads_x, s.cols));
    }
    reduce.cost.dram_bytes = s.row_bytes + double(s.reductions - 1) * reread;
    reduce.in_flight_per_thread = in_flight_reduce;
    reduce.warp_instructions = double(s.reductions) * double(s.rows * s.cols) / double(warp) *
                               (1 + (1 + step_instructions(trips, unroll)) / lanes);
    reduce.groups = s.rows;
    reduce.groups_per_block = c.rows_per_block;
    reduce.reduce_cycles =
        double(s.reductions) * (reduce_cycles(arch, std::min(c.threads_x, s.cols)) +
                                (c.local_intermediates || c.threads_x == 1 ? 0 : shared_round_cycles()));
    last.cost.dram_bytes = std::max(0.0, s.all_bytes - s.row_bytes) + reread;
    last.in_flight_per_thread = in_flight_last;
    last.warp_instructions = double(s.rows) * std::ceil(double(s.cols) / lanes) / double(warp) *
                             (double(s.last_reads + 1) + step_instructions(last_trips, last_unroll));
    return std::pair{reduce, last};
  };

  if (options.score_only)
    return score_only<rules::GeneralReductionConfig>(*options.score_only, [&](const auto &c) {
      auto [reduce, last] = score(c);
      return reduce.us(arch) + last.us(arch);
    });
  std::vector<Candidate> pool;
  auto add = [&](const rules::GeneralReductionConfig &c) {
    auto [reduce, last] = score(c);
    pool.push_back({std::make_unique<rules::GeneralReductionConfig>(c), reduce.us(arch) + last.us(arch), ""});
  };
  auto explain = [&](const rules::Config &c) {
    auto [reduce, last] = score(dynamic_cast<const rules::GeneralReductionConfig &>(c));
    return fmt::format("{:.2f} us = the {} reduction(s), {} + the last block, {}",
                       reduce.us(arch) + last.us(arch), s.reductions, reduce.why(arch), last.why(arch));
  };
  add(*seed);
  const int64_t most_lanes = std::max<int64_t>(1, int64_t(arch.memory.max_vector_bytes / s.elem_bytes));
  for (int64_t tx : powers_of_two(1, std::min(most, int64_t(1) << ceil_log2(s.cols))))
    for (int64_t rows : powers_of_two(1, std::min(most / tx, int64_t(1) << ceil_log2(s.rows)))) {
      if (tx * rows < warp && (tx < s.cols || rows < s.rows)) continue;
      // Vectors that divide the row and leave each thread a whole one.
      for (int64_t vector : powers_of_two(1, most_lanes)) {
        if (vector > 1 && (s.cols % vector != 0 || vector * tx > s.cols)) continue;
        for (int64_t unroll : unroll_factors(ceil_div(s.cols, tx)))
          for (bool local : {true, false}) {
            rules::GeneralReductionConfig c = *seed;
            c.threads_x = tx, c.rows_per_block = rows, c.vector = vector, c.unroll = unroll;
            c.local_intermediates = local;
            add(c);
          }
      }
    }
  rank(pool, options.topk, explain);
  return pool;
}

class ReductionPolicy final : public Policy {
 public:
  const char *name() const override { return "reduction"; }
  bool handles(const std::string &rule) const override {
    return rule == "reduction" || rule == "general_reduction";
  }
  std::vector<Candidate> propose(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m,
                                 const Arch &arch, const ProposeOptions &options) const override {
    if (std::string(rule.name()) == "general_reduction")
      return propose_general_reduction(f, rule, m, arch, options);
    return propose_reduction(f, rule, m, arch, options);
  }
};

}  // namespace

const Policy &reduction_policy() {
  static const ReductionPolicy policy;
  return policy;
}

}  // namespace tessera::policies
