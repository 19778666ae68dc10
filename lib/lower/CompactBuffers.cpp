//===- lib/lower/CompactBuffers.cpp - Shrink kernel buffers to what is used -===//
//
// cache_read/cache_write give a "shared" or "local" copy the whole shape of
// the buffer it caches (TensorIR style); compute_at then confines its
// accesses to one tile. This pass shrinks each such allocation to the box
// its accesses touch, as TVM's CompactBufferAllocation does:
//
//   A_shared = T.alloc_buffer((2048, 2048), scope="shared")    (16 MB)
//   for k_0: ... A_shared[by * 64 + ax0, k_0 * 16 + ax1] = ...
//            ... A_shared[by * 64 + ty * 8 + i, k_0 * 16 + k_1] ...
//   ->  A_shared = (64, 16): A_shared[ax0, ax1], A_shared[ty * 8 + i, k_1]
//
// The box is taken at the innermost loop enclosing every access (the LCA):
// loops below it are relaxed over their ranges, loops above it stay
// symbolic and become part of the box's origin (`k_0 * 16`). Thread axes
// are per tag: a "shared" buffer is seen by the whole thread block (threadIdx
// relaxed, blockIdx symbolic), a "local" one by one thread (both symbolic).
// The origin may also use the kernel's scalar parameters (symbolic shapes),
// as a fused tile loop's does: `bx // ((n + 31) // 32) * 32`. Moving the
// origin with a serial loop above the LCA is only sound when the
// boxes of different iterations are disjoint (no value flows from one
// iteration to the next through the shifted addresses); a dimension whose
// origin moves by less than its extent keeps its full size.
//
// storage_align requests (the "buffer_dim_align" block annotation, which
// lower_blocks drops, hence read here from the block form) pad the strides
// of the result: stride[axis] = the smallest s >= the natural stride with
// s % factor == offset.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "tessera/arith/IntSet.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

struct DimAlign {
  int64_t axis, factor, offset;
};

/// The storage_align requests per buffer, from the blocks that write them.
std::unordered_map<const BufferNode *, std::vector<DimAlign>> collect_dim_aligns(const Stmt &blocks) {
  std::unordered_map<const BufferNode *, std::vector<DimAlign>> out;
  pre_order_visit(blocks, nullptr, [&](const Stmt &s) {
    const auto *b = s.as<Block>();
    if (!b) return;
    auto it = b->annotations.find("buffer_dim_align");
    if (it == b->annotations.end() || !it->second.is_list()) return;
    for (const AnnValue &e : it->second.as_list()) {
      if (!e.is_list() || e.as_list().size() != 4) continue;
      const auto &l = e.as_list();
      if (!l[0].is_int() || !l[1].is_int() || !l[2].is_int() || !l[3].is_int()) continue;
      int64_t index = l[0].as_int();
      if (index < 0 || index >= static_cast<int64_t>(b->writes.size())) continue;
      out[b->writes[index].buffer.get()].push_back({l[1].as_int(), l[2].as_int(), l[3].as_int()});
    }
  });
  return out;
}

bool is_shared(const std::string &scope) {
  return scope == "shared" || scope == "shared.dyn";
}
bool is_thread_tag(const std::string &tag) {
  return tag.rfind("threadIdx.", 0) == 0;
}

/// One load or store of a buffer being compacted.
struct Site {
  std::vector<const For *> loops;  ///< enclosing loops, outermost first
  std::vector<Expr> indices;       ///< thread loop variables replaced by the per-tag variables
};

/// Finds every access to the allocated buffers, with its loops; thread loop
/// variables become one variable per tag (nested loops of one tag are the
/// same GPU index).
class SiteCollector : public IRVisitor {
 public:
  explicit SiteCollector(const std::vector<Buffer> &allocs) {
    for (const Buffer &b : allocs) sites[b.get()];
  }
  std::unordered_map<const BufferNode *, std::vector<Site>> sites;
  /// Per tag: its variable and extent (the first loop's).
  std::map<std::string, std::pair<Var, Expr>> tags;

