//===- lib/arith/Simplify.cpp - The rewriting simplifier ------------------===//
//
// A bottom-up mutator: children are simplified first, then each node is
// rewritten with the facts of the analyzer. Integer Add/Sub/Mul trees become
// canonical linear sums (CanonicalSum.h); division and modulo by constants
// move the multiples of the divisor out of the dividend and use bounds on
// the rest; min/max and comparisons are decided by the bound of a
// difference. Every rule is an identity under "signed arithmetic does not
// overflow"; unsigned and floating-point nodes are only rebuilt (and
// constant-folded for unsigned).
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <numeric>

#include "ArithUtil.h"
#include "CanonicalSum.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"

namespace tessera::arith::detail {

using ir::BinaryOp;
using ir::DataType;
using ir::Expr;

namespace {

// Depth of nested symbolic-bound substitutions (sum_bound -> simplify ->
// sum_bound ...), kept small so proofs stay cheap and always terminate.
thread_local int g_symbolic_depth = 0;

bool finite(const IntBound &b) { return b.min != IntBound::kNegInf && b.max != IntBound::kPosInf; }

// Signed integer dtypes are the only ones the algebraic rules apply to.
bool is_signed_int(DataType t) { return t.is_int(); }

BinaryOp swap_compare(BinaryOp op) {
  switch (op) {
    case BinaryOp::LT: return BinaryOp::GT;
    case BinaryOp::LE: return BinaryOp::GE;
    case BinaryOp::GT: return BinaryOp::LT;
    case BinaryOp::GE: return BinaryOp::LE;
    default: return op;
  }
}

BinaryOp negate_compare(BinaryOp op) {
  switch (op) {
    case BinaryOp::LT: return BinaryOp::GE;
    case BinaryOp::LE: return BinaryOp::GT;
    case BinaryOp::GT: return BinaryOp::LE;
    case BinaryOp::GE: return BinaryOp::LT;
    case BinaryOp::EQ: return BinaryOp::NE;
    case BinaryOp::NE: return BinaryOp::EQ;
    default: return op;
  }
}

class Simplifier : public ir::IRMutator {
 public:
  explicit Simplifier(const Analyzer &ana) : ana_(ana) {}
  using IRMutator::mutate;

 protected:
  Expr visit_(const ir::VarNode *op, const Expr &self) override {
    (void)op;
    const Analyzer::VarInfo *info = ana_.info(ir::Var::from(self));
    if (!info) return self;
    if (info->value.defined()) return mutate(info->value);
    if (info->bound.is_const()) return ir::make_int(self.dtype(), info->bound.min);
    return self;
  }

  Expr visit_(const ir::Binary *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    DataType t = a.dtype();
    auto ka = ir::as_const_int(a), kb = ir::as_const_int(b);
    if (ka && kb && t.is_int_like()) {
      if (auto r = fold_binary(op->op, t, *ka, *kb)) return ir::make_int(op->dtype, *r);
      return rebuild(op, self, a, b);
    }
    if (op->op == BinaryOp::And || op->op == BinaryOp::Or) return simplify_logic(op, self, a, b);
    if (!is_signed_int(t)) return rebuild(op, self, a, b);
    switch (op->op) {
      case BinaryOp::Add:
      case BinaryOp::Sub:
      case BinaryOp::Mul: return simplify_arith(op, self, a, b);
      case BinaryOp::Div:
      case BinaryOp::Mod:
      case BinaryOp::FloorDiv:
      case BinaryOp::FloorMod: return simplify_division(op, self, a, b);
      case BinaryOp::Min:
      case BinaryOp::Max: return simplify_minmax(op, self, a, b);
      case BinaryOp::EQ:
      case BinaryOp::NE:
      case BinaryOp::LT:
      case BinaryOp::LE:
      case BinaryOp::GT:
      case BinaryOp::GE: return simplify_compare(op->op, a, b, rebuild(op, self, a, b));
      default: return rebuild(op, self, a, b);
    }
  }

