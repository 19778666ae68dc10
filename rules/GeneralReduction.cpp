//===- rules/GeneralReduction.cpp - Several reductions of one row -----------===//
#include "tessera/rules/GeneralReduction.h"

#include <algorithm>
#include <set>

#include "ConfigJson.h"
#include "ReductionCommon.h"

namespace tessera::rules {

using analysis::BlockInfo;
using analysis::FuncInfo;
using ir::IterKind;
using namespace reduction_detail;

Json GeneralReductionConfig::to_json() const {
  return Json{{"rule", rule()},
              {"threads_x", threads_x},
              {"rows_per_block", rows_per_block},
              {"vector", vector},
              {"unroll", unroll},
              {"local_intermediates", local_intermediates}};
}

GeneralReductionConfig GeneralReductionConfig::from_json(const Json &j) {
  ConfigReader r(j, "general_reduction");
  GeneralReductionConfig c;
  c.threads_x = r.integer("threads_x");
  c.rows_per_block = r.integer("rows_per_block");
  c.vector = r.integer("vector");
  c.unroll = r.integer("unroll");
  c.local_intermediates = r.boolean("local_intermediates");
  r.finish();
  return c;
}

void GeneralReductionConfig::validate(const Arch &arch) const {
  require_threads(rule(), "threads_x", threads_x, arch);
  require_threads(rule(), "rows_per_block", rows_per_block, arch);
  require_block_threads(rule(), "threads_x * rows_per_block", threads_x * rows_per_block, arch);
  require(vector >= 1 && vector <= arch.memory.max_vector_bytes && (vector & (vector - 1)) == 0, rule(), "vector",
          vector, "is not a power of two in [1, " + std::to_string(arch.memory.max_vector_bytes) + "]");
  require_unroll(rule(), unroll);
}

namespace {

enum class LoopRole { Row, Col, Unit };

struct GeneralReductionMatch final : Match {
  std::vector<std::string> inlined;     ///< elementwise blocks to inline, in order
  std::vector<std::string> reductions;  ///< R_1 .. R_n, program order
  std::vector<std::optional<int64_t>> reduce_extents;
  std::string last;                     ///< L
  /// The role of each of L's loops (get_loops order) and the position of
  /// the loop of its contiguous column iter.
  std::vector<LoopRole> roles;
  int contiguous_loop = -1;
  std::optional<int64_t> rows, cols;
  int elem_bytes = 4;  ///< widest element L accesses along its columns

  std::string describe() const override {
    auto n = [](std::optional<int64_t> e) { return e ? std::to_string(*e) : std::string("symbolic"); };
    std::string s = n(rows) + " rows of " + n(cols) + ": reductions";
    for (const std::string &r : reductions) s += " '" + r + "'";
    s += ", then '" + last + "'";
    if (!inlined.empty()) s += ", " + std::to_string(inlined.size()) + " block(s) inlined";
    return s;
  }
};

/// Why reduction `b` cannot be computed per row ("" when it can).
std::string why_not_row_reduction(const ir::PrimFunc &f, const BlockInfo &b) {
  if (std::string why = why_not_splittable_reduction(b); !why.empty()) return why;
  for (const analysis::Access &w : b.writes)
    if (f.is_param_buffer(w.buffer))
      return "reduction '" + b.name + "' writes the output parameter '" + w.buffer.name() +
             "' (general_reduction keeps the per-row values on chip; the reduction rule handles a reduction output)";
  if (std::string why = why_contraction(b); !why.empty()) return why;
  const analysis::Access *a = dominant_read(b);
  int inner = a ? a->inner_iter() : -1;
  if (inner < 0 || b.iters[inner].kind != IterKind::Reduce)
    return "reduction '" + b.name + "' does not reduce along the contiguous axis of '" +
           (a ? a->buffer.name() : std::string("its input")) + "'";
  return "";
}

class GeneralReductionRule final : public Rule {
 public:
  const char *name() const override { return "general_reduction"; }

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
    const BlockInfo &last = info.blocks.back();
    if (last.has_reduce())
      return R::fail("the last block '" + last.name +
                     "' is a reduction, not an elementwise block over the rows and their columns");