 protected:
  void visit_(const For *op) override {
    visit(op->min);
    visit(op->extent);
    stack_.push_back(op);
    std::optional<std::pair<Var, Expr>> saved;
    if (op->for_kind == ForKind::ThreadBinding) {
      auto [it, fresh] =
          tags.try_emplace(op->thread_tag, Var(op->thread_tag, op->loop_var.dtype()), op->extent);
      map_.emplace_back(op->loop_var,
                        is_const_int(op->min, 0) ? Expr(it->second.first) : add(it->second.first, op->min));
    }
    visit(op->body);
    if (op->for_kind == ForKind::ThreadBinding) map_.pop_back();
    stack_.pop_back();
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
    Site s{stack_, {}};
    for (const Expr &e : indices) s.indices.push_back(map_.empty() ? e : substitute(e, map_));
    it->second.push_back(std::move(s));
  }

  std::vector<const For *> stack_;
  std::vector<std::pair<Var, Expr>> map_;
};

/// Variables an expression uses.
std::unordered_set<const VarNode *> vars_of(const Expr &e) {
  std::unordered_set<const VarNode *> out;
  pre_order_visit(
      Evaluate::make(e),
      [&](const Expr &x) {
        if (const auto *v = x.as<VarNode>()) out.insert(v);
      },
      nullptr);
  return out;
}

/// The compacted form of one buffer: the new buffer and the origin of its
/// box per dimension (in per-tag thread variables and loops above the LCA).
struct Compaction {
  Buffer buffer;
  std::vector<Expr> origin;
};

/// The box of `b`'s accesses, or nullopt when it cannot be made smaller or
/// constant (the buffer is then left as it is).
std::optional<Compaction> compact_one(const Buffer &b, const std::vector<Site> &sites,
                                      const std::map<std::string, std::pair<Var, Expr>> &tags,
                                      const std::vector<KernelParam> &params) {
  if (sites.empty() || b.ndim() == 0) return std::nullopt;
  // The LCA: the longest common prefix of the loop stacks.
  size_t lca = sites[0].loops.size();
  for (const Site &s : sites) {
    size_t i = 0;
    while (i < lca && i < s.loops.size() && s.loops[i] == sites[0].loops[i]) ++i;
    lca = i;
  }
  const bool shared = is_shared(b.scope());
  arith::Analyzer ana;
  arith::VarDomains thread_doms;
  std::unordered_set<const VarNode *> allowed;  // what the origin may use
  // The kernel's scalars (symbolic shapes) are visible everywhere: a tile
  // origin may depend on them (blockIdx.x // ceildiv(n, 32) * 32).
  for (const KernelParam &p : params)
    if (!p.is_buffer()) allowed.insert(p.var.get());
  for (const auto &[tag, var_extent] : tags) {
    const auto &[var, extent] = var_extent;
    Range r = Range::from_extent(extent);
    if (shared && is_thread_tag(tag)) {
      thread_doms.emplace_back(var, r);
    } else {
      ana.bind(var, r);
      allowed.insert(var.get());
    }
  }
  std::vector<const For *> above;  // serial loops above the LCA (origins may move with them)
  for (size_t i = 0; i < lca; ++i) {
    const For *l = sites[0].loops[i];
    if (l->for_kind == ForKind::ThreadBinding) continue;
    ana.bind(l->loop_var, Range{l->min, l->extent});
    allowed.insert(l->loop_var.get());
    above.push_back(l);
  }
  std::vector<std::vector<Range>> regions;
  for (const Site &s : sites) {
    arith::VarDomains doms = thread_doms;
    std::unordered_set<const VarNode *> relaxed;
    for (size_t i = lca; i < s.loops.size(); ++i) {
      const For *l = s.loops[i];
      if (l->for_kind == ForKind::ThreadBinding) continue;
      for (const VarNode *v : vars_of(add(l->min, l->extent)))
        if (relaxed.count(v)) return std::nullopt;  // a range depending on a relaxed loop
      doms.emplace_back(l->loop_var, Range{l->min, l->extent});
      relaxed.insert(l->loop_var.get());
    }
    std::vector<Range> region;
    for (const Expr &e : s.indices) {
      std::optional<Range> r = arith::try_relax(e, doms, ana);
      if (!r) return std::nullopt;
      region.push_back(*r);
    }
    regions.push_back(std::move(region));
  }
  std::vector<Range> box = arith::union_regions(regions, ana);
  // Per dimension: a constant extent smaller than the buffer's, and an origin
  // over what every access site can see; else the whole dimension.
  std::vector<Expr> shape(b.ndim()), origin(b.ndim());
  bool smaller = false;
  for (int d = 0; d < b.ndim(); ++d) {
    Expr full = b.shape()[d];
    DataType t = full.dtype();
    auto ext = as_const_int(ana.simplify(box[d].extent));
    auto full_ext = as_const_int(full);
    bool ok = ext && *ext > 0 && (!full_ext || *ext < *full_ext);
    if (ok)
      for (const VarNode *v : vars_of(box[d].min)) ok = ok && allowed.count(v);
    if (ok) {
      // Disjoint boxes across iterations of every serial loop the origin moves with.
      for (const For *l : above) {
        if (!vars_of(box[d].min).count(l->loop_var.get())) continue;
        Expr step = ana.simplify(
            sub(substitute(box[d].min, {{l->loop_var, add(l->loop_var, make_int(l->loop_var.dtype(), 1))}}),
                box[d].min));
        auto c = as_const_int(step);
        ok = ok && c && (*c >= *ext || -*c >= *ext);
      }
    }
    if (ok) {
      shape[d] = make_int(t, *ext);
      origin[d] = cast(t, box[d].min);
      smaller = true;
    } else {
      shape[d] = full;
      origin[d] = make_int(t, 0);
    }
  }
  if (!smaller) return std::nullopt;
  return Compaction{Buffer::make(b.name(), b.dtype(), shape, b.scope(), b->strides), origin};
}

