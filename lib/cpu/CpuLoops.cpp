//===- lib/cpu/CpuLoops.cpp - CPU schedules of loop nests ------------------===//
#include "tessera/cpu/CpuLoops.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/Annotation.h"
#include "tessera/schedule/Error.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/support/Error.h"

#include "ConfigFields.h"

namespace tessera::cpu {

namespace {

/// The one block of `f` and its loops when the file comment's conditions
/// hold, else why not.
struct LoopNest {
  analysis::BlockInfo block;
  std::vector<int> spatial, reduce;  // iter positions, in loop order
  std::string why;
};

LoopNest find_nest(const ir::PrimFunc &f) {
  LoopNest out;
  analysis::FuncInfo info = analysis::analyze(f);
  if (info.is_scheduled) return out.why = "it is already scheduled", out;
  if (info.blocks.size() != 1) return out.why = fmt::format("it has {} blocks, not one", info.blocks.size()), out;
  const analysis::BlockInfo &b = info.blocks[0];
  if (!b.trivial_binding || b.is_guarded || b.loops.size() != b.iters.size())
    return out.why = "block '" + b.name + "' is not bound one iter var to one loop", out;
  // Iter positions in the order of their loops.
  for (const ir::Stmt &l : b.loops)
    for (size_t i = 0; i < b.iters.size(); ++i)
      if (b.iters[i].loop.same_as(l.as<ir::For>()->loop_var))
        (b.iters[i].kind == ir::IterKind::Reduce ? out.reduce : out.spatial).push_back(int(i));
  if (out.spatial.size() + out.reduce.size() != b.iters.size())
    return out.why = "block '" + b.name + "' has iters that are neither spatial nor reduce", out;
  out.block = b;
  return out;
}

/// The iter of the innermost dimension the block reads from (-1: none, or
/// several reads that disagree).
int read_inner_iter(const analysis::BlockInfo &b) {
  int inner = -1;
  for (const analysis::Access &a : b.reads) {
    const int i = a.inner_iter();
    if (i < 0 || (inner >= 0 && i != inner)) return -1;
    inner = i;
  }
  return inner;
}

schedule::LoopRef loop_of(const analysis::BlockInfo &b, int iter) { return {b.iters[size_t(iter)].loop}; }

/// A reduction rfactor can split into `lanes` partial results: rows (the
/// outermost loop spatial, run over the cores), one reduce iter, bound to the
/// innermost loop, whose constant extent `lanes` divides (and exceeds).
bool lanes_divide(const analysis::BlockInfo &b, int64_t lanes) {
  if (!b.is_reduction() || !b.trivial_binding || b.is_guarded || b.loops.size() < 2) return false;
  const ir::Var &outer = b.loops.front().as<ir::For>()->loop_var;
  if (std::none_of(b.iters.begin(), b.iters.end(), [&](const analysis::IterInfo &it) {
        return it.kind == ir::IterKind::Spatial && it.loop.same_as(outer);
      }))
    return false;
  int reduce = -1;
  for (size_t i = 0; i < b.iters.size(); ++i)
    if (b.iters[i].kind == ir::IterKind::Reduce) {
      if (reduce >= 0) return false;
      reduce = int(i);
    }
  const auto extent = ir::as_const_int(b.iters[size_t(reduce)].dom.extent);
  return b.loops.back().as<ir::For>()->loop_var.same_as(b.iters[size_t(reduce)].loop) && extent &&
         *extent % lanes == 0 && *extent > lanes;
}

/// The reduction's `lanes` partial results (rfactor): the name of the block
/// that computes them.
std::string split_into_lanes(schedule::Schedule &sch, const analysis::BlockInfo &b, int64_t lanes) {
  const schedule::LoopRef r = {b.loops.back().as<ir::For>()->loop_var};
  auto parts = sch.split(r, {std::nullopt, lanes});
  return sch.rfactor(parts[1], 1).name;
}

/// The partial results' block `b` (of split_into_lanes) in vectors: its
/// lanes loop innermost and vectorized, after its reduce loop; the partials
/// set before that loop, not under a test of its first iteration, so that
/// the loop updates them unconditionally and LLVM keeps them in registers.
void vectorize_lanes(schedule::Schedule &sch, const analysis::BlockInfo &b, int64_t lanes) {
  const ir::Var &outer = b.loops.front().as<ir::For>()->loop_var;
  std::optional<schedule::LoopRef> reduce, lane;
  // The lanes iter is the last spatial one of extent L: rfactor appends it
  // after the reduction's own spatial iters.
  for (const analysis::IterInfo &it : b.iters) {
    if (it.loop.same_as(outer)) continue;
    if (it.kind == ir::IterKind::Reduce) reduce = schedule::LoopRef{it.loop};
    else if (ir::is_const_int(it.dom.extent, lanes)) lane = schedule::LoopRef{it.loop};
  }
  TESSERA_ICHECK(reduce && lane) << "block '" << b.name << "' is not a partial result of split_into_lanes";
  sch.reorder({*reduce, *lane});
  sch.vectorize(*lane);
  sch.decompose_reduction(sch.get_block(b.name), *reduce);
}

/// A block of no reduction whose rows can run over the cores and its
/// innermost loop in vectors of `lanes`: its outermost loop bound to a
/// spatial iter, its innermost loop of a constant extent that `lanes`
/// divides (its own iter, so its lanes are independent elements).
bool rows_and_lanes(const analysis::BlockInfo &b, int64_t lanes) {
  if (b.is_reduction() || !b.trivial_binding || b.is_guarded || b.loops.size() < 2) return false;
  const ir::For *inner = b.loops.back().as<ir::For>();
  const auto extent = ir::as_const_int(inner->extent);
  return extent && *extent % lanes == 0 && ir::is_const_int(inner->min, 0);
}

/// rows L, fused or not (the file comment of CpuLoops.h); `split` counts the
/// reductions that got lanes. ScheduleError when the blocks cannot be fused.
ir::PrimFunc schedule_rows(const ir::PrimFunc &f, int64_t lanes, bool fuse, int &split) {
  schedule::Schedule sch(f);
  // Intermediates that one block reads are computed where it reads them.
  std::vector<std::string> kept;
  for (bool inlined = true; inlined;) {
    inlined = false;
    const analysis::FuncInfo info = analysis::analyze(sch.func());
    for (const analysis::BlockInfo &b : info.blocks) {
      if (!b.is_inlinable() || b.consumers.size() != 1 || b.writes_output ||
          std::find(kept.begin(), kept.end(), b.name) != kept.end())
        continue;
      try {
        sch.compute_inline(sch.get_block(b.name));
        inlined = true;
      } catch (const schedule::ScheduleError &) {
        kept.push_back(b.name);  // its consumer reads it in a way inlining refuses
      }
      break;
    }
  }
  // Each reduction in its own loop nest, which splitting another leaves as it is.
  split = 0;
  std::vector<std::string> partials;
  for (const analysis::BlockInfo &b : analysis::analyze(sch.func()).blocks)
    if (lanes_divide(b, lanes)) partials.push_back(split_into_lanes(sch, b, lanes)), ++split;
  if (fuse) {
    // Every block computed under the last one's outermost loop, last to
    // first, each where its consumers need it: one row at a time through
    // all of them, its intermediates still in the caches when the next
    // block reads them.
    const analysis::FuncInfo info = analysis::analyze(sch.func());
    const std::string &last = info.blocks.back().name;
    for (size_t b = info.blocks.size() - 1; b-- > 0;)
      sch.compute_at(sch.get_block(info.blocks[b].name), sch.get_loops(sch.get_block(last)).front());
  }
  // Rows over the cores (each outermost loop once); the partial results and
  // the element-wise blocks between the reductions (a softmax's
  // exponentials and its division) in vectors of L.
  std::vector<const ir::VarNode *> parallel;
  for (const analysis::BlockInfo &b : analysis::analyze(sch.func()).blocks) {
    const bool partial = std::find(partials.begin(), partials.end(), b.name) != partials.end();
    if (!partial && !rows_and_lanes(b, lanes)) continue;
    const ir::Var &outer = b.loops.front().as<ir::For>()->loop_var;
    if (std::find(parallel.begin(), parallel.end(), outer.get()) == parallel.end()) {
      sch.parallel(schedule::LoopRef{outer});
      parallel.push_back(outer.get());
    }
    if (partial) {
      vectorize_lanes(sch, b, lanes);
    } else {
      const schedule::LoopRef inner{b.loops.back().as<ir::For>()->loop_var};
      sch.vectorize(sch.split(inner, {std::nullopt, lanes})[1]);
    }
  }
  return sch.func();
}

}  // namespace

std::string CpuLoopConfig::str() const {
  return fmt::format("{{\"loops\":\"{}\",\"tile\":{}{}{}}}", kind, tile, stream ? ",\"stream\":true" : "",
                     fuse ? ",\"fuse\":true" : "");
}

std::optional<CpuLoopConfig> CpuLoopConfig::parse(const std::string &text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("loops")) return std::nullopt;
  CpuLoopConfig c;
  if (!j["loops"].is_string()) throw UserError("CPU loop config: 'loops' must be tile2d, reduce_outer, rfactor or rows");
  c.kind = j["loops"].get<std::string>();
  if (c.kind != "tile2d" && c.kind != "reduce_outer" && c.kind != "rfactor" && c.kind != "rows")
    throw UserError("CPU loop config: unknown loops '" + c.kind + "' (tile2d, reduce_outer, rfactor, rows)");
  if (!j.contains("tile") || !j["tile"].is_number_integer())
    throw UserError("CPU loop config " + text + ": 'tile' must be an integer");
  c.tile = j["tile"].get<int64_t>();
  if (j.contains("stream")) {
    if (!j["stream"].is_boolean() || c.kind != "tile2d")
      throw UserError("CPU loop config " + text + ": 'stream' is true or false, and only for tile2d");
    c.stream = j["stream"].get<bool>();
  }
  if (j.contains("fuse")) {
    if (!j["fuse"].is_boolean() || c.kind != "rows")
      throw UserError("CPU loop config " + text + ": 'fuse' is true or false, and only for rows");
    c.fuse = j["fuse"].get<bool>();
  }
  detail::check_known_fields(j, {"loops", "tile", "stream", "fuse"}, "CPU loop config");
  return c;
}