  Expr visit_(const ir::Unary *op, const Expr &self) override {
    Expr a = mutate(op->a);
    DataType t = a.dtype();
    auto ka = ir::as_const_int(a);
    if (op->op == ir::UnaryOp::Not) {
      if (ka) return ir::make_int(op->dtype, *ka == 0);
      if (const auto *inner = a.as<ir::Unary>(); inner && inner->op == ir::UnaryOp::Not) return inner->a;
      if (const auto *cmp = a.as<ir::Binary>();
          cmp && ir::is_comparison(cmp->op) && is_signed_int(cmp->a.dtype()))
        return simplify_compare(negate_compare(cmp->op), cmp->a, cmp->b,
                                ir::Unary::make(ir::UnaryOp::Not, a));
    } else if (ka && t.is_int_like()) {
      if (op->op == ir::UnaryOp::Neg) return ir::make_int(t, static_cast<int64_t>(0 - static_cast<uint64_t>(*ka)));
      return ir::make_int(t, ~*ka);
    } else if (op->op == ir::UnaryOp::Neg && is_signed_int(t)) {
      if (auto s = scale_sum(to_sum(a), -1)) return finish_sum(*s, ir::Unary::make(op->op, a));
    }
    if (a.same_as(op->a)) return self;
    return ir::Unary::make(op->op, a);
  }

  Expr visit_(const ir::Select *op, const Expr &self) override {
    Expr c = mutate(op->cond);
    if (auto kc = ir::as_const_int(c)) return mutate(*kc ? op->true_value : op->false_value);
    Expr t = mutate(op->true_value), f = mutate(op->false_value);
    if (ir::structural_equal(t, f)) return t;
    if (c.same_as(op->cond) && t.same_as(op->true_value) && f.same_as(op->false_value)) return self;
    return ir::Select::make(c, t, f);
  }

  Expr visit_(const ir::Cast *op, const Expr &self) override {
    Expr v = mutate(op->value);
    DataType t = self.dtype();
    if (v.dtype() == t) return v;
    if (auto k = ir::as_const_int(v); k && t.is_int_like())
      return ir::make_int(t, t.is_bool() ? (*k != 0) : *k);
    if (v.same_as(op->value)) return self;
    return ir::Cast::make(t, v);
  }

  Expr visit_(const ir::Call *op, const Expr &self) override {
    if (op->op == ir::Intrinsic::IfThenElse && op->args.size() == 3) {
      Expr c = mutate(op->args[0]);
      if (auto kc = ir::as_const_int(c)) return mutate(*kc ? op->args[1] : op->args[2]);
    }
    return IRMutator::visit_(op, self);
  }

  Expr visit_(const ir::Let *op, const Expr &self) override {
    Expr value = mutate(op->value);
    if (value.is<ir::IntImm>() || value.is<ir::VarNode>())
      return mutate(ir::substitute(op->body, {{op->var, value}}));
    // Simplify the body knowing the bound of the let variable.
    Analyzer inner = ana_;
    if (value.dtype().is_int_like()) {
      IntBound b = eval_bound(value, ana_);
      inner.bind(op->var, b.min, b.max);
    }
    Expr body = Simplifier(inner).mutate(op->body);
    if (value.same_as(op->value) && body.same_as(op->body)) return self;
    return ir::Let::make(op->var, value, body);
  }

 private:
  Expr rebuild(const ir::Binary *op, const Expr &self, const Expr &a, const Expr &b) {
    if (a.same_as(op->a) && b.same_as(op->b)) return self;
    return ir::Binary::make(op->op, a, b);
  }

