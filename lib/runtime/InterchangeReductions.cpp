//===- lib/runtime/InterchangeReductions.cpp - Reductions not innermost ----===//
#include "InterchangeReductions.h"

#include <algorithm>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/support/Error.h"

namespace tessera::runtime::detail {

ir::PrimFunc interchange_reductions(const ir::PrimFunc &f) {
  analysis::FuncInfo info = analysis::analyze(f);
  if (info.is_scheduled || info.has_opaque_structure) return f;
  std::optional<schedule::Schedule> sch;
  for (const analysis::BlockInfo &b : info.blocks) {
    if (!b.trivial_binding || b.is_guarded || b.loops.size() < 2 || b.loops.size() != b.iters.size()) continue;
    auto kind_of = [&](const ir::Stmt &loop) {
      for (const analysis::IterInfo &it : b.iters)
        if (it.loop.same_as(loop.as<ir::For>()->loop_var)) return it.kind;
      return ir::IterKind::Opaque;
    };
    // The innermost spatial loop, with only reduction loops below it.
    size_t s = b.loops.size();
    while (s > 0 && kind_of(b.loops[s - 1]) == ir::IterKind::Reduce) --s;
    if (s == 0 || s == b.loops.size() || kind_of(b.loops[s - 1]) != ir::IterKind::Spatial) continue;
    const ir::Var spatial = b.loops[s - 1].as<ir::For>()->loop_var;
    int spatial_iter = -1;
    for (size_t i = 0; i < b.iters.size(); ++i)
      if (b.iters[i].loop.same_as(spatial)) spatial_iter = int(i);
    // Among the operands (reads that move with a reduction iter: not the
    // bookkeeping of the output itself), one contiguous along the spatial loop.
    auto is_operand = [&](const analysis::Access &a) {
      for (int it : a.iters())
        if (b.iters[size_t(it)].kind == ir::IterKind::Reduce) return true;
      return false;
    };
    const bool contiguous = std::any_of(b.reads.begin(), b.reads.end(), [&](const analysis::Access &a) {
      return is_operand(a) && a.inner_iter() == spatial_iter;
    });
    if (!contiguous) continue;
    std::vector<schedule::LoopRef> order;
    for (size_t l = 0; l < b.loops.size(); ++l)
      if (l != s - 1) order.push_back({b.loops[l].as<ir::For>()->loop_var});
    order.push_back({spatial});
    try {
      if (!sch) sch.emplace(f);
      sch->reorder(order);
    } catch (const Error &) {
      // Not a chain the primitive reorders (siblings, a dependence): as written.
    }
  }
  return sch ? sch->func() : f;
}

}  // namespace tessera::runtime::detail
