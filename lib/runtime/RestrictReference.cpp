//===- lib/runtime/RestrictReference.cpp - The reference at some outputs only ===//
//
// restrict_reference (runtime/SampledCheck.h). The reference program is the
// original one widened, so its loops are the ones its author wrote: for a
// matmul `for i, j, k` with `vi, vj, vk = T.axis.remap("SSR", [i, j, k])`
// and C[vi, vj] stored. A loop whose variable is only the binding of one
// spatial iterator, of the one block below it, enumerates one dimension of
// that block's output; iterating it over some index ranges instead computes
// exactly those rows (or columns) of the output, with the same operations in
// the same order, so the values there keep their bits.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/runtime/SampledCheck.h"
#include "tessera/support/Error.h"

#include "BindDims.h"

namespace tessera::runtime {

namespace {

/// Index ranges of one dimension; nullopt: every index.
using Ranges = std::optional<std::vector<IndexRange>>;

/// The union of two sets of ranges.
Ranges unite(const Ranges &a, const Ranges &b) {
  if (!a || !b) return std::nullopt;
  std::vector<IndexRange> all = *a;
  all.insert(all.end(), b->begin(), b->end());
  std::sort(all.begin(), all.end(), [](const IndexRange &x, const IndexRange &y) { return x.begin < y.begin; });
  std::vector<IndexRange> merged;
  for (const IndexRange &r : all) {
    if (!merged.empty() && r.begin <= merged.back().end) merged.back().end = std::max(merged.back().end, r.end);
    else merged.push_back(r);
  }
  return merged;
}

bool same_var(const ir::Expr &e, const ir::Var &v) { return e.get() == v.get(); }

/// What one block of the reference stores and reads, as the narrowing sees it.
struct BlockAccess {
  const ir::Block *block;
  /// Stores into buffers the block does not allocate itself.
  std::vector<const ir::Store *> stores;
  std::vector<const ir::Load *> loads;
  /// Per iterator: the indices its block must compute (nullopt: all).
  std::vector<Ranges> needed;
};

BlockAccess access_of(const ir::Block *b) {
  BlockAccess a{b, {}, {}, std::vector<Ranges>(b->iter_vars.size(), std::vector<IndexRange>{})};
  auto local = [&](const ir::Buffer &x) {
    return std::any_of(b->allocs.begin(), b->allocs.end(), [&](const ir::Buffer &y) { return y.same_as(x); });
  };
  auto collect = [&](const ir::Stmt &s) {
    ir::pre_order_visit(
        s,
        [&](const ir::Expr &e) {
          if (const auto *l = e.as<ir::Load>(); l && !local(l->buffer)) a.loads.push_back(l);
        },
        [&](const ir::Stmt &x) {
          if (const auto *st = x.as<ir::Store>(); st && !local(st->buffer)) a.stores.push_back(st);
        });
  };
  collect(b->body);
  if (b->init) collect(*b->init);
  return a;
}

/// The iterator of `block` that `index` is exactly, or -1.
int iterator_of(const ir::Block *block, const ir::Expr &index) {
  for (size_t i = 0; i < block->iter_vars.size(); ++i)
    if (same_var(index, block->iter_vars[i].var)) return int(i);
  return -1;
}

/// Per buffer and dimension, the indices some later block reads (nullopt:
/// all, or not known), filled from the outputs back to the inputs.
class NeededIndices {
 public:
  void require(const ir::Buffer &b, size_t dim, const Ranges &r) {
    // A buffer first seen here needs nothing yet: each reader adds its part.
    auto it = needed_.try_emplace(b.get(), std::vector<Ranges>(size_t(b.ndim()), std::vector<IndexRange>{})).first;
    it->second[dim] = unite(it->second[dim], r);
  }
  /// nullopt for a buffer nothing reads and that is not an output: computing
  /// it whole is always right.
  Ranges of(const ir::Buffer &b, size_t dim) const {
    auto it = needed_.find(b.get());
    return it == needed_.end() ? Ranges() : it->second[dim];
  }

 private:
  std::unordered_map<const ir::BufferNode *, std::vector<Ranges>> needed_;
};

/// Decides, block by block from the last, which indices each iterator must
/// cover: a store's bare iterator takes what later blocks (or the caller,
/// for outputs) need of that dimension, and passes it on to what the block
/// loads at that iterator.
std::vector<BlockAccess> needed_per_block(const ir::PrimFunc &r, NeededIndices &needed) {
  std::vector<const ir::Block *> blocks;
  ir::pre_order_visit(r.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *b = s.as<ir::Block>(); b && !b->iter_vars.empty()) blocks.push_back(b);
  });
  std::vector<BlockAccess> out;
  for (size_t k = blocks.size(); k-- > 0;) {
    BlockAccess a = access_of(blocks[k]);
    const ir::Block *b = a.block;
    // An iterator no store indexes with, or one a store uses inside a wider
    // index, runs over everything.
    std::vector<bool> bare_store(b->iter_vars.size(), false);
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      const ir::Var &v = b->iter_vars[i].var;
      bool all = b->iter_vars[i].kind != ir::IterKind::Spatial;
      for (const ir::Store *st : a.stores)
        for (size_t d = 0; d < st->indices.size(); ++d) {
          if (same_var(st->indices[d], v)) {
            bare_store[i] = true;
            a.needed[i] = unite(a.needed[i], needed.of(st->buffer, d));
          } else if (uses_var(st->indices[d], v)) {
            all = true;
          }
        }
      if (all || !bare_store[i]) a.needed[i] = std::nullopt;
    }
    for (const ir::Load *l : a.loads)
      for (size_t d = 0; d < l->indices.size(); ++d) {
        int i = iterator_of(b, l->indices[d]);
        needed.require(l->buffer, d, i >= 0 ? a.needed[size_t(i)] : Ranges());
      }
    out.push_back(std::move(a));
  }
  return out;
}

