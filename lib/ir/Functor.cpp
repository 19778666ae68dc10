//===- Functor.cpp - Default visitor and mutator traversals ----------------===//
#include "tessera/ir/Functor.h"

#include "tessera/support/Error.h"

namespace tessera::ir {

//===----------------------------------------------------------------------===//
// IRVisitor
//===----------------------------------------------------------------------===//

void IRVisitor::visit(const Expr &e) {
  switch (e.kind()) {
    case NodeKind::IntImm: return visit_(e.as<IntImm>());
    case NodeKind::FloatImm: return visit_(e.as<FloatImm>());
    case NodeKind::Var: return visit_(e.as<VarNode>());
    case NodeKind::Binary: return visit_(e.as<Binary>());
    case NodeKind::Unary: return visit_(e.as<Unary>());
    case NodeKind::Select: return visit_(e.as<Select>());
    case NodeKind::Cast: return visit_(e.as<Cast>());
    case NodeKind::Load: return visit_(e.as<Load>());
    case NodeKind::Call: return visit_(e.as<Call>());
    case NodeKind::Let: return visit_(e.as<Let>());
    case NodeKind::StringImm: return visit_(e.as<StringImm>());
    case NodeKind::BufferPtr: return visit_(e.as<BufferPtr>());
    case NodeKind::OpaqueCall: return visit_(e.as<OpaqueCall>());
    default: TESSERA_UNREACHABLE("not an expression kind: " << node_kind_name(e.kind()));
  }
}

void IRVisitor::visit(const Stmt &s) {
  switch (s.kind()) {
    case NodeKind::For: return visit_(s.as<For>());
    case NodeKind::Block: return visit_(s.as<Block>());
    case NodeKind::Store: return visit_(s.as<Store>());
    case NodeKind::Seq: return visit_(s.as<Seq>());
    case NodeKind::IfThenElse: return visit_(s.as<IfThenElse>());
    case NodeKind::LetStmt: return visit_(s.as<LetStmt>());
    case NodeKind::Evaluate: return visit_(s.as<Evaluate>());
    default: TESSERA_UNREACHABLE("not a statement kind: " << node_kind_name(s.kind()));
  }
}

void IRVisitor::visit_(const IntImm *) {}
void IRVisitor::visit_(const FloatImm *) {}
void IRVisitor::visit_(const VarNode *) {}
void IRVisitor::visit_(const Binary *op) {
  visit(op->a);
  visit(op->b);
}
void IRVisitor::visit_(const Unary *op) { visit(op->a); }
void IRVisitor::visit_(const Select *op) {
  visit(op->cond);
  visit(op->true_value);
  visit(op->false_value);
}
void IRVisitor::visit_(const Cast *op) { visit(op->value); }
void IRVisitor::visit_(const Load *op) {
  for (const Expr &i : op->indices) visit(i);
}
void IRVisitor::visit_(const Call *op) {
  for (const Expr &a : op->args) visit(a);
}
void IRVisitor::visit_(const StringImm *) {}
void IRVisitor::visit_(const BufferPtr *) {}
void IRVisitor::visit_(const OpaqueCall *op) {
  for (const Expr &a : op->args) visit(a);
}
void IRVisitor::visit_(const Let *op) {
  visit(op->value);
  visit(op->body);
}

void IRVisitor::visit_region(const BufferRegion &r) {
  for (const Range &rg : r.region) {
    visit(rg.min);
    visit(rg.extent);
  }
}

void IRVisitor::visit_(const For *op) {
  visit(op->min);
  visit(op->extent);
  visit(op->body);
}
void IRVisitor::visit_(const Block *op) {
  for (const IterVar &iv : op->iter_vars) {
    visit(iv.dom.min);
    visit(iv.dom.extent);
  }
  for (const Expr &b : op->bindings) visit(b);
  visit(op->predicate);
  for (const BufferRegion &r : op->reads) visit_region(r);
  for (const BufferRegion &r : op->writes) visit_region(r);
  if (op->init) visit(*op->init);
  visit(op->body);
}
void IRVisitor::visit_(const Store *op) {
  visit(op->value);
  for (const Expr &i : op->indices) visit(i);
}
void IRVisitor::visit_(const Seq *op) {
  for (const Stmt &s : op->stmts) visit(s);
}
void IRVisitor::visit_(const IfThenElse *op) {
  visit(op->cond);
  visit(op->then_case);
  if (op->else_case) visit(*op->else_case);
}
void IRVisitor::visit_(const LetStmt *op) {
  visit(op->value);
  visit(op->body);
}
void IRVisitor::visit_(const Evaluate *op) { visit(op->value); }

//===----------------------------------------------------------------------===//
// IRMutator
//===----------------------------------------------------------------------===//

Expr IRMutator::mutate(const Expr &e) {
  switch (e.kind()) {
    case NodeKind::IntImm: return visit_(e.as<IntImm>(), e);
    case NodeKind::FloatImm: return visit_(e.as<FloatImm>(), e);
    case NodeKind::Var: return visit_(e.as<VarNode>(), e);
    case NodeKind::Binary: return visit_(e.as<Binary>(), e);
    case NodeKind::Unary: return visit_(e.as<Unary>(), e);
    case NodeKind::Select: return visit_(e.as<Select>(), e);
    case NodeKind::Cast: return visit_(e.as<Cast>(), e);
    case NodeKind::Load: return visit_(e.as<Load>(), e);
    case NodeKind::Call: return visit_(e.as<Call>(), e);
    case NodeKind::Let: return visit_(e.as<Let>(), e);
    case NodeKind::StringImm: return visit_(e.as<StringImm>(), e);
    case NodeKind::BufferPtr: return visit_(e.as<BufferPtr>(), e);
    case NodeKind::OpaqueCall: return visit_(e.as<OpaqueCall>(), e);
    default: TESSERA_UNREACHABLE("not an expression kind: " << node_kind_name(e.kind()));
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt &s) {
  switch (s.kind()) {
    case NodeKind::For: return visit_(s.as<For>(), s);
    case NodeKind::Block: return visit_(s.as<Block>(), s);
    case NodeKind::Store: return visit_(s.as<Store>(), s);
    case NodeKind::Seq: return visit_(s.as<Seq>(), s);
    case NodeKind::IfThenElse: return visit_(s.as<IfThenElse>(), s);
    case NodeKind::LetStmt: return visit_(s.as<LetStmt>(), s);
    case NodeKind::Evaluate: return visit_(s.as<Evaluate>(), s);
    default: TESSERA_UNREACHABLE("not a statement kind: " << node_kind_name(s.kind()));
  }
  return s;
}

std::vector<Expr> IRMutator::mutate_list(const std::vector<Expr> &xs, bool &changed) {
  std::vector<Expr> out;
  out.reserve(xs.size());
  for (const Expr &x : xs) {
    out.push_back(mutate(x));
    changed |= !out.back().same_as(x);
  }
  return out;
}

BufferRegion IRMutator::mutate_region(const BufferRegion &r) {
  BufferRegion out{mutate_buffer(r.buffer), {}};
  for (const Range &rg : r.region) out.region.push_back(Range{mutate(rg.min), mutate(rg.extent)});
  return out;
}

Expr IRMutator::visit_(const IntImm *, const Expr &self) { return self; }
Expr IRMutator::visit_(const FloatImm *, const Expr &self) { return self; }
Expr IRMutator::visit_(const VarNode *, const Expr &self) { return self; }

Expr IRMutator::visit_(const Binary *op, const Expr &self) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return self;
  return Binary::make(op->op, a, b);
}
Expr IRMutator::visit_(const Unary *op, const Expr &self) {
  Expr a = mutate(op->a);
  if (a.same_as(op->a)) return self;
  return Unary::make(op->op, a);
}
Expr IRMutator::visit_(const Select *op, const Expr &self) {
  Expr c = mutate(op->cond), t = mutate(op->true_value), f = mutate(op->false_value);
  if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
  return Select::make(c, t, f);
}
Expr IRMutator::visit_(const Cast *op, const Expr &self) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return self;
  return Cast::make(op->dtype, v);
}
Expr IRMutator::visit_(const Load *op, const Expr &self) {
  bool changed = false;
  std::vector<Expr> idx = mutate_list(op->indices, changed);
  Buffer b = mutate_buffer(op->buffer);
  if (!changed && b.same_as(op->buffer)) return self;
  return Load::make(b, std::move(idx));
}
Expr IRMutator::visit_(const Call *op, const Expr &self) {
  bool changed = false;
  std::vector<Expr> args = mutate_list(op->args, changed);
  if (!changed) return self;
  return Call::make(op->dtype, op->op, std::move(args));
}
Expr IRMutator::visit_(const StringImm *, const Expr &self) { return self; }
Expr IRMutator::visit_(const BufferPtr *op, const Expr &self) {
  Buffer b = mutate_buffer(op->buffer);
  return b.same_as(op->buffer) ? self : BufferPtr::make(b);
}
Expr IRMutator::visit_(const OpaqueCall *op, const Expr &self) {
  bool changed = false;
  std::vector<Expr> args = mutate_list(op->args, changed);
  if (!changed) return self;
  return OpaqueCall::make(op->dtype, op->callee, std::move(args));
}
Expr IRMutator::visit_(const Let *op, const Expr &self) {
  Expr v = mutate(op->value), b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return Let::make(op->var, v, b);
}