  // Merges k * (x // c % b) * c + k * (x % c) into k * (x % (c * b)): the two
  // lowest digits of a mixed-radix number are one digit (fused loops split
  // back, e.g. u // 10 % 8 * 10 + u % 10 -> u % 80). True for floor
  // division and modulo whatever the sign of x (c, b > 0).
  bool merge_mod_digits(LinearSum &s) {
    for (size_t i = 0; i < s.terms.size(); ++i) {
      const auto *low = s.terms[i].atom.as<ir::Binary>();
      if (!low || low->op != BinaryOp::FloorMod) continue;
      auto c = ir::as_const_int(low->b);
      if (!c || *c <= 0) continue;
      for (size_t j = 0; j < s.terms.size(); ++j) {
        const auto *high = s.terms[j].atom.as<ir::Binary>();
        if (!high || high->op != BinaryOp::FloorMod) continue;
        const auto *div = high->a.as<ir::Binary>();
        auto b = ir::as_const_int(high->b);
        if (!div || div->op != BinaryOp::FloorDiv || !ir::is_const_int(div->b, *c) || !b || *b <= 0) continue;
        auto want = checked_mul(s.terms[i].coef, *c);
        auto cb = checked_mul(*c, *b);
        if (!want || !cb || !IntBound::of_dtype(s.dtype).contains(*cb) || s.terms[j].coef != *want ||
            !ir::structural_equal(div->a, low->a))
          continue;
        LinearSum rest = s;
        rest.terms[i].coef = 0;
        rest.terms[j].coef = 0;
        rest.compact();
        Expr merged = simplify_floormod(low->a, *cb);
        auto x = scale_sum(to_sum(merged), s.terms[i].coef);
        auto total = x ? add_sums(rest, *x, 1) : std::nullopt;
        if (!total) continue;
        s = *total;
        return true;
      }
    }
    return false;
  }

  // Rewrites x // c * c + x % c (and the truncating pair) to x, after
  // merging the digits of x % c (merge_mod_digits), then prints.
  Expr finish_sum(LinearSum s, const Expr &fallback) {
    for (bool changed = true; changed;) {
      changed = merge_mod_digits(s);
      for (size_t i = 0; i < s.terms.size() && !changed; ++i) {
        const auto *mod = s.terms[i].atom.as<ir::Binary>();
        if (!mod || (mod->op != BinaryOp::FloorMod && mod->op != BinaryOp::Mod)) continue;
        auto c = ir::as_const_int(mod->b);
        if (!c) continue;
        BinaryOp div_op = mod->op == BinaryOp::FloorMod ? BinaryOp::FloorDiv : BinaryOp::Div;
        for (size_t j = 0; j < s.terms.size(); ++j) {
          const auto *div = s.terms[j].atom.as<ir::Binary>();
          if (!div || div->op != div_op || !ir::is_const_int(div->b, *c)) continue;
          auto want = checked_mul(s.terms[i].coef, *c);
          if (!want || s.terms[j].coef != *want || !ir::structural_equal(div->a, mod->a)) continue;
          LinearSum rest = s;
          rest.terms[i].coef = 0;
          rest.terms[j].coef = 0;
          rest.compact();
          auto x = scale_sum(to_sum(mod->a), s.terms[i].coef);
          auto merged = x ? add_sums(rest, *x, 1) : std::nullopt;
          if (!merged) continue;
          s = *merged;
          changed = true;
          break;
        }
      }
    }
    if (!sum_representable(s)) return fallback;
    return s.to_expr();
  }

  Expr simplify_arith(const ir::Binary *op, const Expr &self, const Expr &a, const Expr &b) {
    LinearSum sa = to_sum(a), sb = to_sum(b);
    std::optional<LinearSum> r;
    if (op->op == BinaryOp::Add) r = add_sums(sa, sb, 1);
    if (op->op == BinaryOp::Sub) r = add_sums(sa, sb, -1);
    if (op->op == BinaryOp::Mul) {
      if (sb.is_const()) r = scale_sum(sa, sb.constant);
      else if (sa.is_const()) r = scale_sum(sb, sa.constant);
      else return rebuild(op, self, a, b);  // a product of two non-constants is a term
    }
    Expr fallback = rebuild(op, self, a, b);
    if (!r) return fallback;
    return finish_sum(*r, fallback);
  }

