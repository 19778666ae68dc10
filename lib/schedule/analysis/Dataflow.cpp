//===- analysis/Dataflow.cpp - Helpers of the data-flow primitives ---------===//
//
// Regions are computed the TensorIR way: a block's region is written in its
// iter vars; seen from a loop above it, the bindings are substituted and the
// loops in between are relaxed over their ranges (arith::relax), giving the
// bounding box of what one iteration of that loop touches.
//
//===----------------------------------------------------------------------===//
#include "../Dataflow.h"

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/support/Error.h"

namespace tessera::schedule::detail {

using namespace ir;

bool is_valid_storage_scope(const std::string &scope) {
  return scope == "global" || scope == "shared" || scope == "shared.dyn" || scope == "local";
}

void check_storage_scope(std::string_view primitive, const StmtPath &block, const std::string &scope) {
  if (is_valid_storage_scope(scope)) return;
  throw InvalidStorageScopeError(std::string(primitive),
                                 "invalid storage scope " + quoted(scope) +
                                     "; expected one of 'global', 'shared', 'shared.dyn', 'local'",
                                 "", {block.stmt});
}

const BufferRegion &check_buffer_index(std::string_view primitive, const StmtPath &block,
                                       const std::vector<BufferRegion> &regions, int64_t index,
                                       std::string_view what) {
  if (index >= 0 && index < static_cast<int64_t>(regions.size())) return regions[index];
  std::string verb = what == "read" ? "reads" : "writes";
  throw BufferIndexOutOfRangeError(std::string(primitive),
                                   std::string(what) + " buffer index " + std::to_string(index) +
                                       " is out of range: block " + quoted(block.block()->name) + " " + verb + " " +
                                       std::to_string(regions.size()) + " buffer" +
                                       (regions.size() == 1 ? "" : "s"),
                                   std::string(what) + " buffer index " + std::to_string(index) +
                                       " is out of range for block {0}",
                                   {block.stmt});
}

bool is_param_buffer(const PrimFunc &f, const Buffer &b) {
  for (const auto &[v, buf] : f.buffer_map())
    if (buf.same_as(b)) return true;
  return false;
}

bool reads_buffer(const Block &b, const Buffer &buf) {
  for (const BufferRegion &r : b.reads)
    if (r.buffer.same_as(buf)) return true;
  return false;
}

bool writes_buffer(const Block &b, const Buffer &buf) {
  for (const BufferRegion &r : b.writes)
    if (r.buffer.same_as(buf)) return true;
  return false;
}

std::set<std::string> block_names(const PrimFunc &f) {
  std::set<std::string> names;
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const Block *b = s.as<Block>()) names.insert(b->name);
  });
  return names;
}

std::set<std::string> buffer_names(const PrimFunc &f) {
  std::set<std::string> names;
  for (const auto &[v, b] : f.buffer_map()) names.insert(b.name());
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const Block *b = s.as<Block>())
      for (const Buffer &a : b->allocs) names.insert(a.name());
  });
  return names;
}

Stmt allocating_block(const PrimFunc &f, const Buffer &buf) {
  Stmt found;
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const Block *b = s.as<Block>())
      for (const Buffer &a : b->allocs)
        if (a.same_as(buf)) found = s;
  });
  return found;
}

StmtPath scope_path_of(const StmtPath &p) {
  Stmt scope = p.scope();
  StmtPath out;
  out.stmt = scope;
  for (const Stmt &a : p.ancestors) {
    if (a.same_as(scope)) break;
    out.ancestors.push_back(a);
  }
  return out;
}

bool is_ancestor(const StmtPath &p, const Stmt &anc) {
  for (const Stmt &a : p.ancestors)
    if (a.same_as(anc)) return true;
  return false;
}

std::vector<Stmt> loops_below(const StmtPath &p, const Stmt &top) {
  std::vector<Stmt> out;
  for (const Stmt &a : p.ancestors) {
    if (top.defined() ? a.same_as(top) : a.is<Block>()) {
      out.clear();
      continue;
    }
    if (a.is<For>()) out.push_back(a);
  }
  return out;
}

std::vector<Range> region_seen_from(const Block &b, const BufferRegion &r, const std::vector<Stmt> &relaxed,
                                    const arith::Analyzer &ana) {
  std::vector<std::pair<Var, Expr>> bind;
  for (size_t k = 0; k < b.iter_vars.size(); ++k) bind.emplace_back(b.iter_vars[k].var, b.bindings[k]);
  arith::VarDomains dom;
  for (const Stmt &s : relaxed)
    if (const For *f = s.as<For>()) dom.emplace_back(f->loop_var, Range{f->min, f->extent});
  std::vector<Range> out;
  for (const Range &x : r.region) {
    Expr lo = substitute(x.min, bind);
    Range a = arith::relax(lo, dom, ana);
    if (is_const_int(x.extent, 1)) {
      out.push_back(a);
      continue;
    }
    Expr hi = substitute(sub(add(x.min, x.extent), make_int(x.min.dtype(), 1)), bind);
    out.push_back(arith::union_ranges({a, arith::relax(hi, dom, ana)}, ana));
  }
  return out;
}