Stmt IRMutator::visit_(const For *op, const Stmt &self) {
  Expr mn = mutate(op->min), ext = mutate(op->extent);
  Stmt body = mutate(op->body);
  if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return self;
  return For::make(op->loop_var, mn, ext, op->for_kind, body, op->thread_tag, op->annotations);
}

Stmt IRMutator::visit_(const Block *op, const Stmt &self) {
  bool changed = false;
  std::vector<IterVar> ivs;
  for (const IterVar &iv : op->iter_vars) {
    Range dom{mutate(iv.dom.min), mutate(iv.dom.extent)};
    changed |= !dom.min.same_as(iv.dom.min) || !dom.extent.same_as(iv.dom.extent);
    ivs.push_back(IterVar{iv.var, dom, iv.kind});
  }
  std::vector<Expr> bindings = mutate_list(op->bindings, changed);
  Expr pred = mutate(op->predicate);
  changed |= !pred.same_as(op->predicate);
  auto regions = [&](const std::vector<BufferRegion> &rs) {
    std::vector<BufferRegion> out;
    for (const BufferRegion &r : rs) {
      out.push_back(mutate_region(r));
      changed |= !out.back().buffer.same_as(r.buffer);
      for (size_t i = 0; i < r.region.size(); ++i)
        changed |= !out.back().region[i].min.same_as(r.region[i].min) ||
                   !out.back().region[i].extent.same_as(r.region[i].extent);
    }
    return out;
  };
  std::vector<BufferRegion> reads = regions(op->reads), writes = regions(op->writes);
  std::vector<Buffer> allocs;
  for (const Buffer &b : op->allocs) {
    allocs.push_back(mutate_buffer(b));
    changed |= !allocs.back().same_as(b);
  }
  std::optional<Stmt> init;
  if (op->init) {
    init = mutate(*op->init);
    changed |= !init->same_as(*op->init);
  }
  Stmt body = mutate(op->body);
  changed |= !body.same_as(op->body);
  if (!changed) return self;
  return Block::make(op->name, std::move(ivs), std::move(bindings), pred, std::move(reads),
                     std::move(writes), std::move(allocs), std::move(init), body, op->annotations);
}

