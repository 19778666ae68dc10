//===- rules/Reduction.cpp - One reduction, threads across it ---------------===//
#include "tessera/rules/Reduction.h"

#include <algorithm>

#include "ConfigJson.h"
#include "ReductionCommon.h"

namespace tessera::rules {

using analysis::BlockInfo;
using analysis::FuncInfo;
using ir::IterKind;
using namespace reduction_detail;

Json ReductionConfig::to_json() const {
  return Json{{"rule", rule()},
              {"threads_x", threads_x},
              {"threads_y", threads_y},
              {"unroll", unroll},
              {"vector", vector},
              {"local_intermediates", local_intermediates}};
}

ReductionConfig ReductionConfig::from_json(const Json &j) {
  ConfigReader r(j, "reduction");
  ReductionConfig c;
  c.threads_x = r.integer("threads_x");
  c.threads_y = r.integer("threads_y");
  c.unroll = r.integer("unroll");
  c.vector = r.integer_or("vector", 1);
  c.local_intermediates = r.boolean("local_intermediates");
  r.finish();
  return c;
}

void ReductionConfig::validate(const Arch &arch) const {
  require_threads(rule(), "threads_x", threads_x, arch);
  require_threads(rule(), "threads_y", threads_y, arch);
  require_block_threads(rule(), "threads_x * threads_y", threads_x * threads_y, arch);
  require_unroll(rule(), unroll);
  require(vector >= 1 && vector <= arch.memory.max_vector_bytes && (vector & (vector - 1)) == 0, rule(), "vector",
          vector, "is not a power of two in [1, " + std::to_string(arch.memory.max_vector_bytes) + "]");
}

namespace {

enum class LoopRole { Spatial, Reduce, Unit };

struct ReductionMatch final : Match {
  std::vector<std::string> inlined;  ///< elementwise blocks to inline, in order
  std::string block;                 ///< the reduction block
  std::vector<std::string> epilogues;
  /// The role of each of the reduction's loops (get_loops order), and the
  /// position of the loop of the contiguous iter (-1: none known).
  std::vector<LoopRole> roles;
  int contiguous_loop = -1;
  bool inner = true;
  /// The reduction writes an intermediate (read by the epilogues).
  bool writes_intermediate = false;
  std::optional<int64_t> spatial_extent, reduce_extent;
  int elem_bytes = 4;  ///< of the dominant read
  analysis::Combiner combiner = analysis::Combiner::None;

  std::string describe() const override {
    auto n = [](std::optional<int64_t> e) { return e ? std::to_string(*e) : std::string("symbolic"); };
    std::string s = std::string(inner ? "inner" : "outer") + " " + analysis::to_string(combiner) + " reduction '" +
                    block + "': " + n(spatial_extent) + " outputs of " + n(reduce_extent) + " elements";
    if (contiguous_loop < 0) s += " (no contiguous axis found)";
    for (const std::string &e : epilogues) s += ", epilogue '" + e + "'";
    if (!inlined.empty()) s += ", " + std::to_string(inlined.size()) + " block(s) inlined";
    return s;
  }
};

/// Why epilogue `e` (after reduction `r`) cannot be computed under the
/// reduction's output loop ("" when it can).
std::string why_not_epilogue(const FuncInfo &info, const BlockInfo &r, const BlockInfo &e, int r_pos) {
  if (std::string why = why_not_plain_injective(e); !why.empty()) return "epilogue " + why;
  if (!e.writes_output)
    return "block '" + e.name + "' after the reduction writes the intermediate '" + e.writes[0].buffer.name() +
           "' and cannot be inlined";
  size_t kept = std::count_if(r.iters.begin(), r.iters.end(),
                              [](const analysis::IterInfo &i) { return i.kind == IterKind::Spatial; });
  if (e.iters.size() != kept)
    return "epilogue '" + e.name + "' has " + std::to_string(e.iters.size()) + " axes but the reduction keeps " +
           std::to_string(kept) + ": it broadcasts the reduced value (general_reduction's pattern)";
  bool reads_result = std::any_of(e.producers.begin(), e.producers.end(), [&](int p) { return p >= r_pos; });
  if (!reads_result) return "block '" + e.name + "' after the reduction does not read its result";
  const ir::Buffer &out = r.writes[0].buffer;
  for (const analysis::Access &a : e.reads) {
    if (!a.buffer.same_as(out)) continue;
    if (info.func.is_param_buffer(out))
      return "epilogue '" + e.name + "' reads '" + out.name() +
             "', an output parameter that one thread writes while the others would read it";
    // reverse_compute_at maps the epilogue's iters through this access.
    std::vector<int> seen;
    for (size_t d = 0; d < a.indices.size(); ++d) {
      int it = a.single_iter(static_cast<int>(d));
      if (it < 0 || !a.indices[d].same_as(e.iters[it].var) || std::count(seen.begin(), seen.end(), it))
        return "epilogue '" + e.name + "' reads '" + out.name() + "' at indices other than distinct iter vars";
      seen.push_back(it);
    }
  }
  return "";
}

class ReductionRule final : public Rule {
 public:
  const char *name() const override { return "reduction"; }