  Expr simplify_division(const ir::Binary *op, const Expr &self, const Expr &a, const Expr &b) {
    bool is_div = op->op == BinaryOp::Div || op->op == BinaryOp::FloorDiv;
    bool trunc = op->op == BinaryOp::Div || op->op == BinaryOp::Mod;
    DataType t = a.dtype();
    IntBound ab = sum_bound(to_sum(a), ana_);
    auto kb = ir::as_const_int(b);
    if (!kb) {
      // A symbolic divisor: only 0 <= a < b is used.
      auto d = add_sums(to_sum(b), to_sum(a), -1);
      if (ab.min >= 0 && d && sum_bound(*d, ana_).min >= 1) return is_div ? ir::make_int(t, 0) : a;
      return rebuild(op, self, a, b);
    }
    int64_t c = *kb;
    if (c == 1) return is_div ? a : ir::make_int(t, 0);
    if (c <= 0) return rebuild(op, self, a, b);
    if (trunc && ab.min < 0) return rebuild(op, self, a, b);
    Expr r = is_div ? simplify_floordiv(a, c) : simplify_floormod(a, c);
    // Keep the truncating operator at the top when it means the same.
    if (trunc) {
      if (const auto *f = r.as<ir::Binary>();
          f && (f->op == BinaryOp::FloorDiv || f->op == BinaryOp::FloorMod) &&
          sum_bound(to_sum(f->a), ana_).min >= 0)
        r = ir::Binary::make(f->op == BinaryOp::FloorDiv ? BinaryOp::Div : BinaryOp::Mod, f->a, f->b);
    }
    return r;
  }

  // Splits `a` into c * q + r: terms whose coefficient c divides go to q,
  // the constant is split by floor division, everything else stays in r.
  void split_by(const LinearSum &s, int64_t c, LinearSum &q, LinearSum &r) {
    q = const_sum(s.dtype, floordiv64(s.constant, c));
    r = const_sum(s.dtype, floormod64(s.constant, c));
    for (const SumTerm &term : s.terms) {
      if (term.coef % c == 0) q.terms.push_back({term.atom, term.coef / c, term.hash});
      else r.terms.push_back(term);
    }
  }

  // r == g * big + small with g > 1 dividing c, and 0 <= small < g.
  struct SmallSplit {
    int64_t g;
    LinearSum big, small;
  };
  std::optional<SmallSplit> split_small(const LinearSum &r, int64_t c) {
    std::vector<int64_t> candidates;
    for (const SumTerm &term : r.terms) {
      int64_t g = std::gcd(term.coef < 0 ? -term.coef : term.coef, c);
      if (g > 1 && std::find(candidates.begin(), candidates.end(), g) == candidates.end()) candidates.push_back(g);
    }
    std::sort(candidates.rbegin(), candidates.rend());
    for (int64_t g : candidates) {
      SmallSplit sp{g, const_sum(r.dtype, 0), const_sum(r.dtype, r.constant)};
      for (const SumTerm &term : r.terms) {
        if (term.coef % g == 0) sp.big.terms.push_back({term.atom, term.coef / g, term.hash});
        else sp.small.terms.push_back(term);
      }
      IntBound sb = sum_bound(sp.small, ana_);
      if (sb.min >= 0 && sb.max < g && sum_representable(sp.big) && sum_representable(sp.small)) return sp;
    }
    return std::nullopt;
  }

