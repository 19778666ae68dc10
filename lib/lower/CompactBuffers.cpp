//===- lib/lower/CompactBuffers.cpp - Allocations shrunk to what is touched -===//
//
// cache_read, cache_write, set_scope and rfactor give their new "local" and
// "shared" buffers the shape of the whole original buffer, as TensorIR does;
// compute_at then narrows the loops that touch them to one tile. A kernel
// must allocate only the tile: a thread's local array holds what one thread
// touches, a shared array what one thread block touches.
//
//   W_local = T.alloc_buffer((4096, 4096), "float16", scope="local")
//   for v in range(8):                                      W_local: (1, 8)
//     W_local[bx * 4 + ty, ko * 256 + tx * 8 + v] = ...  -> W_local[0, v] = ...
//
// For each allocation the pass takes the bounding box of every load and
// store (arith::relax) over the loops inside the innermost loop that encloses
// all of them (and, for a shared buffer, over threadIdx, which the block's
// threads share); the loops outside stay symbolic, so one box of storage
// serves each of their iterations. That is only sound when no value crosses
// iterations, which the pass checks (the box moves by at least its size per
// iteration); otherwise it relaxes every loop. Each dimension whose box has a
// constant extent smaller than the buffer's (or the buffer's is symbolic) and
// a minimum over launch variables, kernel parameters and those outer loops is
// shrunk to that extent, and its indices are offset by the minimum; but a
// constant dimension whose box starts at 0 keeps its extent, which its author
// may have chosen (a 32 x 33 tile padded against bank conflicts). Other
// dimensions keep their extent (a symbolic one is then a LowerError in
// flatten_buffers, as before).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cstdlib>
#include <unordered_map>
#include <unordered_set>

#include "LoopScopedMutator.h"
#include "tessera/arith/IntSet.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;
using VarSet = std::unordered_set<const VarNode *>;

bool is_compactable_scope(const std::string &scope) {
  return scope == "local" || scope == "shared" || scope == "shared.dyn";
}

/// One load or store of an allocation, with the loops around it.
struct AccessSite {
  std::vector<Expr> indices;
  arith::VarDomains loops;  ///< outermost first
};

/// Collects every access to the allocations that may be compacted.
class AccessCollector : public IRVisitor {
 public:
  explicit AccessCollector(const LoweredFunc &f) {
    for (const Buffer &b : f.allocs)
      if (is_compactable_scope(b.scope()) && b->strides.empty()) sites[b.get()];
  }

  std::unordered_map<const BufferNode *, std::vector<AccessSite>> sites;
  /// Buffers with an access that uses a variable bound inside the body (a let).
  std::unordered_set<const BufferNode *> opaque;

 protected:
  using IRVisitor::visit_;
  void visit_(const For *op) override {
    visit(op->min);
    visit(op->extent);
    loops_.emplace_back(op->loop_var, Range{op->min, op->extent});
    IRVisitor::visit(op->body);
    loops_.pop_back();
  }
  void visit_(const LetStmt *op) override {
    let_vars_.insert(op->var.get());
    IRVisitor::visit_(op);
  }
  void visit_(const Let *op) override {
    let_vars_.insert(op->var.get());
    IRVisitor::visit_(op);
  }
  void visit_(const Load *op) override {
    record(op->buffer, op->indices);
    IRVisitor::visit_(op);
  }
  void visit_(const Store *op) override {
    record(op->buffer, op->indices);
    IRVisitor::visit_(op);
  }

 private:
  void record(const Buffer &b, const std::vector<Expr> &indices) {
    auto it = sites.find(b.get());
    if (it == sites.end()) return;
    for (const Expr &i : indices)
      pre_order_visit(Evaluate::make(i), [&](const Expr &x) {
        if (const auto *v = x.as<VarNode>(); v && let_vars_.count(v)) opaque.insert(b.get());
      }, nullptr);
    it->second.push_back({indices, loops_});
  }

  arith::VarDomains loops_;
  VarSet let_vars_;
};

bool uses_any(const Expr &e, const VarSet &vars) {
  bool found = false;
  pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
    if (const auto *v = x.as<VarNode>(); v && vars.count(v)) found = true;
  }, nullptr);
  return found;
}

