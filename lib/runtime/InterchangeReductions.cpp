//===- lib/runtime/InterchangeReductions.cpp - Reductions not innermost ----===//
#include "InterchangeReductions.h"

#include <algorithm>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/Functor.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/support/Error.h"

namespace tessera::runtime::detail {

namespace {

/// Where no operand is contiguous along the spatial loop (C[i, j] += A[i, k]
/// * B[j, k]), one operand that the loop indexes in another dimension is
/// copied first into a buffer with that dimension last (B_global[k, j]):
/// the loop then runs along a contiguous row. The copy moves values, so the
/// sums and their bits are the same. True when it did.
template <typename IsOperand>
bool pack_along(schedule::Schedule &sch, const analysis::BlockInfo &b, IsOperand is_operand, int spatial_iter) {
  for (size_t r = 0; r < b.reads.size(); ++r) {
    const analysis::Access &a = b.reads[r];
    const int rank = int(a.indices.size());
    if (!is_operand(a) || !a.is_simple || rank < 2) continue;
    // Only an operand some other output loop reuses (B[j, k] across i): a
    // row sum's A[i, k] would be transposed whole to be read once.
    const std::vector<int> used = a.iters();
    bool reused = false;
    for (size_t it = 0; it < b.iters.size(); ++it)
      reused = reused || (b.iters[it].kind == ir::IterKind::Spatial &&
                          std::find(used.begin(), used.end(), int(it)) == used.end());
    if (!reused) continue;
    int dim = -1;
    for (int d = 0; d < rank - 1; ++d)
      if (a.single_iter(d) == spatial_iter) dim = d;
    if (dim < 0) continue;
    // The block's read region of that buffer (its position among T.reads).
    const auto *blk = b.block.as<ir::Block>();
    int64_t region = -1;
    for (size_t k = 0; k < blk->reads.size(); ++k)
      if (blk->reads[k].buffer.same_as(a.buffer)) region = int64_t(k);
    if (region < 0) continue;
    std::vector<ir::Var> src;
    std::vector<ir::Expr> dst;
    for (int d = 0; d < rank; ++d) src.push_back(ir::Var("x" + std::to_string(d), a.indices[size_t(d)].dtype()));
    for (int d = 0; d < rank; ++d)
      if (d != dim) dst.push_back(src[size_t(d)]);
    dst.push_back(src[size_t(dim)]);
    schedule::Schedule trial = sch;
    try {
      schedule::BlockRef copy = trial.cache_read(schedule::BlockRef{blk->name}, region, "global");
      trial.transform_layout(copy, 0, /*is_write=*/true, schedule::IndexMap{src, dst});
    } catch (const Error &) {
      continue;
    }
    sch = std::move(trial);
    return true;
  }
  return false;
}

/// Outputs computed side by side where each term is costly: 8 float64 lanes
/// of AVX-512, twice.
constexpr int64_t kLanes = 16;

/// Whether the block's update calls a transcendental function.
bool calls_math(const ir::Stmt &block) {
  bool found = false;
  ir::pre_order_visit(block.as<ir::Block>()->body, [&](const ir::Expr &e) {
    if (const auto *c = e.as<ir::Call>()) {
      switch (c->op) {
        case ir::Intrinsic::Exp:
        case ir::Intrinsic::Exp2:
        case ir::Intrinsic::Exp10:
        case ir::Intrinsic::Log:
        case ir::Intrinsic::Log2:
        case ir::Intrinsic::Log10:
        case ir::Intrinsic::Log1p:
        case ir::Intrinsic::Tanh:
        case ir::Intrinsic::Sigmoid:
        case ir::Intrinsic::Pow:
        case ir::Intrinsic::Erf:
        case ir::Intrinsic::Tan:
        case ir::Intrinsic::Asin:
        case ir::Intrinsic::Acos:
        case ir::Intrinsic::Atan:
        case ir::Intrinsic::Sinh:
        case ir::Intrinsic::Cosh:
        case ir::Intrinsic::Asinh:
        case ir::Intrinsic::Acosh:
        case ir::Intrinsic::Atanh:
        case ir::Intrinsic::Atan2:
        case ir::Intrinsic::Hypot: found = true; break;
        default: break;
      }
    }
  }, nullptr);
  return found;
}

}  // namespace

ir::PrimFunc interchange_reductions(const ir::PrimFunc &f) {
  // The loops as the schedule knows them: it renames repeated loop names
  // (two grids over `b`), so its loop variables are not f's.
  schedule::Schedule sch(f);
  analysis::FuncInfo info = analysis::analyze(sch.func());
  if (info.is_scheduled || info.has_opaque_structure) return f;
  bool changed = false;
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
    // Else, where each term is costly (an exp, a log: softmax's sum, a
    // log-sum-exp), outputs in groups of kLanes: the group's loop below the
    // reduction, its outputs' terms computed side by side (their operands
    // gathered a row apart).
    const bool costly = !contiguous && calls_math(b.block);
    if (!contiguous && !costly && !pack_along(sch, b, is_operand, spatial_iter)) continue;
    std::vector<schedule::LoopRef> order;
    for (size_t l = 0; l < b.loops.size(); ++l)
      if (l != s - 1) order.push_back({b.loops[l].as<ir::For>()->loop_var});
    order.push_back({spatial});
    try {
      schedule::Schedule trial = sch;
      if (costly) {
        std::vector<schedule::LoopRef> parts = trial.split({spatial}, {std::nullopt, kLanes});
        order.insert(order.begin() + std::ptrdiff_t(s - 1), parts[0]);
        order.back() = parts[1];
      }
      trial.reorder(order);
      sch = std::move(trial);
      changed = true;
    } catch (const Error &) {
      // Not a chain the primitive reorders (siblings, a dependence): as written.
      continue;
    }
    // The init in a loop of its own before the reduction's first loop: the
    // inner loop is then straight code the JIT vectorizes (a branch on "first
    // step" inside it stopped LLVM on some programs).
    const auto *blk = b.block.as<ir::Block>();
    if (blk->init) {
      schedule::Schedule trial = sch;
      try {
        trial.decompose_reduction(schedule::BlockRef{blk->name}, {b.loops[s].as<ir::For>()->loop_var});
        sch = std::move(trial);
      } catch (const Error &) {
        // The init stays in the block.
      }
    }
  }
  return changed ? sch.func() : f;
}

}  // namespace tessera::runtime::detail