  analysis::MatchResult<MatchPtr> match(const ir::PrimFunc &f, const Arch &) const override {
    using R = analysis::MatchResult<MatchPtr>;
    FuncInfo original = analysis::analyze(f);
    if (original.is_scheduled) return R::fail("the function is already scheduled");
    if (original.has_opaque_structure) return R::fail("it has statements outside blocks");
    if (std::none_of(original.blocks.begin(), original.blocks.end(), [](const BlockInfo &b) { return b.has_reduce(); }))
      return R::fail("it has no reduction block");
    auto inlined = inline_elementwise(f);
    if (!inlined) return R::fail(inlined.reason());
    const FuncInfo &info = inlined->info;

    std::vector<int> reductions;
    std::string names;
    for (size_t i = 0; i < info.blocks.size(); ++i) {
      if (!info.blocks[i].has_reduce()) continue;
      reductions.push_back(static_cast<int>(i));
      names += (names.empty() ? "'" : ", '") + info.blocks[i].name + "'";
    }
    if (reductions.size() != 1)
      return R::fail("it has " + std::to_string(reductions.size()) + " reduction blocks (" + names +
                     "); general_reduction schedules several reductions of one row");
    int pos = reductions[0];
    const BlockInfo &r = info.blocks[pos];
    if (pos != 0)
      return R::fail("block '" + info.blocks[0].name + "' before the reduction is not elementwise (cannot be inlined)");
    if (std::string why = why_not_splittable_reduction(r); !why.empty()) return R::fail(why);
    if (std::string why = why_contraction(r); !why.empty()) return R::fail(why);
    if (r.is_tuple_reduction())
      return R::fail("block '" + r.name + "' reduces into " + std::to_string(r.writes.size()) +
                     " buffers at once (a tuple reduction, general_reduction's pattern)");

    auto m = std::make_shared<ReductionMatch>();
    m->inlined = inlined->blocks;
    m->block = r.name;
    m->combiner = r.combiner;
    m->spatial_extent = iter_extent(r, IterKind::Spatial);
    m->reduce_extent = iter_extent(r, IterKind::Reduce);
    for (size_t i = pos + 1; i < info.blocks.size(); ++i) {
      if (std::string why = why_not_epilogue(info, r, info.blocks[i], pos); !why.empty()) return R::fail(why);
      m->epilogues.push_back(info.blocks[i].name);
    }
    // An intermediate of any shape: lowering compacts it to what a block touches.
    m->writes_intermediate = !f.is_param_buffer(r.writes[0].buffer);

    // The memory layout: which iter indexes the dominant read's contiguous dimension.
    int contiguous = -1;
    if (const analysis::Access *a = dominant_read(r)) {
      contiguous = a->inner_iter();
      m->elem_bytes = std::max(1, a->buffer.dtype().bytes());
    }
    m->inner = contiguous < 0 || r.iters[contiguous].kind == IterKind::Reduce;
    for (size_t l = 0; l < r.loops.size(); ++l) {
      const ir::Var &v = r.loops[l].as<ir::For>()->loop_var;
      LoopRole role = LoopRole::Unit;
      for (size_t i = 0; i < r.iters.size(); ++i) {
        if (!r.iters[i].loop.same_as(v)) continue;
        role = r.iters[i].kind == IterKind::Spatial ? LoopRole::Spatial : LoopRole::Reduce;
        if (static_cast<int>(i) == contiguous) m->contiguous_loop = static_cast<int>(l);
      }
      m->roles.push_back(role);
    }
    return R(MatchPtr(m));
  }