/// The bounding box of `sites` when the loops of the first `kept` levels
/// (common to every site) stay symbolic and the others, and the threads for
/// a shared buffer, are relaxed; nullopt when some index has no finite bound
/// or a relaxed loop's range uses another relaxed loop.
std::optional<std::vector<Range>> bounding_box(const std::vector<AccessSite> &sites, size_t kept,
                                               const arith::VarDomains &threads, const arith::Analyzer &ana) {
  std::vector<std::vector<Range>> regions;
  for (const AccessSite &s : sites) {
    arith::VarDomains dom(s.loops.begin() + static_cast<std::ptrdiff_t>(kept), s.loops.end());
    dom.insert(dom.end(), threads.begin(), threads.end());
    VarSet relaxed;
    for (const auto &[v, r] : dom) relaxed.insert(v.get());
    for (const auto &[v, r] : dom)
      if (uses_any(r.min, relaxed) || uses_any(r.extent, relaxed)) return std::nullopt;
    // The kept loops are fixed but bounded (what proves `(ko * 256 + v) / 8` non-negative).
    arith::Analyzer inner = ana;
    for (size_t l = 0; l < kept; ++l) inner.bind(s.loops[l].first, s.loops[l].second);
    std::vector<Range> region;
    for (const Expr &i : s.indices) {
      std::optional<Range> r = arith::try_relax(i, dom, inner);
      if (!r) return std::nullopt;
      region.push_back(*r);
    }
    regions.push_back(std::move(region));
  }
  arith::Analyzer outer = ana;
  for (size_t l = 0; l < kept; ++l) outer.bind(sites[0].loops[l].first, sites[0].loops[l].second);
  return arith::union_regions(regions, outer);
}

/// True when the boxes of different iterations of the kept serial loops
/// cannot overlap, so no value is carried from one iteration to the next and
/// one box of storage serves them all: some dimension's minimum steps, per
/// kept loop it depends on, by a constant at least as large as everything
/// nested inside that step (mixed radix), and depends on every kept loop that
/// any minimum uses.
bool iterations_disjoint(const std::vector<Range> &box, const arith::VarDomains &kept, const arith::Analyzer &ana) {
  VarSet used;
  for (const Range &r : box)
    for (const auto &[v, dom] : kept)
      if (uses_any(r.min, {v.get()})) used.insert(v.get());
  if (used.empty()) return true;
  for (const Range &r : box) {
    std::optional<int64_t> extent = as_const_int(r.extent);
    if (!extent) continue;
    std::vector<std::pair<int64_t, std::optional<int64_t>>> steps;  // |step|, loop extent
    bool ok = true;
    for (const auto &[v, dom] : kept) {
      if (!used.count(v.get())) continue;
      Expr next = substitute(r.min, {{v, add(v, make_int(v.dtype(), 1))}});
      std::optional<int64_t> step = as_const_int(ana.simplify(sub(next, r.min)));
      if (!step || *step == 0) {
        ok = false;
        break;
      }
      steps.emplace_back(std::abs(*step), as_const_int(dom.extent));
    }
    if (!ok) continue;
    std::sort(steps.begin(), steps.end());
    int64_t span = *extent;  // what the loops with smaller steps cover
    for (size_t j = 0; ok && j < steps.size(); ++j) {
      auto [step, loop_extent] = steps[j];
      if (step < span) ok = false;
      else if (j + 1 < steps.size() && !loop_extent) ok = false;
      else if (j + 1 < steps.size()) span += step * (*loop_extent - 1);
    }
    if (ok) return true;
  }
  return false;
}

/// The new shape of one buffer and the offset of each dimension.
struct Compaction {
  Buffer buffer;
  std::vector<Expr> offset;
};

/// Rewrites the accesses of the compacted buffers.
class Rewriter : public detail::LoopScopedMutator {
 public:
  Rewriter(std::unordered_map<const BufferNode *, Compaction> c, const arith::Analyzer &launch)
      : compactions_(std::move(c)) {
    ana_ = launch;
  }

 protected:
  using detail::LoopScopedMutator::visit_;
  Expr visit_(const Load *op, const Expr &self) override {
    auto it = compactions_.find(op->buffer.get());
    if (it == compactions_.end()) return IRMutator::visit_(op, self);
    bool changed = false;
    std::vector<Expr> idx = mutate_list(op->indices, changed);
    return Load::make(it->second.buffer, shift(idx, it->second.offset));
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    auto it = compactions_.find(op->buffer.get());
    if (it == compactions_.end()) return IRMutator::visit_(op, self);
    bool changed = false;
    std::vector<Expr> idx = mutate_list(op->indices, changed);
    return Store::make(it->second.buffer, mutate(op->value), shift(idx, it->second.offset));
  }

