//===- AccessRegions.cpp - Inferring a block's reads and writes ------------===//
//
// Walks a block's init and body, collecting every load and store. Index
// expressions over variables bound inside the block (loops, lets) are relaxed
// to an inclusive interval [lo, hi] over those variables; accesses of the
// same buffer merge into their bounding box when their bounds differ by
// constants. Bounds are kept tidy with a small linear normaliser so that a
// relaxed `vi * 128 + k` over k in [0, 128) reads as `vi * 128:vi * 128 + 128`.
//
//===----------------------------------------------------------------------===//
#include "tessera/ir/AccessRegions.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::ir {
namespace {

// ---- structural equality of the atoms of a linear form ----
bool same_expr(const Expr &a, const Expr &b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  if (const auto *x = a.as<IntImm>()) return x->value == b.as<IntImm>()->value;
  if (const auto *x = a.as<FloatImm>()) return x->value == b.as<FloatImm>()->value;
  if (const auto *x = a.as<Binary>()) {
    const auto *y = b.as<Binary>();
    return x->op == y->op && same_expr(x->a, y->a) && same_expr(x->b, y->b);
  }
  if (const auto *x = a.as<Unary>()) {
    const auto *y = b.as<Unary>();
    return x->op == y->op && same_expr(x->a, y->a);
  }
  if (const auto *x = a.as<Cast>()) return same_expr(x->value, b.as<Cast>()->value);
  if (const auto *x = a.as<Select>()) {
    const auto *y = b.as<Select>();
    return same_expr(x->cond, y->cond) && same_expr(x->true_value, y->true_value) &&
           same_expr(x->false_value, y->false_value);
  }
  auto same_list = [](const std::vector<Expr> &p, const std::vector<Expr> &q) {
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (!same_expr(p[i], q[i])) return false;
    return true;
  };
  if (const auto *x = a.as<Load>()) {
    const auto *y = b.as<Load>();
    return x->buffer.same_as(y->buffer) && same_list(x->indices, y->indices);
  }
  if (const auto *x = a.as<Call>()) {
    const auto *y = b.as<Call>();
    return x->op == y->op && same_list(x->args, y->args);
  }
  return false;  // variables by identity (checked first), lets never merge
}

// ---- linear forms: sum of coefficient * atom + constant ----
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void add_term(const Expr &atom, int64_t coef) {
    for (auto &[t, c] : terms)
      if (same_expr(t, atom)) {
        c += coef;
        return;
      }
    terms.emplace_back(atom, coef);
  }
  void accumulate(const Expr &e, int64_t coef) {
    if (auto k = as_const_int(e); k && !e.dtype().is_bool()) {
      constant += coef * *k;
      return;
    }
    if (const auto *b = e.as<Binary>()) {
      if (b->op == BinaryOp::Add) {
        accumulate(b->a, coef);
        accumulate(b->b, coef);
        return;
      }
      if (b->op == BinaryOp::Sub) {
        accumulate(b->a, coef);
        accumulate(b->b, -coef);
        return;
      }
      if (b->op == BinaryOp::Mul) {
        if (auto k = as_const_int(b->b)) return accumulate(b->a, coef * *k);
        if (auto k = as_const_int(b->a)) return accumulate(b->b, coef * *k);
      }
    }
    if (const auto *u = e.as<Unary>(); u && u->op == UnaryOp::Neg) return accumulate(u->a, -coef);
    add_term(e, coef);
  }
  bool is_const() const {
    for (const auto &t : terms)
      if (t.second != 0) return false;
    return true;
  }
  Expr to_expr(DataType t) const {
    Expr acc;
    for (const auto &[atom, c] : terms) {
      if (c == 0) continue;
      Expr a = cast(t, atom);
      int64_t m = c < 0 ? -c : c;
      Expr x = m == 1 ? a : mul(a, make_int(t, m));
      if (!acc.defined()) acc = c < 0 ? neg(x) : x;
      else acc = c < 0 ? sub(acc, x) : add(acc, x);
    }
    if (!acc.defined()) return make_int(t, constant);
    if (constant > 0) return add(acc, make_int(t, constant));
    if (constant < 0) return sub(acc, make_int(t, -constant));
    return acc;
  }
};