  std::unique_ptr<Config> default_config(const Match &mm, const Arch &arch) const override {
    const auto &m = static_cast<const ReductionMatch &>(mm);
    auto c = std::make_unique<ReductionConfig>();
    int64_t block = target_block_threads(arch);
    int64_t sms = arch.compute.sm_count;
    if (m.inner) {
      // A group of threads per row, enough rows side by side to fill a block
      // while the grid still covers every SM.
      c->threads_x = row_threads(m.reduce_extent, arch);
      c->threads_y = std::max<int64_t>(1, block / c->threads_x);
      if (m.spatial_extent)
        while (c->threads_y > 1 && ceil_div(*m.spatial_extent, c->threads_y) < sms) c->threads_y /= 2;
      // The widest vector the loads allow that divides the row (each vector
      // starts aligned) and leaves each thread at least one whole vector.
      int64_t v = std::max(1, arch.memory.max_vector_bytes / m.elem_bytes);
      while (v > 1 && (!m.reduce_extent || *m.reduce_extent % v != 0 || v * c->threads_x > *m.reduce_extent)) v /= 2;
      c->vector = v;
      if (m.reduce_extent) c->unroll = serial_unroll(ceil_div(*m.reduce_extent, c->threads_x * v));
    } else {
      // One warp's worth of contiguous outputs per row of loads (coalesced),
      // each thread `vector` adjacent ones (the widest that divides them,
      // when threads split the reduction: the partials are per-thread
      // arrays), wider while the grid stays at two waves or more; the rest
      // of the block splits the reduction.
      int64_t warp = arch.compute.warp_size;
      int64_t v = std::max(1, arch.memory.max_vector_bytes / m.elem_bytes);
      while (v > 1 && (!m.spatial_extent || *m.spatial_extent % v != 0 || *m.spatial_extent < warp * v)) v /= 2;
      int64_t row = m.spatial_extent ? std::min(warp * v, pow2_ceil(*m.spatial_extent)) : warp;
      c->threads_x = std::max<int64_t>(1, row / v);
      // Fewer threads along the outputs while the grid is under two waves,
      // down to a 32-byte sector per row of loads.
      while (m.spatial_extent && c->threads_x > 1 && c->threads_x * v * m.elem_bytes > 32 &&
             ceil_div(*m.spatial_extent, c->threads_x * v) < 2 * sms)
        c->threads_x /= 2;
      while (m.spatial_extent && c->threads_x * 2 <= block &&
             ceil_div(*m.spatial_extent, c->threads_x * v * 2) >= 2 * sms)
        c->threads_x *= 2;
      c->threads_y = std::max<int64_t>(1, block / c->threads_x);
      if (m.reduce_extent) c->threads_y = std::min(c->threads_y, pow2_floor(std::max<int64_t>(1, *m.reduce_extent / 4)));
      if (m.reduce_extent) c->unroll = serial_unroll(ceil_div(*m.reduce_extent, c->threads_y));
      c->vector = c->threads_y > 1 ? v : 1;
    }
    return c;
  }

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<ReductionConfig>(ReductionConfig::from_json(j));
  }