  // floor(a / c), c > 1.
  Expr simplify_floordiv(const Expr &a, int64_t c) {
    DataType t = a.dtype();
    Expr node = ir::Binary::make(BinaryOp::FloorDiv, a, ir::make_int(t, c));
    if (const auto *inner = a.as<ir::Binary>(); inner && inner->op == BinaryOp::FloorDiv) {
      auto c1 = ir::as_const_int(inner->b);
      if (c1 && *c1 > 0)
        if (auto p = checked_mul(*c1, c); p && IntBound::of_dtype(t).contains(*p))
          return simplify_floordiv(inner->a, *p);
    }
    LinearSum s = to_sum(a), q, r;
    split_by(s, c, q, r);
    // The rest stays within one block [k*c, k*c + c): its quotient is k.
    IntBound rb = sum_bound(r, ana_);
    if (finite(rb) && floordiv64(rb.min, c) == floordiv64(rb.max, c)) {
      auto k = checked_add(q.constant, floordiv64(rb.min, c));
      if (!k) return node;
      q.constant = *k;
      return finish_sum(q, node);
    }
    if (!sum_representable(r)) return node;
    Expr inner;
    if (auto sp = split_small(r, c)) {
      // floor((g*A + B) / (g*c')) == floor(A / c') when 0 <= B < g.
      inner = c / sp->g == 1 ? sp->big.to_expr() : simplify_floordiv(sp->big.to_expr(), c / sp->g);
    } else if (q.is_const() && q.constant == 0) {
      return ir::Binary::make(BinaryOp::FloorDiv, r.to_expr(), ir::make_int(t, c));
    } else {
      inner = simplify_floordiv(r.to_expr(), c);
    }
    auto total = add_sums(q, to_sum(inner), 1);
    if (!total) return node;
    return finish_sum(*total, node);
  }

  // floormod(a, c), c > 1.
  Expr simplify_floormod(const Expr &a, int64_t c) {
    DataType t = a.dtype();
    Expr node = ir::Binary::make(BinaryOp::FloorMod, a, ir::make_int(t, c));
    if (const auto *inner = a.as<ir::Binary>(); inner && inner->op == BinaryOp::FloorMod) {
      auto c1 = ir::as_const_int(inner->b);
      if (c1 && *c1 > 0 && *c1 % c == 0) return simplify_floormod(inner->a, c);
    }
    LinearSum s = to_sum(a);
    // Multiples of c vanish; other coefficients shrink toward zero modulo c.
    // (`kept` keeps the original coefficients for the residual node: reduced
    // ones would hide fused structure such as (a*32 + b*8 + d) % 12.)
    LinearSum r = const_sum(t, floormod64(s.constant, c)), kept = r;
    for (const SumTerm &term : s.terms)
      if (term.coef % c != 0) {
        r.terms.push_back({term.atom, term.coef % c, term.hash});
        kept.terms.push_back(term);
      }
    if (r.is_const()) return ir::make_int(t, r.constant);
    IntBound rb = sum_bound(r, ana_);
    if (finite(rb) && floordiv64(rb.min, c) == floordiv64(rb.max, c)) {
      auto k = checked_mul(floordiv64(rb.min, c), c);
      auto shifted = k ? checked_add(r.constant, -*k) : std::nullopt;
      if (!shifted) return node;
      r.constant = *shifted;
      return finish_sum(r, node);
    }
    if (!sum_representable(r)) return node;
    if (auto sp = split_small(r, c)) {
      // floormod(g*A + B, g*c') == g * floormod(A, c') + B when 0 <= B < g.
      Expr inner = sp->g == c ? ir::make_int(t, 0) : simplify_floormod(sp->big.to_expr(), c / sp->g);
      auto scaled = scale_sum(to_sum(inner), sp->g);
      auto total = scaled ? add_sums(*scaled, sp->small, 1) : std::nullopt;
      if (!total) return node;
      return finish_sum(*total, node);
    }
    if (r.terms.size() == 1 && r.constant == 0 && r.terms[0].coef == 1)
      if (const auto *inner = r.terms[0].atom.as<ir::Binary>(); inner && inner->op == BinaryOp::FloorMod)
        if (auto c1 = ir::as_const_int(inner->b); c1 && *c1 > 0 && *c1 % c == 0)
          return simplify_floormod(inner->a, c);
    if (!sum_representable(kept)) return node;
    return ir::Binary::make(BinaryOp::FloorMod, kept.to_expr(), ir::make_int(t, c));
  }

