//===- policies/ElementwisePolicy.cpp - Configs for injective kernels -------===//
//
// Serves the elementwise rule and the fallback.
//
// Elementwise (bx / per_thread / tx / vector over the fused output): every
// config streams the same bytes, so what tells them apart is how well the GPU
// is kept busy. The space: threads (powers of two from a warp to the block
// limit), vector (powers of two whose bytes fit one load and that divide the
// contiguous extent: only those become vector moves, lowering turns the rest
// into scalar code), per_thread steps 1-16 (unrolled or not). Scored by the
// roofline over the parameters' bytes (a read not contiguous along the
// output's axis pays a sector per element) with the grid's waves and SM fill,
// divided by the latency hiding the bytes in flight allow (threads x vector x
// unrolled steps x input bytes), plus the instructions issued (one move per
// vector: what prefers wide vectors over as many scalar steps).
//
// Fallback (each nest's parallel loops fused and split over `threads`): the
// same estimate per nest, one scalar load in flight per thread and every
// launched warp issuing a thread's instructions, summed over the nests with
// parallel loops (serial nests cost the same under every config).
//
// Symbolic extents are sized at the hint; a vector is only proposed when every
// extent is constant (a symbolic tail predicate keeps lowering scalar).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>

#include "MemoryModel.h"
#include "Policies.h"

#include "tessera/analysis/Parallel.h"
#include "tessera/ir/Functor.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/rules/Fallback.h"