std::vector<CpuLoopConfig> cpu_loop_candidates(const ir::PrimFunc &f) {
  LoopNest n = find_nest(f);
  if (!n.why.empty()) {
    // Several blocks: rows, when some reduction gets lanes.
    std::vector<CpuLoopConfig> out;
    const analysis::FuncInfo info = analysis::analyze(f);
    if (info.is_scheduled || info.has_opaque_structure || info.blocks.size() < 2) return out;
    for (bool fuse : {false, true})
      for (int64_t lanes : {16, 64}) {
        int split = 0;
        try {
          schedule_rows(f, lanes, fuse, split);
        } catch (const Error &) {
          split = 0;
        }
        if (split > 0) out.push_back({"rows", lanes, false, fuse});
      }
    return out;
  }
  const analysis::BlockInfo &b = n.block;
  std::vector<CpuLoopConfig> out;
  if (n.reduce.empty() && n.spatial.size() >= 2) {
    // Worth it when the reads and the write are not contiguous along the
    // same loop (a transpose); an elementwise copy is already in order.
    const int write_inner = b.writes.empty() ? -1 : b.writes[0].inner_iter();
    if (read_inner_iter(b) != write_inner)
      for (bool stream : {false, true})
        for (int64_t t : {16, 64, 256}) out.push_back({"tile2d", t, stream});
  }
  if (n.spatial.size() == 1 && n.reduce.size() == 1 && b.combiner != analysis::Combiner::None &&
      b.tuple_values.empty()) {
    const int inner = read_inner_iter(b);
    if (inner == n.spatial[0] && b.loops.back().as<ir::For>()->loop_var.same_as(b.iters[size_t(n.reduce[0])].loop))
      for (int64_t t : {64, 256}) out.push_back({"reduce_outer", t});
    // rfactor needs a factor that divides the reduction (else the split's
    // predicate would leave partial sums unset).
    const auto extent = ir::as_const_int(b.iters[size_t(n.reduce[0])].dom.extent);
    if (inner == n.reduce[0] && extent)
      for (int64_t l : {16, 64})
        if (*extent % l == 0 && *extent > l) out.push_back({"rfactor", l});
  }
  return out;
}