std::vector<Range> clamp_to_shape(const std::vector<Range> &region, const Buffer &buf, const arith::Analyzer &ana) {
  std::vector<Range> out;
  for (size_t d = 0; d < region.size(); ++d) {
    Expr lo = region[d].min, hi = add(region[d].min, region[d].extent);
    Expr zero = make_int(lo.dtype(), 0);
    Expr shape = cast(lo.dtype(), buf.shape()[d]);
    if (!ana.can_prove(ge(lo, zero))) lo = max(lo, zero);
    if (!ana.can_prove(le(hi, shape))) hi = min(hi, shape);
    out.push_back(Range{ana.simplify(lo), ana.simplify(sub(hi, lo))});
  }
  return out;
}

arith::Analyzer analyzer_for(const StmtPath &p) {
  arith::Analyzer ana;
  for (const Stmt &a : p.ancestors)
    if (const For *f = a.as<For>()) ana.bind(f->loop_var, Range{f->min, f->extent});
  if (const For *f = p.loop()) ana.bind(f->loop_var, Range{f->min, f->extent});
  return ana;
}

namespace {

/// `s` without `target`; nullopt when nothing is left of `s`.
std::optional<Stmt> remove_rec(const Stmt &s, const StmtNode *target) {
  if (s.get() == target) return std::nullopt;
  switch (s.kind()) {
    case NodeKind::For: {
      const For *f = s.as<For>();
      auto b = remove_rec(f->body, target);
      if (!b) return std::nullopt;
      return f->with_body(*b);
    }
    case NodeKind::Seq: {
      std::vector<Stmt> out;
      bool changed = false;
      for (const Stmt &c : s.as<Seq>()->stmts) {
        auto r = remove_rec(c, target);
        changed |= !r || !r->same_as(c);
        if (r) out.push_back(*r);
      }
      if (out.empty()) return std::nullopt;
      return changed ? Seq::make(out) : s;
    }
    case NodeKind::LetStmt: {
      const LetStmt *l = s.as<LetStmt>();
      auto b = remove_rec(l->body, target);
      if (!b) return std::nullopt;
      return b->same_as(l->body) ? s : LetStmt::make(l->var, l->value, *b);
    }
    case NodeKind::IfThenElse: {
      const IfThenElse *i = s.as<IfThenElse>();
      auto t = remove_rec(i->then_case, target);
      std::optional<Stmt> e;
      if (i->else_case) {
        e = remove_rec(*i->else_case, target);
        TESSERA_ICHECK(t) << "remove_stmt: removing the then-branch of an if with an else";
      }
      if (!t) return std::nullopt;
      if (t->same_as(i->then_case) && (!i->else_case || (e && e->same_as(*i->else_case)))) return s;
      return IfThenElse::make(i->cond, *t, e);
    }
    case NodeKind::Block: {
      const Block *b = s.as<Block>();
      auto body = remove_rec(b->body, target);
      TESSERA_ICHECK(body) << "remove_stmt: block '" << b->name << "' would be left without a body";
      return b->with_body(*body);
    }
    default: return s;
  }
}

bool contains(const Stmt &root, const Stmt &stmt) {
  bool found = false;
  pre_order_visit(root, nullptr, [&](const Stmt &s) { found |= s.same_as(stmt); });
  return found;
}

class BufferReplacer : public IRMutator {
 public:
  BufferReplacer(Buffer from, Buffer to) : from_(std::move(from)), to_(std::move(to)) {}
  Buffer mutate_buffer(const Buffer &b) override { return b.same_as(from_) ? to_ : b; }

 private:
  Buffer from_, to_;
};

}  // namespace

Stmt remove_stmt(const Stmt &root, const StmtNode *target) {
  auto r = remove_rec(root, target);
  TESSERA_ICHECK(r) << "remove_stmt removed the whole statement";
  return *r;
}

std::vector<Stmt> body_items(const Block &scope) {
  if (const Seq *s = scope.body.as<Seq>()) return s->stmts;
  return {scope.body};
}

size_t item_containing(const Block &scope, const Stmt &stmt) {
  std::vector<Stmt> items = body_items(scope);
  for (size_t i = 0; i < items.size(); ++i)
    if (contains(items[i], stmt)) return i;
  TESSERA_ICHECK(false) << "statement not found in block '" << scope.name << "'";
  return 0;
}

Stmt insert_into_scope(const Block &scope, size_t pos, const Stmt &stmt) {
  std::vector<Stmt> items = body_items(scope);
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(pos), stmt);
  return scope.with_body(Seq::make(items));
}

Stmt seq_before(const Stmt &first, const Stmt &body) { return Seq::make({first, body}); }
Stmt seq_after(const Stmt &body, const Stmt &last) { return Seq::make({body, last}); }

Stmt block_with_regions(const Block &b, std::vector<BufferRegion> reads, std::vector<BufferRegion> writes) {
  return Block::make(b.name, b.iter_vars, b.bindings, b.predicate, std::move(reads), std::move(writes), b.allocs,
                     b.init, b.body, b.annotations);
}

Stmt block_with_allocs(const Block &b, std::vector<Buffer> allocs) {
  return Block::make(b.name, b.iter_vars, b.bindings, b.predicate, b.reads, b.writes, std::move(allocs), b.init,
                     b.body, b.annotations);
}

Stmt block_with_inferred_regions(const Block &b) {
  AccessRegions r = infer_access_regions(b.init, b.body, b.allocs);
  return block_with_regions(b, std::move(r.reads), std::move(r.writes));
}

Stmt replace_buffer(const Stmt &s, const Buffer &from, const Buffer &to) {
  BufferReplacer r(from, to);
  return r.mutate(s);
}

}  // namespace tessera::schedule::detail