namespace tessera::policies {

using namespace memory;

namespace {

// ---- Elementwise -----------------------------------------------------------

/// What the elementwise estimate needs of the output block (after inlining).
struct InjectiveShape {
  int64_t elements = 1;   ///< output elements at the hint
  int64_t inner = 1;      ///< extent of the innermost output loop at the hint
  bool constant = true;   ///< every output loop extent constant (not sized from the hint)
  double read_bytes = 0;  ///< bytes read per output element, every input together
  int contiguous_reads = 0, strided_reads = 0;  ///< loads per output element by layout
  double write_bytes = 0;
  double widest = 1;      ///< widest element touched, bytes
  double dram_bytes = 0;  ///< parameters' bytes, strided reads at a sector per element
};

InjectiveShape injective_shape(const ir::PrimFunc &f, const Arch &arch, const ProposeOptions &options) {
  const int64_t hint = options.symbolic_hint;
  InjectiveShape s;
  analysis::FuncInfo original = analyze_inlined(f);
  ir::PrimFunc sized = sized_for(f, options);
  analysis::FuncInfo info = analyze_inlined(sized);
  if (info.blocks.empty() || original.blocks.empty()) return s;
  s.constant = iter_extent(original.blocks.back()).has_value();
  const analysis::BlockInfo &out = info.blocks.back();
  s.elements = iter_extent(out).value_or(hint);
  if (!out.loops.empty()) s.inner = loop_extent(out.loops.back()).value_or(hint);
  if (out.writes.empty()) return s;
  const analysis::Access &w = out.writes[0];
  s.write_bytes = element_bytes(w.buffer);
  s.widest = s.write_bytes;
  if (is_param(sized, w.buffer)) s.dram_bytes += double(s.elements) * s.write_bytes;
  std::vector<const ir::BufferNode *> seen;
  for (const analysis::Access &a : out.reads) {
    double eb = element_bytes(a.buffer);
    s.read_bytes += eb;
    s.widest = std::max(s.widest, eb);
    bool contiguous = a.inner_iter() < 0 || a.inner_iter() == w.inner_iter() || a.buffer.ndim() <= 1;
    (contiguous ? s.contiguous_reads : s.strided_reads) += 1;
    if (!is_param(sized, a.buffer) || std::count(seen.begin(), seen.end(), a.buffer.get())) continue;
    seen.push_back(a.buffer.get());
    int64_t n = numel(a.buffer).value_or(s.elements);
    s.dram_bytes +=
        contiguous ? double(n) * eb : double(sector_bytes(arch, n, 1, std::max<int64_t>(1, int64_t(eb))));
  }
  return s;
}

std::vector<Candidate> propose_elementwise(const ir::PrimFunc &f, const rules::Rule &rule,
                                           const rules::Match &m, const Arch &arch,
                                           const ProposeOptions &options) {
  InjectiveShape s = injective_shape(f, arch, options);
  std::unique_ptr<rules::Config> seed_any = rule.default_config(m, arch);
  const auto *seed = dynamic_cast<const rules::ElementwiseConfig *>(seed_any.get());
  if (!seed) return {};
  const int64_t warp = std::max(arch.compute.warp_size, 1);
  const int64_t most_lanes = std::max<int64_t>(1, int64_t(arch.memory.max_vector_bytes / s.widest));

  auto score = [&](const rules::ElementwiseConfig &c) {
    const int64_t steps = c.unroll ? c.per_thread : 1;
    Estimate e;
    e.threads = c.threads;
    e.cost.dram_bytes = s.dram_bytes;
    e.cost.grid = ceil_div(s.elements, c.threads * c.vector * c.per_thread);
    e.occ = occupancy(
        arch, {.threads = c.threads,
               .regs_per_thread = registers(arch, double(c.vector * steps) * (s.read_bytes + s.write_bytes)),
               .smem_bytes = 0});
    e.in_flight_per_thread = double(c.vector * steps) * s.read_bytes;
    e.active_threads = std::min(e.cost.grid * c.threads, ceil_div(s.elements, c.vector));
    // Per vector: one move per contiguous read and for the write, a load per
    // lane for a strided read.
    double per_step = double(s.contiguous_reads + 1 + s.strided_reads * c.vector) +
                      step_instructions(c.per_thread, c.unroll ? c.per_thread : 1);
    e.warp_instructions = double(ceil_div(s.elements, c.vector)) / double(warp) * per_step;
    return e;
  };

  // The tiled transpose (shared-memory tiles: both sides coalesced): its own
  // estimate; the plain forms below stay candidates (skinny shapes).
  std::optional<rules::ElementwiseTranspose> transpose = rules::elementwise_transpose(m);
  auto score_tiled = [&](const rules::ElementwiseConfig &c) {
    const int64_t tile = c.transpose_tile, per_thread = tile / std::max<int64_t>(c.tile_rows, 1);
    int64_t w = transpose->extent_w > 0 ? transpose->extent_w : options.symbolic_hint;
    int64_t r = transpose->extent_r > 0 ? transpose->extent_r : options.symbolic_hint;
    int64_t outer = std::max<int64_t>(1, s.elements / std::max<int64_t>(1, w * r));
    Estimate e;
    e.threads = c.threads;
    // Both sides coalesced: every element read and written once (no sector
    // waste of the plain form's strided read).
    e.cost.dram_bytes = double(s.elements) * (s.read_bytes + s.write_bytes);
    e.cost.grid = outer * ceil_div(w, tile) * ceil_div(r, tile);
    int64_t smem = c.shared_bytes();
    e.occ = occupancy(arch, {.threads = c.threads,
                             .regs_per_thread = registers(arch, double(per_thread) * (s.read_bytes + s.write_bytes)),
                             .smem_bytes = smem});
    e.in_flight_per_thread = double(per_thread * c.vector) * s.read_bytes;
    e.active_threads = std::min(e.cost.grid * c.threads, s.elements);
    // Per element: a shared store and a shared load; per vector a global
    // load and a global store; per tile row step the loop overhead.
    e.warp_instructions = double(s.elements) / double(warp) *
                          (2 + (2 + step_instructions(per_thread, per_thread)) / double(c.vector));
    return e;
  };
  auto score_any = [&](const rules::ElementwiseConfig &c) { return c.transpose_tile > 0 ? score_tiled(c) : score(c); };

  if (options.score_only)
    return score_only<rules::ElementwiseConfig>(*options.score_only,
                                                [&](const auto &c) { return score_any(c).us(arch); });
  std::vector<Candidate> pool;
  auto add = [&](const rules::ElementwiseConfig &c) {
    pool.push_back({std::make_unique<rules::ElementwiseConfig>(c), score_any(c).us(arch), ""});
  };
  add(*seed);
  if (transpose) {
    for (int64_t tile : {16, 32, 64})
      for (int64_t vector : powers_of_two(1, std::min<int64_t>(most_lanes, tile / 4)))
        for (int64_t rows : powers_of_two(1, tile)) {
          int64_t threads = tile / vector * rows;
          if (threads < warp || threads > arch.limits.max_threads_per_block) continue;
          rules::ElementwiseConfig c = rules::tiled_elementwise_config(m, tile, rows, arch, vector);
          if (c.shared_bytes() > arch.max_smem_per_block()) continue;
          add(c);
        }
  }
  // The plain form's fields from a seed in the plain form.
  rules::ElementwiseConfig plain = *seed;
  plain.transpose_tile = 0, plain.tile_rows = 0, plain.transpose_pad = 0;
  for (int64_t vector : powers_of_two(1, std::min<int64_t>(most_lanes, 16))) {
    if (vector > 1 && (!s.constant || s.inner % vector != 0)) continue;
    int64_t chunks = ceil_div(s.elements, vector);
    for (int64_t threads : powers_of_two(warp, arch.limits.max_threads_per_block)) {
      // No block more than half empty (one warp always).
      if (threads > warp && threads / 2 >= chunks) continue;
      for (int64_t per_thread : {1, 2, 4, 8, 16}) {
        if (per_thread > 1 && threads * per_thread > chunks) continue;
        for (bool unroll : {true, false}) {
          if (per_thread == 1 && !unroll) continue;  // the same kernel as unrolled
          rules::ElementwiseConfig c = plain;        // keeps fields this policy does not vary
          c.threads = threads, c.vector = vector, c.per_thread = per_thread, c.unroll = unroll;
          add(c);
        }
      }
    }
  }
  rank(pool, options.topk, [&](const rules::Config &c) {
    return score_any(dynamic_cast<const rules::ElementwiseConfig &>(c)).why(arch);
  });
  return pool;
}

// ---- Fallback --------------------------------------------------------------

/// One top-level nest whose outer loops run in parallel.
struct ParallelNest {
  int64_t iterations = 1;  ///< of the parallel loops, at the hint
  bool from_zero = true;   ///< else the outermost loop is bound as it is
  double bytes = 0;        ///< parameter bytes the nest touches
  double widest = 4;       ///< widest parameter element it touches
  /// Instructions one thread issues: the loops under the parallel ones
  /// (their extents at the hint) times the loads and stores in the nest.
  double per_thread_instructions = 1;
};

std::vector<ParallelNest> parallel_nests(const ir::PrimFunc &f, const ProposeOptions &options) {
  const int64_t hint = options.symbolic_hint;
  ir::PrimFunc sized = sized_for(f, options);
  // The rule inlines first; nests of inlined blocks disappear.
  schedule::ScheduleOptions opts;
  opts.verify = false;
  opts.error_render_level = schedule::ErrorRenderLevel::Brief;
  schedule::Schedule sch(sized, opts);
  for (const analysis::BlockInfo &b : analysis::analyze(sized).blocks) {
    if (!b.is_inlinable()) continue;
    try {
      sch.compute_inline(sch.get_block(b.name));
    } catch (const schedule::ScheduleError &) {
    }
  }
  const ir::PrimFunc &g = sch.func();
  const ir::Stmt &body = g.root_block().body;
  std::vector<ir::Stmt> items = {body};
  if (const auto *seq = body.as<ir::Seq>()) items = seq->stmts;
  std::vector<ParallelNest> nests;
  for (const ir::Stmt &item : items) {
    ParallelNest n;
    bool any = false, parallel = true;
    double serial = 1;
    for (ir::Stmt s = item; s.as<ir::For>(); s = s.as<ir::For>()->body) {
      const auto *l = s.as<ir::For>();
      parallel = parallel && analysis::why_not_parallel(s).empty();
      if (!parallel) {
        serial *= double(loop_extent(s).value_or(hint));
        continue;
      }
      any = true;
      n.iterations *= loop_extent(s).value_or(hint);
      n.from_zero = n.from_zero && ir::is_const_int(l->min, 0);
    }
    if (!any) continue;
    n.bytes = param_bytes(g, item);
    double widest = 0;
    int accesses = 0;
    ir::pre_order_visit(
        item,
        [&](const ir::Expr &e) {
          if (const auto *l = e.as<ir::Load>())
            widest = std::max(widest, element_bytes(l->buffer)), ++accesses;
        },
        [&](const ir::Stmt &x) { accesses += x.as<ir::Store>() != nullptr; });
    if (widest > 0) n.widest = widest;
    n.per_thread_instructions = serial * (double(accesses) + step_instructions(int64_t(serial), 1));
    nests.push_back(n);
  }
  return nests;
}

std::vector<Candidate> propose_fallback(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m,
                                        const Arch &arch, const ProposeOptions &options) {
  std::unique_ptr<rules::Config> seed_any = rule.default_config(m, arch);
  const auto *seed = dynamic_cast<const rules::FallbackConfig *>(seed_any.get());
  if (!seed) return {};
  std::vector<ParallelNest> nests = parallel_nests(f, options);
  std::vector<Candidate> pool;
  auto add = [&](const rules::FallbackConfig &c) {
    double us = 0;
    std::string why;
    for (const ParallelNest &n : nests) {
      Estimate e;
      // A nest whose loops start elsewhere than 0 is bound as it is: one
      // block of its threads, or one single-thread block per iteration.
      bool one_per_block = !n.from_zero && n.iterations > c.threads;
      e.threads = n.from_zero ? c.threads : (one_per_block ? 1 : n.iterations);
      e.cost.dram_bytes = n.bytes;
      e.cost.grid = n.from_zero ? ceil_div(n.iterations, c.threads) : (one_per_block ? n.iterations : 1);
      e.occ = occupancy(arch, {.threads = e.threads, .regs_per_thread = registers(arch, 0), .smem_bytes = 0});
      e.in_flight_per_thread = n.widest;
      e.active_threads = n.iterations;
      // Every warp launched issues a thread's instructions, however few of its lanes work.
      e.warp_instructions =
          double(e.cost.grid * ceil_div(e.threads, arch.compute.warp_size)) * n.per_thread_instructions;
      us += e.us(arch);
      if (why.empty()) why = e.why(arch);
    }
    if (nests.size() > 1) why = std::to_string(nests.size()) + " parallel nests, the first " + why;
    if (nests.empty()) why = "no parallel nest: every config runs the same serial kernels";
    pool.push_back({std::make_unique<rules::FallbackConfig>(c), us, why});
  };
  add(*seed);
  // Without a parallel nest the thread count changes nothing: the default alone.
  if (!nests.empty())
    for (int64_t threads :
         powers_of_two(std::max(arch.compute.warp_size, 1), arch.limits.max_threads_per_block)) {
      rules::FallbackConfig c = *seed;
      c.threads = threads;
      add(c);
    }
  rank(pool, options.topk, nullptr);  // explained when scored: a handful of candidates
  return pool;
}

class ElementwisePolicy final : public Policy {
 public:
  const char *name() const override { return "elementwise"; }
  bool handles(const std::string &rule) const override { return rule == "elementwise" || rule == "fallback"; }
  std::vector<Candidate> propose(const ir::PrimFunc &f, const rules::Rule &rule, const rules::Match &m,
                                 const Arch &arch, const ProposeOptions &options) const override {
    if (std::string(rule.name()) == "fallback") return propose_fallback(f, rule, m, arch, options);
    return propose_elementwise(f, rule, m, arch, options);
  }
};

}  // namespace

const Policy &elementwise_policy() {
  static const ElementwisePolicy policy;
  return policy;
}

}  // namespace tessera::policies