  Expr simplify_minmax(const ir::Binary *op, const Expr &self, const Expr &a, const Expr &b) {
    bool is_min = op->op == BinaryOp::Min;
    if (ir::structural_equal(a, b)) return a;
    if (auto d = add_sums(to_sum(a), to_sum(b), -1)) {
      IntBound db = sum_bound(*d, ana_);
      if (db.max <= 0) return is_min ? a : b;
      if (db.min >= 0) return is_min ? b : a;
    }
    auto ka = ir::as_const_int(a), kb = ir::as_const_int(b);
    if (ka && !kb) return simplify_minmax(op, self, b, a);  // constant second
    if (kb) {
      // min(min(x, c1), c2) -> min(x, min(c1, c2))
      if (const auto *inner = a.as<ir::Binary>(); inner && inner->op == op->op)
        if (auto c1 = ir::as_const_int(inner->b))
          return ir::Binary::make(op->op, inner->a,
                                  ir::make_int(a.dtype(), is_min ? std::min(*c1, *kb) : std::max(*c1, *kb)));
    }
    return rebuild(op, self, a, b);
  }

  // True when d <= 0 follows from a fact of the analyzer (d - fact is a
  // non-positive constant).
  bool le_zero_by_facts(const LinearSum &d) {
    for (const Expr &fact : ana_.facts()) {
      if (fact.dtype() != d.dtype) continue;
      auto diff = add_sums(d, to_sum(fact), -1);
      if (diff && diff->is_const() && diff->constant <= 0) return true;
    }
    return false;
  }

  Expr simplify_compare(BinaryOp op, Expr a, Expr b, const Expr &fallback) {
    DataType t = a.dtype();
    if (op == BinaryOp::GT || op == BinaryOp::GE) {
      std::swap(a, b);
      op = swap_compare(op);
    }
    auto diff = add_sums(to_sum(a), to_sum(b), -1);
    if (!diff) return fallback;
    LinearSum d = *diff;
    // Everything becomes d <= 0, d == 0 or d != 0.
    if (op == BinaryOp::LT) {
      auto k = checked_add(d.constant, 1);
      if (!k) return fallback;
      d.constant = *k;
      op = BinaryOp::LE;
    }
    IntBound db = sum_bound(d, ana_);
    if (op == BinaryOp::LE) {
      if (db.max <= 0 || le_zero_by_facts(d)) return ir::const_true();
      if (db.min > 0) return ir::const_false();
      auto neg = scale_sum(d, -1);
      if (neg && checked_add(neg->constant, 1)) {
        neg->constant += 1;  // d > 0  <=>  -d + 1 <= 0
        if (le_zero_by_facts(*neg)) return ir::const_false();
      }
    } else {
      bool eq = op == BinaryOp::EQ;
      if (db.is_const()) return ir::make_int(DataType::bool_(), eq == (db.min == 0));
      if (!db.contains(0)) return ir::make_int(DataType::bool_(), !eq);
    }
    // Divide by the gcd of the coefficients.
    int64_t g = d.coef_gcd();
    if (g > 1) {
      if (op == BinaryOp::LE) {
        d.constant = -floordiv64(-d.constant, g);
      } else {
        if (d.constant % g != 0) return ir::make_int(DataType::bool_(), op == BinaryOp::NE);
        d.constant /= g;
      }
      for (SumTerm &term : d.terms) term.coef /= g;
    }
    // Positive terms on the left, the rest and the constant on the right.
    LinearSum lhs = const_sum(t, 0), rhs = const_sum(t, -d.constant);
    for (const SumTerm &term : d.terms)
      (term.coef > 0 ? lhs : rhs).terms.push_back({term.atom, term.coef > 0 ? term.coef : -term.coef, term.hash});
    if (op == BinaryOp::LE && !lhs.terms.empty()) {
      auto k = checked_add(rhs.constant, 1);  // P <= N + k  <=>  P < N + k + 1
      if (!k) return fallback;
      rhs.constant = *k;
      op = BinaryOp::LT;
    } else if (lhs.terms.empty()) {
      // -N + c <= 0  <=>  N >= c   (and -N + c == 0  <=>  N == c)
      lhs.terms = rhs.terms;
      rhs = const_sum(t, d.constant);
      if (op == BinaryOp::LE) op = BinaryOp::GE;
    }
    if (!sum_representable(lhs) || !sum_representable(rhs)) return fallback;
    return ir::Binary::make(op, lhs.to_expr(), rhs.to_expr());
  }