Stmt IRMutator::visit_(const Store *op, const Stmt &self) {
  Expr v = mutate(op->value);
  bool changed = !v.same_as(op->value);
  std::vector<Expr> idx = mutate_list(op->indices, changed);
  Buffer b = mutate_buffer(op->buffer);
  if (!changed && b.same_as(op->buffer)) return self;
  return Store::make(b, v, std::move(idx));
}
Stmt IRMutator::visit_(const Seq *op, const Stmt &self) {
  bool changed = false;
  std::vector<Stmt> out;
  for (const Stmt &s : op->stmts) {
    out.push_back(mutate(s));
    changed |= !out.back().same_as(s);
  }
  if (!changed) return self;
  return Seq::make(std::move(out));
}
Stmt IRMutator::visit_(const IfThenElse *op, const Stmt &self) {
  Expr c = mutate(op->cond);
  Stmt t = mutate(op->then_case);
  std::optional<Stmt> e;
  if (op->else_case) e = mutate(*op->else_case);
  if (c.same_as(op->cond) && t.same_as(op->then_case) && (!e || e->same_as(*op->else_case))) return self;
  return IfThenElse::make(c, t, e);
}
Stmt IRMutator::visit_(const LetStmt *op, const Stmt &self) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  if (v.same_as(op->value) && b.same_as(op->body)) return self;
  return LetStmt::make(op->var, v, b);
}
Stmt IRMutator::visit_(const Evaluate *op, const Stmt &self) {
  Expr v = mutate(op->value);
  if (v.same_as(op->value)) return self;
  return Evaluate::make(v);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {
class Substituter : public IRMutator {
 public:
  explicit Substituter(const std::vector<std::pair<Var, Expr>> &map) : map_(map) {}

 protected:
  Expr visit_(const VarNode *op, const Expr &self) override {
    for (const auto &[v, e] : map_)
      if (v.get() == op) return e;
    return self;
  }
  using IRMutator::visit_;

 private:
  const std::vector<std::pair<Var, Expr>> &map_;
};

class PreOrder : public IRVisitor {
 public:
  PreOrder(const std::function<void(const Expr &)> &fe, const std::function<void(const Stmt &)> &fs)
      : fe_(fe), fs_(fs) {}
  void visit(const Expr &e) override {
    if (fe_) fe_(e);
    IRVisitor::visit(e);
  }
  void visit(const Stmt &s) override {
    if (fs_) fs_(s);
    IRVisitor::visit(s);
  }

 private:
  const std::function<void(const Expr &)> &fe_;
  const std::function<void(const Stmt &)> &fs_;
};
}  // namespace

Expr substitute(const Expr &e, const std::vector<std::pair<Var, Expr>> &map) {
  if (map.empty()) return e;
  return Substituter(map).mutate(e);
}
Stmt substitute(const Stmt &s, const std::vector<std::pair<Var, Expr>> &map) {
  if (map.empty()) return s;
  return Substituter(map).mutate(s);
}

void pre_order_visit(const Stmt &s, const std::function<void(const Expr &)> &on_expr,
                     const std::function<void(const Stmt &)> &on_stmt) {
  PreOrder(on_expr, on_stmt).visit(s);
}

bool uses_var(const Expr &e, const Var &v) {
  bool found = false;
  pre_order_visit(Evaluate::make(e), [&](const Expr &x) { found |= x.same_as(v); }, nullptr);
  return found;
}

bool range_uses_var(const For &loop, const Var &v) { return uses_var(loop.min, v) || uses_var(loop.extent, v); }

}  // namespace tessera::ir