/// `b` with its strides padded per the storage_align requests (b itself when none apply).
Buffer apply_dim_aligns(const Buffer &b, const std::vector<DimAlign> &aligns) {
  if (aligns.empty() || b.ndim() == 0) return b;
  int n = b.ndim();
  std::vector<int64_t> shape(n);
  for (int d = 0; d < n; ++d) {
    auto e = as_const_int(b.shape()[d]);
    if (!e) return b;  // symbolic: flatten_buffers reports it
    shape[d] = *e;
  }
  std::vector<int64_t> strides(n);
  bool padded = false;
  for (int d = n - 1; d >= 0; --d) {
    int64_t s = d == n - 1 ? 1 : strides[d + 1] * shape[d + 1];
    for (const DimAlign &a : aligns) {
      if (a.axis != d || a.factor <= 0 || a.offset < 0 || a.offset >= a.factor) continue;
      int64_t aligned = s + ((a.offset - s % a.factor) % a.factor + a.factor) % a.factor;
      padded = padded || aligned != s;
      s = aligned;
    }
    strides[d] = s;
  }
  if (!padded) return b;
  std::vector<Expr> st;
  for (int d = 0; d < n; ++d) st.push_back(make_int(b.shape()[d].dtype(), strides[d]));
  return Buffer::make(b.name(), b.dtype(), b.shape(), b.scope(), st);
}

/// Rewrites every access: the new buffer, indices relative to the box origin
/// (per-tag variables replaced by the innermost loop of that tag).
class Rewriter : public IRMutator {
 public:
  Rewriter(const std::unordered_map<const BufferNode *, Compaction> &c,
           const std::map<std::string, std::pair<Var, Expr>> &tags)
      : compactions_(c), tags_(tags) {}

