//===- lib/arith/Analyzer.cpp - Facts about variables and the queries -----===//
#include "tessera/arith/Analyzer.h"

#include "ArithUtil.h"
#include "CanonicalSum.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/support/Error.h"

namespace tessera::arith {

using ir::BinaryOp;
using ir::Expr;

const Analyzer::VarInfo *Analyzer::info(const ir::Var &v) const {
  auto it = vars_.find(v);
  return it == vars_.end() ? nullptr : &it->second;
}

bool Analyzer::is_bound(const ir::Var &v) const { return info(v) != nullptr; }

IntBound Analyzer::var_bound(const ir::Var &v) const {
  const VarInfo *i = info(v);
  return i ? i->bound : IntBound::of_dtype(v.dtype());
}

void Analyzer::set_info(const ir::Var &v, VarInfo info) {
  auto it = vars_.find(v);
  if (it == vars_.end()) {
    undo_.push_back({v, false, {}});
    vars_.emplace(v, std::move(info));
    return;
  }
  undo_.push_back({v, true, it->second});
  it->second = std::move(info);
}

void Analyzer::undo_to(size_t mark, size_t facts_mark) {
  while (undo_.size() > mark) {
    Undo u = std::move(undo_.back());
    undo_.pop_back();
    if (u.had) vars_[u.var] = std::move(u.before);
    else vars_.erase(u.var);
  }
  if (facts_.size() > facts_mark) facts_.resize(facts_mark);
}

void Analyzer::bind(const ir::Var &v, const ir::Range &dom) {
  TESSERA_ICHECK(dom.min.defined() && dom.extent.defined()) << "bind: undefined range for '" << v.name() << "'";
  Expr lo = simplify(ir::cast(v.dtype(), dom.min));
  Expr hi = simplify(ir::cast(v.dtype(), dom.min) + ir::cast(v.dtype(), dom.extent) - 1);
  VarInfo info;
  IntBound lb = const_bound(lo), hb = const_bound(hi);
  info.bound = IntBound{lb.min, hb.max}.intersect(IntBound::of_dtype(v.dtype()));
  if (!lo.is<ir::IntImm>()) info.sym_min = lo;
  if (!hi.is<ir::IntImm>()) info.sym_max = hi;
  set_info(v, std::move(info));
}

void Analyzer::bind(const ir::Var &v, int64_t min, int64_t max) {
  VarInfo info;
  info.bound = IntBound{min, max}.intersect(IntBound::of_dtype(v.dtype()));
  set_info(v, std::move(info));
}

void Analyzer::bind_value(const ir::Var &v, const Expr &value) {
  TESSERA_ICHECK(value.defined()) << "bind_value: undefined value for '" << v.name() << "'";
  VarInfo info;
  info.value = value;
  info.bound = value.dtype().is_int_like() ? const_bound(value) : IntBound::everything();
  set_info(v, std::move(info));
}

void Analyzer::assume(const Expr &cond) {
  Expr c = simplify(cond);
  if (const auto *b = c.as<ir::Binary>(); b && b->op == BinaryOp::And) {
    assume(b->a);
    assume(b->b);
    return;
  }
  const auto *b = c.as<ir::Binary>();
  if (!b || !ir::is_comparison(b->op) || !b->a.dtype().is_int()) return;
  // Each relation becomes one or two facts `d <= 0`.
  std::vector<detail::LinearSum> ds;
  auto diff = [&](const Expr &x, const Expr &y, int64_t plus) {
    auto d = detail::add_sums(detail::to_sum(x), detail::to_sum(y), -1);
    if (!d || !detail::checked_add(d->constant, plus)) return;
    d->constant += plus;
    ds.push_back(*d);
  };
  switch (b->op) {
    case BinaryOp::LT: diff(b->a, b->b, 1); break;
    case BinaryOp::LE: diff(b->a, b->b, 0); break;
    case BinaryOp::GT: diff(b->b, b->a, 1); break;
    case BinaryOp::GE: diff(b->b, b->a, 0); break;
    case BinaryOp::EQ: diff(b->a, b->b, 0); diff(b->b, b->a, 0); break;
    default: return;
  }
  for (const detail::LinearSum &d : ds) {
    if (!detail::sum_representable(d)) continue;
    facts_.push_back(d.to_expr());
    // k * v + c <= 0 narrows the constant bound of v.
    if (d.terms.size() != 1 || !d.terms[0].atom.is<ir::VarNode>()) continue;
    ir::Var v = ir::Var::from(d.terms[0].atom);
    int64_t k = d.terms[0].coef, c = d.constant;
    VarInfo info = this->info(v) ? *this->info(v) : VarInfo{IntBound::of_dtype(v.dtype()), {}, {}, {}};
    if (k > 0) info.bound.max = std::min(info.bound.max, detail::floordiv64(-c, k));
    else info.bound.min = std::max(info.bound.min, -detail::floordiv64(-c, -k));
    set_info(v, std::move(info));
  }
}

Expr Analyzer::simplify(const Expr &e) const {
  Expr r = detail::simplify_expr(e, *this);
  // A second pass catches rewrites that the first one enabled.
  Expr r2 = detail::simplify_expr(r, *this);
  return r2;
}

IntBound Analyzer::const_bound(const Expr &e) const {
  if (!e.defined() || !e.dtype().is_int_like()) return IntBound::everything();
  Expr s = simplify(e);
  IntBound b = detail::eval_bound(s, *this);
  if (s.dtype().is_int()) b = b.intersect(detail::sum_bound(detail::to_sum(s), *this));
  if (b.min > b.max) return IntBound::of_dtype(e.dtype());
  return b;
}

bool Analyzer::can_prove(const Expr &cond) const {
  Expr s = simplify(cond);
  if (auto k = ir::as_const_int(s)) return *k != 0;
  if (const auto *b = s.as<ir::Binary>()) {
    if (b->op == BinaryOp::And) return can_prove(b->a) && can_prove(b->b);
    if (b->op == BinaryOp::Or) return can_prove(b->a) || can_prove(b->b);
  }
  return false;
}

bool Analyzer::can_prove_equal(const Expr &a, const Expr &b) const {
  if (a.dtype().is_int() && b.dtype().is_int()) {
    Expr d = simplify(ir::sub(a, b));
    return ir::is_const_int(d, 0);
  }
  return ir::structural_equal(simplify(a), simplify(b));
}

Expr simplify(const Expr &e) { return Analyzer().simplify(e); }

}  // namespace tessera::arith