Linear linearize(const Expr &e) {
  Linear l;
  l.accumulate(e, 1);
  return l;
}

// `e` normalised (an atom comes back as the same handle).
Expr simplify(const Expr &e) {
  if (!e.dtype().is_integer()) return e;
  return linearize(e).to_expr(e.dtype());
}

// b - a when it is a constant.
std::optional<int64_t> const_diff(const Expr &a, const Expr &b) {
  Linear l = linearize(b);
  Linear la = linearize(a);
  for (const auto &[t, c] : la.terms) l.add_term(t, -c);
  l.constant -= la.constant;
  if (!l.is_const()) return std::nullopt;
  return l.constant;
}

/// An inclusive interval of an index.
struct Bound {
  Expr lo, hi;
};

class Collector : public IRVisitor {
 public:
  struct Access {
    Buffer buffer;
    std::vector<std::optional<Bound>> dims;  // nullopt: the whole dimension
  };
  std::vector<Access> reads, writes;
  std::unordered_set<const void *> excluded;

  void visit(const Expr &e) override { IRVisitor::visit(e); }
  void visit(const Stmt &s) override { IRVisitor::visit(s); }

 protected:
  void visit_(const For *op) override {
    visit(op->min);
    visit(op->extent);
    inner_loops_[op->loop_var.get()] = Range{op->min, op->extent};
    visit(op->body);
    inner_loops_.erase(op->loop_var.get());
  }
  void visit_(const LetStmt *op) override {
    visit(op->value);
    inner_lets_[op->var.get()] = op->value;
    visit(op->body);
    inner_lets_.erase(op->var.get());
  }
  void visit_(const Let *op) override {
    visit(op->value);
    inner_lets_[op->var.get()] = op->value;
    visit(op->body);
    inner_lets_.erase(op->var.get());
  }
  void visit_(const Load *op) override {
    IRVisitor::visit_(op);
    record(reads, op->buffer, point_bounds(op->indices));
  }
  void visit_(const Store *op) override {
    visit(op->value);
    for (const Expr &i : op->indices) visit(i);
    record(writes, op->buffer, point_bounds(op->indices));
  }
  void visit_(const Block *op) override {
    // A nested block contributes its regions with its iter vars replaced by
    // their bindings, relaxed over the loops between the two blocks.
    for (const Expr &b : op->bindings) visit(b);
    std::vector<std::pair<Var, Expr>> vmap;
    for (size_t i = 0; i < op->iter_vars.size(); ++i) vmap.emplace_back(op->iter_vars[i].var, op->bindings[i]);
    auto relax_region = [&](const BufferRegion &r) {
      std::vector<std::optional<Bound>> dims;
      for (const Range &rg : r.region) {
        Expr lo = substitute(rg.min, vmap);
        Expr last = substitute(sub(add(rg.min, rg.extent), make_int(rg.min.dtype(), 1)), vmap);
        auto blo = bound(lo), bhi = bound(last);
        if (blo && bhi) dims.push_back(Bound{blo->lo, bhi->hi});
        else dims.push_back(std::nullopt);
      }
      return dims;
    };
    for (const BufferRegion &r : op->reads) record(reads, r.buffer, relax_region(r));
    for (const BufferRegion &r : op->writes) record(writes, r.buffer, relax_region(r));
  }

 private:
  std::vector<std::optional<Bound>> point_bounds(const std::vector<Expr> &indices) {
    std::vector<std::optional<Bound>> dims;
    for (const Expr &i : indices) dims.push_back(bound(i));
    return dims;
  }