 protected:
  using IRMutator::visit_;
  Stmt visit_(const For *op, const Stmt &self) override {
    arith::Analyzer::Scope scope(ana_);
    ana_.bind(op->loop_var, Range{op->min, op->extent});
    if (op->for_kind != ForKind::ThreadBinding) return IRMutator::visit_(op, self);
    auto it = tags_.find(op->thread_tag);
    Expr local = is_const_int(op->min, 0) ? Expr(op->loop_var) : sub(op->loop_var, op->min);
    current_.emplace_back(it->second.first, local);
    Stmt out = IRMutator::visit_(op, self);
    current_.pop_back();
    return out;
  }
  Expr visit_(const Load *op, const Expr &self) override {
    auto it = compactions_.find(op->buffer.get());
    if (it == compactions_.end()) return IRMutator::visit_(op, self);
    bool changed = false;
    std::vector<Expr> idx = mutate_list(op->indices, changed);
    return Load::make(it->second.buffer, relative(it->second, idx));
  }
  Stmt visit_(const Store *op, const Stmt &self) override {
    auto it = compactions_.find(op->buffer.get());
    if (it == compactions_.end()) return IRMutator::visit_(op, self);
    bool changed = false;
    std::vector<Expr> idx = mutate_list(op->indices, changed);
    return Store::make(it->second.buffer, mutate(op->value), relative(it->second, idx));
  }

 private:
  std::vector<Expr> relative(const Compaction &c, const std::vector<Expr> &idx) {
    std::vector<Expr> out;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (is_const_int(c.origin[d], 0)) {
        out.push_back(idx[d]);
        continue;
      }
      // The innermost loop of each tag stands for the tag's variable.
      std::vector<std::pair<Var, Expr>> map;
      for (const auto &[var, local] : current_) {
        auto same = std::find_if(map.begin(), map.end(), [&](const auto &p) { return p.first.same_as(var); });
        if (same == map.end())
          map.emplace_back(var, local);
        else
          same->second = local;
      }
      Expr origin = substitute(c.origin[d], map);
      out.push_back(ana_.simplify(sub(idx[d], cast(idx[d].dtype(), origin))));
    }
    return out;
  }

  const std::unordered_map<const BufferNode *, Compaction> &compactions_;
  const std::map<std::string, std::pair<Var, Expr>> &tags_;
  std::vector<std::pair<Var, Expr>> current_;
  arith::Analyzer ana_;
};

/// True when every site sees a loop for each tag the origin uses.
bool origin_visible(const Compaction &c, const std::vector<Site> &sites,
                    const std::map<std::string, std::pair<Var, Expr>> &tags) {
  for (const auto &[tag, var_extent] : tags) {
    bool used = false;
    for (const Expr &o : c.origin) used = used || vars_of(o).count(var_extent.first.get());
    if (!used) continue;
    for (const Site &s : sites) {
      bool seen = false;
      for (const For *l : s.loops)
        seen = seen || (l->for_kind == ForKind::ThreadBinding && l->thread_tag == tag);
      if (!seen) return false;
    }
  }
  return true;
}

}  // namespace

LoweredFunc compact_buffers(const LoweredFunc &f, const Stmt &blocks) {
  SiteCollector collector(f.allocs);
  collector.visit(f.body);
  auto aligns = collect_dim_aligns(blocks);
  std::unordered_map<const BufferNode *, Compaction> compactions;
  LoweredFunc out = f;
  // Only the function-level allocations (the root block's, where cache_read
  // and cache_write put their copies); a block inside the kernel allocates
  // the shape its author chose.
  std::unordered_set<const BufferNode *> root;
  if (const auto *r = blocks.as<Block>())
    for (const Buffer &b : r->allocs) root.insert(b.get());
  for (Buffer &b : out.allocs) {
    if (!root.count(b.get())) continue;
    const std::vector<Site> &sites = collector.sites.at(b.get());
    std::optional<Compaction> c = compact_one(b, sites, collector.tags, f.params);
    if (c && !origin_visible(*c, sites, collector.tags)) c.reset();
    std::vector<DimAlign> align;
    if (auto it = aligns.find(b.get()); it != aligns.end()) align = it->second;
    if (!c) {
      if (align.empty()) continue;
      c = Compaction{b, std::vector<Expr>(b.ndim())};
      for (int d = 0; d < b.ndim(); ++d) c->origin[d] = make_int(b.shape()[d].dtype(), 0);
    }
    c->buffer = apply_dim_aligns(c->buffer, align);
    if (c->buffer.same_as(b)) continue;
    const BufferNode *old = b.get();
    b = c->buffer;
    compactions.emplace(old, std::move(*c));
  }
  if (compactions.empty()) return out;
  out.body = Rewriter(compactions, collector.tags).mutate(f.body);
  return out;
}

}  // namespace tessera::lower