 private:
  std::vector<Expr> shift(std::vector<Expr> idx, const std::vector<Expr> &offset) const {
    for (size_t d = 0; d < idx.size(); ++d)
      if (!is_const_int(offset[d], 0)) idx[d] = ana_.simplify(sub(idx[d], cast(idx[d].dtype(), offset[d])));
    return idx;
  }

  std::unordered_map<const BufferNode *, Compaction> compactions_;
};

}  // namespace

LoweredFunc compact_buffers(const LoweredFunc &f) {
  // What every access may assume: the launch variables' ranges.
  arith::Analyzer launch;
  VarSet kernel_vars;
  for (const KernelParam &p : f.params)
    if (!p.is_buffer()) kernel_vars.insert(p.var.get());
  for (int a = 0; a < 3; ++a) {
    if (f.launch.block_vars[a].defined() && f.launch.grid[a].defined()) {
      launch.bind(f.launch.block_vars[a], Range::from_extent(f.launch.grid[a]));
      kernel_vars.insert(f.launch.block_vars[a].get());
    }
    if (f.launch.thread_vars[a].defined() && f.launch.block[a].defined()) {
      launch.bind(f.launch.thread_vars[a], Range::from_extent(f.launch.block[a]));
      kernel_vars.insert(f.launch.thread_vars[a].get());
    }
  }
  arith::VarDomains threads;
  for (int a = 0; a < 3; ++a)
    if (f.launch.thread_vars[a].defined() && f.launch.block[a].defined())
      threads.emplace_back(f.launch.thread_vars[a], Range::from_extent(f.launch.block[a]));
  AccessCollector collect(f);
  collect.visit(f.body);

  std::unordered_map<const BufferNode *, Compaction> compactions;
  LoweredFunc out = f;
  for (Buffer &b : out.allocs) {
    auto it = collect.sites.find(b.get());
    if (it == collect.sites.end() || it->second.empty() || collect.opaque.count(b.get())) continue;
    const std::vector<AccessSite> &sites = it->second;
    const arith::VarDomains &relax_threads = b.scope() == "local" ? arith::VarDomains{} : threads;
    // Storage for one iteration of the innermost loop around every access,
    // when iterations cannot share values; else for the whole kernel.
    size_t common = sites[0].loops.size();
    for (const AccessSite &s : sites) {
      size_t n = 0;
      while (n < common && n < s.loops.size() && s.loops[n].first.same_as(sites[0].loops[n].first)) ++n;
      common = n;
    }
    arith::VarDomains kept(sites[0].loops.begin(), sites[0].loops.begin() + static_cast<std::ptrdiff_t>(common));
    std::optional<std::vector<Range>> box = bounding_box(sites, common, relax_threads, launch);
    if (box && !iterations_disjoint(*box, kept, launch)) box.reset();
    if (!box && common > 0) {
      kept.clear();
      box = bounding_box(sites, 0, relax_threads, launch);
    }
    if (!box) continue;
    VarSet allowed = kernel_vars;
    for (const auto &[v, r] : kept) allowed.insert(v.get());
    std::vector<Expr> shape = b.shape(), offset(b.ndim());
    bool shrinks = false;
    for (int d = 0; d < b.ndim(); ++d) {
      const Range &r = (*box)[static_cast<size_t>(d)];
      offset[d] = make_int(r.min.dtype(), 0);
      std::optional<int64_t> extent = as_const_int(r.extent);
      std::optional<int64_t> full = as_const_int(b.shape()[d]);
      bool kernel_wide = true;
      pre_order_visit(Evaluate::make(r.min), [&](const Expr &x) {
        if (const auto *v = x.as<VarNode>(); v && !allowed.count(v)) kernel_wide = false;
      }, nullptr);
      // A constant dimension indexed from 0 keeps the extent its author chose
      // (a 32 x 33 tile padded against bank conflicts).
      bool from_zero = full && is_const_int(r.min, 0);
      if (!extent || *extent < 1 || (full && *extent >= *full) || from_zero || !kernel_wide) continue;
      shape[d] = make_int(b.shape()[d].dtype(), *extent);
      offset[d] = r.min;
      shrinks = true;
    }
    if (!shrinks) continue;
    Buffer compact = Buffer::make(b.name(), b.dtype(), shape, b.scope());
    compactions.emplace(b.get(), Compaction{compact, offset});
    b = compact;
  }
  if (compactions.empty()) return f;
  // The offsets may leave floor divisions of non-negative values (`ax // 8`).
  out.body = simplify_division(Rewriter(std::move(compactions), launch).mutate(f.body));
  return out;
}

}  // namespace tessera::lower