struct NarrowLoops : ir::IRMutator {
  const std::vector<BlockAccess> &blocks;
  arith::Analyzer &ana;
  int narrowed = 0;

  NarrowLoops(const std::vector<BlockAccess> &b, arith::Analyzer &a) : blocks(b), ana(a) {}

  const BlockAccess *access(const ir::Block *b) const {
    for (const BlockAccess &a : blocks)
      if (a.block == b) return &a;
    return nullptr;
  }

  /// The ranges `op` may run over instead of its whole range: when every
  /// block below it binds one spatial iterator to exactly its variable (and
  /// nothing else uses it), and all those iterators need the same indices.
  Ranges ranges_for(const ir::For *op) {
    if (op->for_kind == ir::ForKind::ThreadBinding) return std::nullopt;
    std::vector<const ir::Block *> below;
    int uses = 0;
    ir::pre_order_visit(
        op->body, [&](const ir::Expr &e) { uses += same_var(e, op->loop_var); },
        [&](const ir::Stmt &s) {
          if (const auto *b = s.as<ir::Block>()) below.push_back(b);
        });
    if (below.empty() || uses != int(below.size())) return std::nullopt;
    Ranges common;
    for (size_t k = 0; k < below.size(); ++k) {
      const BlockAccess *a = access(below[k]);
      const ir::Block *b = below[k];
      size_t it = 0;
      while (it < b->bindings.size() && !same_var(b->bindings[it], op->loop_var)) ++it;
      if (!a || it == b->bindings.size() || !a->needed[it]) return std::nullopt;
      if (k == 0) common = a->needed[it];
      else if (common->size() != a->needed[it]->size() ||
               !std::equal(common->begin(), common->end(), a->needed[it]->begin(),
                           [](const IndexRange &x, const IndexRange &y) { return x.begin == y.begin && x.end == y.end; }))
        return std::nullopt;
    }
    arith::IntBound lo = ana.const_bound(op->min), n = ana.const_bound(op->extent);
    if (!lo.is_const() || !n.is_const()) return std::nullopt;
    std::vector<IndexRange> in;
    for (const IndexRange &r : *common) {
      IndexRange c{std::max(r.begin, lo.min), std::min(r.end, lo.min + n.min)};
      if (c.begin < c.end) in.push_back(c);
    }
    return in;
  }

  ir::Stmt visit_(const ir::For *op, const ir::Stmt &self) override {
    Ranges ranges = ranges_for(op);
    if (!ranges) return ir::IRMutator::visit_(op, self);
    ++narrowed;
    ir::Stmt body = mutate(op->body);
    // One loop per range, each over contiguous indices (what the JIT vectorizes).
    std::vector<ir::Stmt> loops;
    for (const IndexRange &r : *ranges) {
      ir::Var v(op->loop_var.name(), op->loop_var.dtype());
      loops.push_back(ir::For::make(v, ir::make_int(v.dtype(), r.begin), ir::make_int(v.dtype(), r.end - r.begin),
                                    op->for_kind, ir::substitute(body, {{op->loop_var, v}}), "", op->annotations));
    }
    // No index of this loop needed: nothing to run.
    return loops.empty() ? ir::Evaluate::make(ir::i32(0)) : ir::Seq::make(std::move(loops));
  }
};

}  // namespace

ir::PrimFunc restrict_reference(const ReferenceProgram &program, const ir::PrimFunc &f,
                                const std::vector<IndexRanges> &keep, const DimBindings &dims) {
  if (keep.size() != f.params().size())
    throw UserError(fmt::format("restrict_reference: {} index sets for {} parameters", keep.size(), f.params().size()));
  const ir::PrimFunc &r = program.func;
  NeededIndices needed;
  for (size_t i = 0; i < f.params().size(); ++i) {
    ir::Buffer b = r.buffer_of(r.params()[i]);
    if (!b.defined() || keep[i].empty()) continue;
    if (int(keep[i].size()) != b.ndim())
      throw UserError(fmt::format("restrict_reference: {} index sets for the {} dimensions of '{}'", keep[i].size(),
                                  b.ndim(), b.name()));
    std::vector<ir::Buffer> family{b};
    for (int companion : {program.variance_param[i], program.squares_param[i]})
      if (companion >= 0) family.push_back(r.buffer_of(r.params()[size_t(companion)]));
    for (const ir::Buffer &x : family)
      for (size_t d = 0; d < keep[i].size(); ++d)
        needed.require(x, d, keep[i][d].empty() ? Ranges() : Ranges(keep[i][d]));
  }
  std::vector<BlockAccess> blocks = needed_per_block(r, needed);
  arith::Analyzer ana;
  detail::bind_dims(ana, r, dims);
  NarrowLoops narrow(blocks, ana);
  return r.with_body(narrow.mutate(r.body()));
}

}  // namespace tessera::runtime