  bool uses_inner(const Expr &e) const {
    bool found = false;
    pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
      if (const auto *v = x.as<VarNode>(); v && (inner_loops_.count(v) || inner_lets_.count(v))) found = true;
    }, nullptr);
    return found;
  }

  std::optional<Bound> bound(const Expr &e) {
    if (++depth_ > 64) {
      --depth_;
      return std::nullopt;
    }
    auto r = bound_impl(e);
    --depth_;
    return r;
  }

  std::optional<Bound> bound_impl(const Expr &e) {
    if (!uses_inner(e)) return Bound{e, e};
    if (!e.dtype().is_integer()) return std::nullopt;
    if (const auto *v = e.as<VarNode>()) {
      if (auto it = inner_lets_.find(v); it != inner_lets_.end()) return bound(it->second);
      const Range &r = inner_loops_.at(v);
      auto lo = bound(r.min);
      auto hi = bound(sub(add(r.min, r.extent), make_int(r.min.dtype(), 1)));
      if (!lo || !hi) return std::nullopt;
      return Bound{lo->lo, hi->hi};
    }
    if (const auto *b = e.as<Binary>()) {
      auto ka = as_const_int(b->a), kb = as_const_int(b->b);
      switch (b->op) {
        case BinaryOp::Add:
        case BinaryOp::Sub: {
          auto x = bound(b->a), y = bound(b->b);
          if (!x || !y) return std::nullopt;
          if (b->op == BinaryOp::Add) return Bound{add(x->lo, y->lo), add(x->hi, y->hi)};
          return Bound{sub(x->lo, y->hi), sub(x->hi, y->lo)};
        }
        case BinaryOp::Mul: {
          if (!ka && !kb) return std::nullopt;
          int64_t k = ka ? *ka : *kb;
          auto x = bound(ka ? b->b : b->a);
          if (!x) return std::nullopt;
          Expr c = make_int(e.dtype(), k);
          if (k >= 0) return Bound{mul(x->lo, c), mul(x->hi, c)};
          return Bound{mul(x->hi, c), mul(x->lo, c)};
        }
        case BinaryOp::FloorDiv: {
          if (!kb || *kb <= 0) return std::nullopt;
          auto x = bound(b->a);
          if (!x) return std::nullopt;
          return Bound{floordiv(x->lo, b->b), floordiv(x->hi, b->b)};
        }
        case BinaryOp::FloorMod:
          if (!kb || *kb <= 0) return std::nullopt;
          return Bound{make_int(e.dtype(), 0), make_int(e.dtype(), *kb - 1)};
        case BinaryOp::Min:
        case BinaryOp::Max: {
          auto x = bound(b->a), y = bound(b->b);
          if (!x || !y) return std::nullopt;
          if (b->op == BinaryOp::Min) return Bound{min(x->lo, y->lo), min(x->hi, y->hi)};
          return Bound{max(x->lo, y->lo), max(x->hi, y->hi)};
        }
        default: return std::nullopt;
      }
    }
    if (const auto *u = e.as<Unary>(); u && u->op == UnaryOp::Neg) {
      auto x = bound(u->a);
      if (!x) return std::nullopt;
      return Bound{neg(x->hi), neg(x->lo)};
    }
    if (const auto *c = e.as<Cast>(); c && c->value.dtype().is_integer()) {
      auto x = bound(c->value);
      if (!x) return std::nullopt;
      return Bound{cast(e.dtype(), x->lo), cast(e.dtype(), x->hi)};
    }
    return std::nullopt;
  }

  void record(std::vector<Access> &list, const Buffer &buf, std::vector<std::optional<Bound>> dims) {
    if (excluded.count(buf.get())) return;
    for (auto &d : dims)
      if (d) d = Bound{simplify(d->lo), simplify(d->hi)};
    for (Access &a : list) {
      if (!a.buffer.same_as(buf)) continue;
      for (size_t i = 0; i < a.dims.size() && i < dims.size(); ++i) {
        if (!a.dims[i]) continue;
        if (!dims[i]) {
          a.dims[i].reset();
          continue;
        }
        auto dlo = const_diff(a.dims[i]->lo, dims[i]->lo);  // new - old
        auto dhi = const_diff(a.dims[i]->hi, dims[i]->hi);
        if (!dlo || !dhi) {
          a.dims[i].reset();
          continue;
        }
        if (*dlo < 0) a.dims[i]->lo = dims[i]->lo;
        if (*dhi > 0) a.dims[i]->hi = dims[i]->hi;
      }
      return;
    }
    list.push_back({buf, std::move(dims)});
  }

  std::unordered_map<const VarNode *, Range> inner_loops_;
  std::unordered_map<const VarNode *, Expr> inner_lets_;
  int depth_ = 0;
};