    auto m = std::make_shared<GeneralReductionMatch>();
    m->inlined = inlined->blocks;
    std::set<const ir::BufferNode *> per_row;
    for (size_t i = 0; i + 1 < info.blocks.size(); ++i) {
      const BlockInfo &b = info.blocks[i];
      if (!b.has_reduce())
        return R::fail("block '" + b.name + "' (" + b.dom_kind() +
                       ") before the last block is neither a reduction nor inlinable");
      if (std::string why = why_not_row_reduction(f, b); !why.empty()) return R::fail(why);
      m->reductions.push_back(b.name);
      m->reduce_extents.push_back(iter_extent(b, IterKind::Reduce));
      for (const analysis::Access &w : b.writes) per_row.insert(w.buffer.get());  // a tuple's every part
    }
    if (std::string why = why_not_plain_injective(last); !why.empty()) return R::fail(why);
    if (!last.writes_output) return R::fail("the last block '" + last.name + "' writes no output parameter");

    // L's row iters: those indexing the per-row values it reads.
    std::set<int> row_iters;
    bool reads_reduced = false;
    for (const analysis::Access &a : last.reads) {
      if (!per_row.count(a.buffer.get())) continue;
      if (!a.is_simple)
        return R::fail("the last block '" + last.name + "' reads '" + a.buffer.name() + "' at computed indices");
      reads_reduced = true;
      for (int i : a.iters()) row_iters.insert(i);
    }
    if (!reads_reduced) return R::fail("the last block '" + last.name + "' reads no reduced value");
    // No row axis (the reduced values read at constant indices): the whole
    // tensor is one row, as relax prints a batch-1 decode step's rmsnorm.
    if (row_iters.size() == last.iters.size())
      return R::fail("the last block '" + last.name +
                     "' has no axis beyond the reduced rows (the reduction rule handles per-row epilogues)");
    int contiguous = last.writes[0].inner_iter();
    if (contiguous < 0 || row_iters.count(contiguous))
      return R::fail("the contiguous axis of '" + last.writes[0].buffer.name() +
                     "' is a row axis: normalising along a non-contiguous axis is not a row reduction");
    for (const std::string &r : m->reductions) {
      const BlockInfo &b = info.blocks[info.find(r)];
      size_t spatial = std::count_if(b.iters.begin(), b.iters.end(),
                                     [](const analysis::IterInfo &i) { return i.kind == IterKind::Spatial; });
      if (spatial != row_iters.size())
        return R::fail("reduction '" + r + "' keeps " + std::to_string(spatial) + " axes but '" + last.name +
                       "' reads the per-row values over " + std::to_string(row_iters.size()));
    }

    m->last = last.name;
    int64_t rows = 1, cols = 1;
    bool rows_known = true, cols_known = true;
    for (size_t l = 0; l < last.loops.size(); ++l) {
      const ir::Var &v = last.loops[l].as<ir::For>()->loop_var;
      LoopRole role = LoopRole::Unit;
      for (size_t i = 0; i < last.iters.size(); ++i) {
        if (!last.iters[i].loop.same_as(v)) continue;
        role = row_iters.count(static_cast<int>(i)) ? LoopRole::Row : LoopRole::Col;
        if (static_cast<int>(i) == contiguous) m->contiguous_loop = static_cast<int>(l);
      }
      m->roles.push_back(role);
      auto e = const_extent(last.loops[l]);
      bool &known = role == LoopRole::Row ? rows_known : cols_known;
      int64_t &n = role == LoopRole::Row ? rows : cols;
      if (!e) known = false;
      else n *= *e;
    }
    if (rows_known) m->rows = rows;
    if (cols_known) m->cols = cols;
    int bytes = 1;
    auto widen = [&](const analysis::Access &a) {
      for (int i : a.iters())
        if (!row_iters.count(i)) bytes = std::max(bytes, a.buffer.dtype().bytes());
    };
    for (const analysis::Access &a : last.reads) widen(a);
    widen(last.writes[0]);
    m->elem_bytes = bytes;
    return R(MatchPtr(m));
  }

  std::unique_ptr<Config> default_config(const Match &mm, const Arch &arch) const override {
    const auto &m = static_cast<const GeneralReductionMatch &>(mm);
    auto c = std::make_unique<GeneralReductionConfig>();
    c->threads_x = row_threads(m.cols, arch);
    c->rows_per_block = std::max<int64_t>(1, target_block_threads(arch) / c->threads_x);
    if (m.rows)
      while (c->rows_per_block > 1 && ceil_div(*m.rows, c->rows_per_block) < arch.compute.sm_count)
        c->rows_per_block /= 2;
    // The widest vector the loads allow that divides the row (every vector
    // starts aligned) and leaves each thread at least one whole vector.
    int64_t v = std::max(1, arch.memory.max_vector_bytes / m.elem_bytes);
    while (v > 1 && (!m.cols || *m.cols % v != 0 || v * c->threads_x > *m.cols)) v /= 2;
    c->vector = v;
    if (m.cols) c->unroll = serial_unroll(ceil_div(*m.cols, c->threads_x));
    return c;
  }