  schedule::Schedule build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const override {
    const auto &m = static_cast<const ReductionMatch &>(mm);
    const auto *c = dynamic_cast<const ReductionConfig *>(&config);
    if (!c) throw ConfigError(std::string("the reduction rule got a config for '") + config.rule() + "'");
    require(m.inner || c->vector == 1 || c->threads_y > 1, c->rule(), "vector", c->vector,
            "asks for vectors along the outputs of an outer reduction that one thread reduces alone "
            "(threads_y = 1); it must be 1 there");
    const int64_t splitting = m.inner ? c->threads_x : c->threads_y;  // threads reducing one output
    schedule::Schedule sch(f);
    for (const std::string &b : m.inlined) sch.compute_inline(sch.get_block(b));
    schedule::BlockRef red = sch.get_block(m.block);

    // Step 1. Spatial loops outside, reduce loops inside, the contiguous
    // loop innermost of its group; then one loop per group.
    std::vector<schedule::LoopRef> loops = sch.get_loops(red);
    std::vector<schedule::LoopRef> spatial, reduce;
    for (size_t l = 0; l < loops.size(); ++l) {
      bool contiguous = static_cast<int>(l) == m.contiguous_loop;
      if (m.roles[l] == LoopRole::Reduce && !(contiguous && m.inner)) reduce.push_back(loops[l]);
      if (m.roles[l] != LoopRole::Reduce && !(contiguous && !m.inner)) spatial.push_back(loops[l]);
    }
    if (m.contiguous_loop >= 0) (m.inner ? reduce : spatial).push_back(loops[m.contiguous_loop]);
    std::vector<schedule::LoopRef> order = spatial;
    order.insert(order.end(), reduce.begin(), reduce.end());
    if (order != loops) sch.reorder(order);
    // A reduction to one element (no spatial loop): one thread block.
    if (spatial.empty()) spatial.push_back(sch.add_unit_loop(reduce.front(), "s"));
    schedule::LoopRef s = fuse_all(sch, spatial, "s");
    schedule::LoopRef k = fuse_all(sch, reduce, "k");

    // Step 2. Split and bind (see the header for the two layouts).
    std::optional<schedule::LoopRef> out_loop;
    ThreadSplit ks;
    if (m.inner) {
      std::vector<schedule::LoopRef> rows = {s};
      if (c->threads_y > 1) rows = sch.split(s, {std::nullopt, c->threads_y}, {"bx", "ry"});
      ks = split_for_threads(sch, k, m.reduce_extent, c->threads_x, c->unroll, c->vector, "k");
      thread_outermost(sch, ks);
      sch.bind(rows[0], "blockIdx.x");
      if (rows.size() > 1) sch.bind(rows[1], "threadIdx.y");
      out_loop = rows.back();
    } else {
      std::vector<std::optional<int64_t>> factors{std::nullopt};
      std::vector<std::string> names{"bx"};
      if (c->threads_x > 1) factors.push_back(c->threads_x), names.push_back("s_t");
      if (c->vector > 1) factors.push_back(c->vector), names.push_back("s_v");
      std::vector<schedule::LoopRef> cols = factors.size() > 1 ? sch.split(s, factors, names)
                                                               : std::vector<schedule::LoopRef>{s};
      std::optional<schedule::LoopRef> s_v;
      if (c->vector > 1) s_v = cols.back(), cols.pop_back();
      ks = split_for_threads(sch, k, m.reduce_extent, c->threads_y, c->unroll, 1, "k");
      thread_outermost(sch, ks);
      if (s_v) {
        // `vector` adjacent outputs per thread, innermost: each reduce step
        // reads a row segment of `vector` elements (one vector load), the
        // partials an array over them (lib/lower keeps the loop in place).
        std::vector<schedule::LoopRef> order;
        if (ks.thread) order.push_back(*ks.thread);
        for (const schedule::LoopRef &l : ks.serial_loops()) order.push_back(l);
        order.push_back(*s_v);
        sch.reorder(order);
        sch.vectorize(*s_v);
      }
      sch.bind(cols[0], "blockIdx.x");
      if (cols.size() > 1) sch.bind(cols[1], "threadIdx.x");
      out_loop = cols.back();
    }
    if (ks.thread) sch.bind(*ks.thread, m.inner ? "threadIdx.x" : "threadIdx.y");
    // A reduction within one thread: the init before the loop, not an `if` in it.
    if (!ks.thread) sch.decompose_reduction(red, ks.serial);
    unroll_pieces(sch, ks);
    vector_loads(sch, ks);

    // Step 3. The epilogues under the output loop, the reduced value on chip.
    // The threads that reduced one element together would all store the
    // epilogue's element (a race, if a benign one): a new unit loop split
    // over their thread axis leaves the store to the first of them. (A new
    // loop, not one the bindings use: the epilogue keeps its indices.)
    for (const std::string &e : m.epilogues) {
      schedule::BlockRef eb = sch.get_block(e);
      sch.reverse_compute_at(eb, *out_loop);
      if (splitting == 1) continue;
      schedule::LoopRef one = sch.add_unit_loop(eb, e + "_unit");
      auto parts = sch.split(one, {std::nullopt, splitting}, {e + "_o", e + "_t"});
      sch.bind(parts[1], m.inner ? "threadIdx.x" : "threadIdx.y");
    }
    if (m.writes_intermediate) sch.set_scope(red, 0, c->local_intermediates ? "local" : "shared");
    return sch;
  }
};

}  // namespace

const Rule &reduction_rule() {
  static const ReductionRule rule;
  return rule;
}

}  // namespace tessera::rules