std::vector<BufferRegion> to_regions(const std::vector<Collector::Access> &list) {
  std::vector<BufferRegion> out;
  for (const Collector::Access &a : list) {
    BufferRegion r{a.buffer, {}};
    for (size_t i = 0; i < a.dims.size(); ++i) {
      if (!a.dims[i]) {
        r.region.push_back(Range::from_extent(a.buffer.shape()[i]));
        continue;
      }
      const Expr &lo = a.dims[i]->lo;
      Expr hi = a.dims[i]->hi;
      r.region.push_back(Range{lo, extent_between(lo, add(hi, make_int(hi.dtype(), 1)))});
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Expr extent_between(const Expr &min, const Expr &end) {
  DataType t = promote_types(min.dtype(), end.dtype());
  if (!t.is_integer()) return sub(end, min);
  if (auto d = const_diff(min, end)) return make_int(t, *d);
  Linear l = linearize(cast(t, end));
  Linear lm = linearize(cast(t, min));
  for (const auto &[a, c] : lm.terms) l.add_term(a, -c);
  l.constant -= lm.constant;
  return l.to_expr(t);
}

AccessRegions infer_access_regions(const std::optional<Stmt> &init, const Stmt &body,
                                   const std::vector<Buffer> &allocs) {
  Collector c;
  for (const Buffer &b : allocs) c.excluded.insert(b.get());
  if (init) c.visit(*init);
  c.visit(body);
  AccessRegions out{to_regions(c.reads), to_regions(c.writes)};
  // TVM's rule: a block with T.init() does not list the buffers it writes
  // among its reads (a matmul reads A and B), so read indices mean the same
  // buffers in traces written against TVM.
  if (init) out.reads = reads_with_init(std::move(out.reads), out.writes);
  return out;
}

namespace {

bool lists(const std::vector<BufferRegion> &rs, const Buffer &b) {
  return std::any_of(rs.begin(), rs.end(), [&](const BufferRegion &r) { return r.buffer.same_as(b); });
}

}  // namespace

std::vector<BufferRegion> reads_with_init(std::vector<BufferRegion> reads, const std::vector<BufferRegion> &writes) {
  std::erase_if(reads, [&](const BufferRegion &r) { return lists(writes, r.buffer); });
  return reads;
}

std::vector<BufferRegion> reads_without_init(const std::vector<BufferRegion> &reads,
                                             const std::vector<BufferRegion> &writes) {
  std::vector<BufferRegion> out;
  for (const BufferRegion &w : writes)
    if (!lists(reads, w.buffer)) out.push_back(w);
  out.insert(out.end(), reads.begin(), reads.end());
  return out;
}

bool stores_to(const Stmt &s, const Buffer &b) {
  bool found = false;
  pre_order_visit(s, nullptr, [&](const Stmt &x) {
    if (const auto *st = x.as<Store>(); st && st->buffer.same_as(b)) found = true;
    // A warp-level statement's destination (mma.sync accumulating in place, cp.async, ...).
    if (const auto *e = x.as<Evaluate>())
      if (const auto *c = e->value.as<Call>(); c && is_async_or_warp_statement(c->op))
        if (int d = destination_operand(c->op); d >= 0)
          if (const auto *l = c->args[size_t(d)].as<Load>(); l && l->buffer.same_as(b)) found = true;
    // T.tma_store writes its tensor (named as written, where lowering has
    // flattened the parameter: the same name).
    if (const auto *e = x.as<Evaluate>())
      if (const auto *c = e->value.as<Call>(); c && c->op == Intrinsic::TmaStore)
        if (const auto *t = c->args[1].as<BufferPtr>();
            t && (t->buffer.same_as(b) || t->buffer.name() == b.name()))
          found = true;
  });
  return found;
}

std::vector<bool> written_params(const PrimFunc &f) {
  std::vector<bool> out(f.params().size(), false);
  for (size_t i = 0; i < f.params().size(); ++i) {
    Buffer b = f.buffer_of(f.params()[i]);
    out[i] = b.defined() && stores_to(f.body(), b);
  }
  return out;
}

}  // namespace tessera::ir
