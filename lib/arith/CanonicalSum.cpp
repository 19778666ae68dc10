//===- lib/arith/CanonicalSum.cpp - Linear sums of terms ------------------===//
#include "CanonicalSum.h"

#include <algorithm>
#include <numeric>

#include "ArithUtil.h"
#include "tessera/ir/StructuralEqual.h"

namespace tessera::arith::detail {

using ir::BinaryOp;
using ir::Expr;

namespace {

// A coefficient or constant must be representable in the dtype, or the
// rebuilt expression would not mean the same thing.
bool representable(int64_t v, ir::DataType t) {
  return v != INT64_MIN && IntBound::of_dtype(t).contains(v);
}

void push_term(LinearSum &s, const Expr &atom, int64_t coef) {
  s.terms.push_back({atom, coef, ir::structural_hash(atom)});
}

void decompose(const Expr &e, int64_t sign, LinearSum &out, bool &ok) {
  if (!ok) return;
  if (const auto *imm = e.as<ir::IntImm>()) {
    auto p = checked_mul(imm->value, sign);
    auto r = p ? checked_add(out.constant, *p) : std::nullopt;
    if (!r) { ok = false; return; }
    out.constant = *r;
    return;
  }
  if (const auto *b = e.as<ir::Binary>()) {
    if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) {
      decompose(b->a, sign, out, ok);
      decompose(b->b, b->op == BinaryOp::Add ? sign : -sign, out, ok);
      return;
    }
    if (b->op == BinaryOp::Mul) {
      auto ka = ir::as_const_int(b->a), kb = ir::as_const_int(b->b);
      if (kb || ka) {
        auto k = checked_mul(kb ? *kb : *ka, sign);
        if (!k) { ok = false; return; }
        decompose(kb ? b->a : b->b, *k, out, ok);
        return;
      }
    }
  }
  if (const auto *u = e.as<ir::Unary>(); u && u->op == ir::UnaryOp::Neg) {
    decompose(u->a, -sign, out, ok);
    return;
  }
  push_term(out, e, sign);
}

// Multiplies `atom` by the positive `k` (no node when k == 1).
Expr times(const Expr &atom, int64_t k, ir::DataType t) {
  if (k == 1) return atom;
  return ir::Binary::make(BinaryOp::Mul, atom, ir::make_int(t, k));
}

}  // namespace

LinearSum const_sum(ir::DataType t, int64_t k) {
  LinearSum s;
  s.dtype = t;
  s.constant = k;
  return s;
}

LinearSum to_sum(const Expr &e) {
  LinearSum s;
  s.dtype = e.dtype();
  bool ok = true;
  decompose(e, 1, s, ok);
  if (!ok) {
    s.terms.clear();
    s.constant = 0;
    push_term(s, e, 1);
    return s;
  }
  // Merge like terms that the decomposition met separately.
  LinearSum merged = const_sum(s.dtype, s.constant);
  for (const SumTerm &t : s.terms) {
    bool found = false;
    for (SumTerm &m : merged.terms) {
      if (m.hash == t.hash && ir::structural_equal(m.atom, t.atom)) {
        auto c = checked_add(m.coef, t.coef);
        if (!c) {
          LinearSum whole = const_sum(s.dtype, 0);
          push_term(whole, e, 1);
          return whole;
        }
        m.coef = *c;
        found = true;
        break;
      }
    }
    if (!found) merged.terms.push_back(t);
  }
  merged.compact();
  return merged;
}

std::optional<LinearSum> add_sums(const LinearSum &a, const LinearSum &b, int64_t sign) {
  LinearSum r = a;
  auto c = checked_mul(b.constant, sign);
  auto k = c ? checked_add(r.constant, *c) : std::nullopt;
  if (!k) return std::nullopt;
  r.constant = *k;
  for (const SumTerm &t : b.terms) {
    auto coef = checked_mul(t.coef, sign);
    if (!coef) return std::nullopt;
    bool found = false;
    for (SumTerm &m : r.terms) {
      if (m.hash == t.hash && ir::structural_equal(m.atom, t.atom)) {
        auto s = checked_add(m.coef, *coef);
        if (!s) return std::nullopt;
        m.coef = *s;
        found = true;
        break;
      }
    }
    if (!found) r.terms.push_back({t.atom, *coef, t.hash});
  }
  r.compact();
  return r;
}

std::optional<LinearSum> scale_sum(const LinearSum &a, int64_t k) {
  LinearSum r = a;
  auto c = checked_mul(r.constant, k);
  if (!c) return std::nullopt;
  r.constant = *c;
  for (SumTerm &t : r.terms) {
    auto m = checked_mul(t.coef, k);
    if (!m) return std::nullopt;
    t.coef = *m;
  }
  r.compact();
  return r;
}

void LinearSum::compact() {
  terms.erase(std::remove_if(terms.begin(), terms.end(), [](const SumTerm &t) { return t.coef == 0; }),
              terms.end());
}

int64_t LinearSum::coef_gcd() const {
  int64_t g = 0;
  for (const SumTerm &t : terms) g = std::gcd(g, t.coef < 0 ? -t.coef : t.coef);
  return g;
}

Expr LinearSum::to_expr() const {
  ir::DataType t = dtype;
  // Every coefficient must be a valid constant of the dtype; otherwise the
  // caller must not use this form (checked here as an internal invariant).
  std::vector<const SumTerm *> pos, neg;
  for (const SumTerm &term : terms) {
    if (term.coef == 0) continue;
    (term.coef > 0 ? pos : neg).push_back(&term);
  }
  auto by_size = [](const SumTerm *x, const SumTerm *y) {
    int64_t ax = x->coef < 0 ? -x->coef : x->coef, ay = y->coef < 0 ? -y->coef : y->coef;
    return ax > ay;
  };
  std::stable_sort(pos.begin(), pos.end(), by_size);
  std::stable_sort(neg.begin(), neg.end(), by_size);

  Expr acc;
  for (const SumTerm *term : pos) {
    Expr x = times(term->atom, term->coef, t);
    acc = acc.defined() ? ir::Binary::make(BinaryOp::Add, acc, x) : x;
  }
  if (!acc.defined() && !neg.empty() && constant > 0) {
    acc = ir::make_int(t, constant);
    for (const SumTerm *term : neg)
      acc = ir::Binary::make(BinaryOp::Sub, acc, times(term->atom, -term->coef, t));
    return acc;
  }
  for (const SumTerm *term : neg) {
    if (!acc.defined()) {
      acc = term->coef == -1 ? ir::Unary::make(ir::UnaryOp::Neg, term->atom)
                             : ir::Binary::make(BinaryOp::Mul, term->atom, ir::make_int(t, term->coef));
      continue;
    }
    acc = ir::Binary::make(BinaryOp::Sub, acc, times(term->atom, -term->coef, t));
  }
  if (!acc.defined()) return ir::make_int(t, constant);
  if (constant > 0) return ir::Binary::make(BinaryOp::Add, acc, ir::make_int(t, constant));
  if (constant < 0) return ir::Binary::make(BinaryOp::Sub, acc, ir::make_int(t, -constant));
  return acc;
}

// Used by Simplify.cpp to check a sum can be printed faithfully.
bool sum_representable(const LinearSum &s) {
  if (!representable(s.constant, s.dtype) || !representable(-s.constant, s.dtype)) return false;
  for (const SumTerm &t : s.terms)
    if (!representable(t.coef, s.dtype) || !representable(-t.coef, s.dtype)) return false;
  return true;
}

}  // namespace tessera::arith::detail
