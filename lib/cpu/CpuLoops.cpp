//===- lib/cpu/CpuLoops.cpp - CPU schedules of a single loop nest ----------===//
#include "tessera/cpu/CpuLoops.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tessera/analysis/BlockInfo.h"
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

}  // namespace

std::string CpuLoopConfig::str() const { return fmt::format("{{\"loops\":\"{}\",\"tile\":{}}}", kind, tile); }

std::optional<CpuLoopConfig> CpuLoopConfig::parse(const std::string &text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("loops")) return std::nullopt;
  CpuLoopConfig c;
  if (!j["loops"].is_string()) throw UserError("CPU loop config: 'loops' must be tile2d, reduce_outer or rfactor");
  c.kind = j["loops"].get<std::string>();
  if (c.kind != "tile2d" && c.kind != "reduce_outer" && c.kind != "rfactor")
    throw UserError("CPU loop config: unknown loops '" + c.kind + "' (tile2d, reduce_outer, rfactor)");
  if (!j.contains("tile") || !j["tile"].is_number_integer())
    throw UserError("CPU loop config " + text + ": 'tile' must be an integer");
  c.tile = j["tile"].get<int64_t>();
  detail::check_known_fields(j, {"loops", "tile"}, "CPU loop config");
  return c;
}

std::vector<CpuLoopConfig> cpu_loop_candidates(const ir::PrimFunc &f) {
  LoopNest n = find_nest(f);
  if (!n.why.empty()) return {};
  const analysis::BlockInfo &b = n.block;
  std::vector<CpuLoopConfig> out;
  if (n.reduce.empty() && n.spatial.size() >= 2) {
    // Worth it when the reads and the write are not contiguous along the
    // same loop (a transpose); an elementwise copy is already in order.
    const int write_inner = b.writes.empty() ? -1 : b.writes[0].inner_iter();
    if (read_inner_iter(b) != write_inner)
      for (int64_t t : {16, 32, 64}) out.push_back({"tile2d", t});
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
  LoopNest n = find_nest(f);
  if (!n.why.empty()) throw UserError("CPU loop schedule " + c.str() + ": " + n.why);
  if (c.tile <= 0) throw UserError("CPU loop schedule " + c.str() + ": the tile must be positive");
  const analysis::BlockInfo &b = n.block;
  schedule::Schedule sch(f);
  schedule::BlockRef block = sch.get_block(b.name);
  if (c.kind == "tile2d" && n.reduce.empty() && n.spatial.size() >= 2) {
    const std::vector<schedule::LoopRef> loops = sch.get_loops(block);
    const size_t last = loops.size() - 1;
    auto a = sch.split(loops[last - 1], {std::nullopt, c.tile});
    auto z = sch.split(loops[last], {std::nullopt, c.tile});
    std::vector<schedule::LoopRef> order(loops.begin(), loops.end() - 2);
    order.insert(order.end(), {a[0], z[0], a[1], z[1]});
    sch.reorder(order);
    sch.parallel(order[0]);
    sch.vectorize(z[1]);
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