  std::unique_ptr<Config> config_from_json(const Json &j) const override {
    return std::make_unique<GeneralReductionConfig>(GeneralReductionConfig::from_json(j));
  }

  schedule::Schedule build_schedule(const ir::PrimFunc &f, const Match &mm, const Config &config) const override {
    const auto &m = static_cast<const GeneralReductionMatch &>(mm);
    const auto *c = dynamic_cast<const GeneralReductionConfig *>(&config);
    if (!c) throw ConfigError(std::string("the general_reduction rule got a config for '") + config.rule() + "'");
    schedule::Schedule sch(f);
    for (const std::string &b : m.inlined) sch.compute_inline(sch.get_block(b));

    // Step 1. L: row loops outside, column loops inside (the contiguous one
    // innermost), one loop each, split and bound.
    schedule::BlockRef last = sch.get_block(m.last);
    std::vector<schedule::LoopRef> loops = sch.get_loops(last);
    std::vector<schedule::LoopRef> rows, cols;
    for (size_t l = 0; l < loops.size(); ++l) {
      if (static_cast<int>(l) == m.contiguous_loop) continue;
      (m.roles[l] == LoopRole::Col ? cols : rows).push_back(loops[l]);
    }
    cols.push_back(loops[m.contiguous_loop]);
    std::vector<schedule::LoopRef> order = rows;
    order.insert(order.end(), cols.begin(), cols.end());
    if (order != loops) sch.reorder(order);
    // One row: a unit loop around everything stands for the row axis.
    schedule::LoopRef r = rows.empty() ? sch.add_unit_loop(order.front(), "r") : fuse_all(sch, rows, "r");
    schedule::LoopRef col = fuse_all(sch, cols, "c");
    std::vector<schedule::LoopRef> row_parts = {r};
    if (c->rows_per_block > 1) row_parts = sch.split(r, {std::nullopt, c->rows_per_block}, {"bx", "ry"});
    ThreadSplit cs = split_for_threads(sch, col, m.cols, c->threads_x, c->unroll, c->vector, "c");
    thread_outermost(sch, cs);
    sch.bind(row_parts[0], "blockIdx.x");
    if (row_parts.size() > 1) sch.bind(row_parts[1], "threadIdx.y");
    if (cs.thread) sch.bind(*cs.thread, "threadIdx.x");
    if (cs.vector) {
      // A tail predicate over whole vectors goes on a block around the
      // vector loop, so that it becomes an `if` outside the vector accesses.
      if (cs.whole_vectors && !ir::is_const_int(sch.get(last).as<ir::Block>()->predicate, 1))
        sch.blockize(*cs.vector);
      sch.vectorize(*cs.vector);
    }
    unroll_pieces(sch, cs);
    const schedule::LoopRef &row_loop = row_parts.back();

    // Step 2. Each reduction under the row loop (the last first: compute_at
    // puts a block at the start of the loop body), its reduce loops split
    // over the same threads, its per-row value on chip.
    for (size_t k = m.reductions.size(); k-- > 0;) {
      schedule::BlockRef red = sch.get_block(m.reductions[k]);
      sch.compute_at(red, row_loop);
      std::vector<schedule::LoopRef> all = sch.get_loops(red);
      auto at = std::find(all.begin(), all.end(), row_loop);
      std::vector<schedule::LoopRef> inner(at + 1, all.end());
      // Every buffer it reduces into (two for a sum and a sum of squares).
      const size_t writes = sch.get(red).as<ir::Block>()->writes.size();
      for (size_t w = 0; w < writes; ++w) sch.set_scope(red, static_cast<int64_t>(w), c->local_intermediates ? "local" : "shared");
      if (inner.empty()) continue;  // a reduction of extent 1: nothing to split
      schedule::LoopRef kf = fuse_all(sch, inner, m.reductions[k] + "_k");
      ThreadSplit ks = split_for_threads(sch, kf, m.reduce_extents[k], c->threads_x, c->unroll, c->vector,
                                         m.reductions[k] + "_k");
      thread_outermost(sch, ks);
      if (ks.thread) sch.bind(*ks.thread, "threadIdx.x");
      unroll_pieces(sch, ks);
      vector_loads(sch, ks);
    }
    return sch;
  }
};

}  // namespace

const Rule &general_reduction_rule() {
  static const GeneralReductionRule rule;
  return rule;
}

}  // namespace tessera::rules