  Expr simplify_logic(const ir::Binary *op, const Expr &self, const Expr &a, const Expr &b) {
    bool is_and = op->op == BinaryOp::And;
    auto ka = ir::as_const_int(a), kb = ir::as_const_int(b);
    if (ka) return (*ka != 0) == is_and ? b : a;
    if (kb) return (*kb != 0) == is_and ? a : b;
    if (ir::structural_equal(a, b)) return a;
    return rebuild(op, self, a, b);
  }

  const Analyzer &ana_;
};

}  // namespace

IntBound sum_bound(const LinearSum &s, const Analyzer &analyzer) {
  IntBound b = IntBound::constant(s.constant);
  for (const SumTerm &term : s.terms) {
    IntBound x = eval_bound(term.atom, analyzer);
    int64_t lo = sat_mul(term.coef > 0 ? x.min : x.max, term.coef);
    int64_t hi = sat_mul(term.coef > 0 ? x.max : x.min, term.coef);
    b = {sat_add(b.min, lo), sat_add(b.max, hi)};
  }
  if (s.terms.empty() || g_symbolic_depth >= 3) return b;
  // Substitute the symbolic ends of variables: an upper bound of the sum takes
  // each variable's upper end where its coefficient is positive.
  for (int side = 0; side < 2; ++side) {
    bool upper = side == 0;
    bool any = false;
    Expr acc = ir::make_int(s.dtype, s.constant);
    for (const SumTerm &term : s.terms) {
      Expr atom = term.atom;
      // A variable, or a variable divided by a positive constant (division
      // never decreases as its numerator grows): its symbolic end.
      Expr var = atom;
      const auto *div = atom.as<ir::Binary>();
      if (div && (div->op == BinaryOp::FloorDiv || div->op == BinaryOp::Div) && ir::as_const_int(div->b).value_or(0) > 0)
        var = div->a;
      else
        div = nullptr;
      if (var.is<ir::VarNode>()) {
        if (const Analyzer::VarInfo *info = analyzer.info(ir::Var::from(var))) {
          const Expr &end = (term.coef > 0) == upper ? info->sym_max : info->sym_min;
          if (end.defined() && end.dtype() == s.dtype) {
            atom = div ? ir::Binary::make(div->op, end, div->b) : end;
            any = true;
          }
        }
      }
      if (!IntBound::of_dtype(s.dtype).contains(term.coef)) return b;
      acc = ir::Binary::make(BinaryOp::Add, acc,
                             ir::Binary::make(BinaryOp::Mul, atom, ir::make_int(s.dtype, term.coef)));
    }
    if (!any) continue;
    ++g_symbolic_depth;
    IntBound sb;
    try {
      sb = sum_bound(to_sum(simplify_expr(acc, analyzer)), analyzer);
    } catch (...) {
      --g_symbolic_depth;
      throw;
    }
    --g_symbolic_depth;
    if (upper) b.max = std::min(b.max, sb.max);
    else b.min = std::max(b.min, sb.min);
  }
  return b;
}

Expr simplify_expr(const Expr &e, const Analyzer &analyzer) {
  if (!e.defined()) return e;
  Simplifier s(analyzer);
  return s.mutate(e);
}

}  // namespace tessera::arith::detail