ir::PrimFunc schedule_loops_for_cpu(const ir::PrimFunc &f, const CpuLoopConfig &c) {
  if (c.kind == "rows") {
    if (c.tile < 2) throw UserError("CPU loop schedule " + c.str() + ": rows needs at least 2 lanes");
    int split = 0;
    ir::PrimFunc g = schedule_rows(f, c.tile, c.fuse, split);
    if (split == 0)
      throw UserError("CPU loop schedule " + c.str() + ": no reduction of '" + f.name() +
                      "' is over its innermost loop with a constant extent " + std::to_string(c.tile) +
                      " divides");
    return g;
  }
  LoopNest n = find_nest(f);
  if (!n.why.empty()) throw UserError("CPU loop schedule " + c.str() + ": " + n.why);
  if (c.tile <= 0) throw UserError("CPU loop schedule " + c.str() + ": the tile must be positive");
  const analysis::BlockInfo &b = n.block;
  schedule::Schedule sch(f);
  schedule::BlockRef block = sch.get_block(b.name);
  if (c.kind == "tile2d" && n.reduce.empty() && n.spatial.size() >= 2) {
    const std::vector<schedule::LoopRef> loops = sch.get_loops(block);
    const size_t last = loops.size() - 1;
    // Tiles of T x T in cache, each walked in V x V tiles of registers: V
    // elements are one 512-bit vector, and the JIT transposes such a tile
    // with shuffles (runtime/llvm/CodegenTranspose.cpp).
    const int64_t bytes = std::max<int64_t>(1, b.writes.empty() ? 4 : b.writes[0].buffer.dtype().bytes());
    const int64_t v = std::min<int64_t>(c.tile, std::max<int64_t>(2, 64 / bytes));
    auto tiles = [&](const schedule::LoopRef &l) {
      if (c.tile > v && c.tile % v == 0) return sch.split(l, {std::nullopt, c.tile / v, v});
      return sch.split(l, {std::nullopt, c.tile});
    };
    const std::vector<schedule::LoopRef> a = tiles(loops[last - 1]), z = tiles(loops[last]);
    std::vector<schedule::LoopRef> order(loops.begin(), loops.end() - 2);
    for (size_t k = 0; k < a.size(); ++k) order.insert(order.end(), {a[k], z[k]});
    sch.reorder(order);
    sch.parallel(order[0]);
    sch.vectorize(z.back());
    if (c.stream) sch.annotate(block, ir::kStreamingStoresAnnotation, ir::AnnValue(int64_t(1)));
    return sch.func();
  }
  if (c.kind == "reduce_outer" && n.spatial.size() == 1 && n.reduce.size() == 1) {
    auto s = sch.split(loop_of(b, n.spatial[0]), {std::nullopt, c.tile});
    const schedule::LoopRef r = loop_of(b, n.reduce[0]);
    sch.reorder({s[0], r, s[1]});
    sch.parallel(s[0]);
    sch.decompose_reduction(block, r);
    sch.vectorize(s[1]);
    return sch.func();
  }
  if (c.kind == "rfactor" && n.spatial.size() == 1 && n.reduce.size() == 1) {
    auto r = sch.split(loop_of(b, n.reduce[0]), {std::nullopt, c.tile});
    schedule::BlockRef partial = sch.rfactor(r[1], 1);
    // The partial sums: rows over the cores, the L lanes of each vectorized.
    std::vector<schedule::LoopRef> loops = sch.get_loops(partial);
    sch.parallel(loops.front());
    sch.vectorize(loops.back());
    return sch.func();
  }
  throw UserError("CPU loop schedule " + c.str() + " does not apply to '" + b.name + "' (" +
                  std::to_string(n.spatial.size()) + " spatial and " + std::to_string(n.reduce.size()) +
                  " reduction loops)");
}

}  // namespace tessera::cpu
