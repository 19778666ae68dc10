//===- lib/arith/IntSet.cpp - Symbolic intervals of index expressions -----===//
//
// relax() computes symbolic inclusive ends [lo, hi] bottom-up over the
// canonical sum of the expression: a term free of relaxed variables is
// exact, a relaxed variable contributes its domain's ends (scaled, swapped
// for a negative coefficient), and floordiv/floormod/min/max/select/cast
// combine the ends of their operands. Anything else falls back to the
// constant bound under the domains, then to the dtype's range.
//
//===----------------------------------------------------------------------===//
#include "tessera/arith/IntSet.h"

#include <optional>

#include "ArithUtil.h"
#include "CanonicalSum.h"
#include "tessera/ir/Op.h"
#include "tessera/support/Error.h"

namespace tessera::arith {

using ir::BinaryOp;
using ir::Expr;

namespace {

struct Ends {
  Expr lo, hi;  // inclusive
};

class Relaxer {
 public:
  Relaxer(const VarDomains &dom, const Analyzer &outer) : dom_(dom), outer_(outer), inner_(outer) {
    for (const auto &[v, r] : dom) inner_.bind(v, r);
  }

  bool is_relaxed(const ir::VarNode *v) const {
    for (const auto &d : dom_)
      if (d.first.get() == v) return true;
    return false;
  }
  bool mentions_relaxed(const Expr &e) const {
    return detail::uses_var(e, [this](const ir::VarNode *v) { return is_relaxed(v); });
  }

  std::optional<Ends> ends(const Expr &e) {
    if (!mentions_relaxed(e)) return Ends{e, e};
    DataType t = e.dtype();
    if (!t.is_int()) return std::nullopt;
    detail::LinearSum s = detail::to_sum(e);
    if (s.terms.size() == 1 && s.constant == 0 && s.terms[0].coef == 1) return atom_ends(s.terms[0].atom);
    Expr lo = ir::make_int(t, s.constant), hi = lo;
    for (const detail::SumTerm &term : s.terms) {
      auto te = atom_ends(term.atom);
      if (!te) return std::nullopt;
      Expr k = ir::make_int(t, term.coef);
      Expr a = ir::Binary::make(BinaryOp::Mul, te->lo, k), b = ir::Binary::make(BinaryOp::Mul, te->hi, k);
      if (term.coef < 0) std::swap(a, b);
      lo = ir::Binary::make(BinaryOp::Add, lo, a);
      hi = ir::Binary::make(BinaryOp::Add, hi, b);
    }
    return Ends{outer_.simplify(lo), outer_.simplify(hi)};
  }

 private:
  using DataType = ir::DataType;

  std::optional<Ends> atom_ends(const Expr &e) {
    if (!mentions_relaxed(e)) return Ends{e, e};
    if (const auto *v = e.as<ir::VarNode>()) {
      for (const auto &[var, r] : dom_)
        if (var.get() == v) {
          Expr lo = ir::cast(e.dtype(), r.min);
          return Ends{outer_.simplify(lo), outer_.simplify(lo + ir::cast(e.dtype(), r.extent) - 1)};
        }
    }
    if (const auto *b = e.as<ir::Binary>()) {
      auto kb = ir::as_const_int(b->b);
      bool floor_like = b->op == BinaryOp::FloorDiv || b->op == BinaryOp::FloorMod;
      bool trunc_like = b->op == BinaryOp::Div || b->op == BinaryOp::Mod;
      if (trunc_like && kb && *kb > 0 && inner_.const_bound(b->a).min >= 0) floor_like = true;
      if (floor_like && kb && *kb > 0) {
        auto x = ends(b->a);
        if (x) {
          Expr c = b->b;
          Expr qlo = outer_.simplify(ir::floordiv(x->lo, c)), qhi = outer_.simplify(ir::floordiv(x->hi, c));
          if (b->op == BinaryOp::FloorDiv || b->op == BinaryOp::Div) return Ends{qlo, qhi};
          // Within one block of c values the remainder is monotone.
          if (outer_.can_prove_equal(qlo, qhi))
            return Ends{outer_.simplify(ir::floormod(x->lo, c)), outer_.simplify(ir::floormod(x->hi, c))};
          return Ends{ir::make_int(e.dtype(), 0), ir::make_int(e.dtype(), *kb - 1)};
        }
      }
      if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) {
        auto x = ends(b->a), y = ends(b->b);
        if (x && y) {
          if (b->op == BinaryOp::Min)
            return Ends{outer_.simplify(ir::min(x->lo, y->lo)), outer_.simplify(ir::min(x->hi, y->hi))};
          return Ends{outer_.simplify(ir::max(x->lo, y->lo)), outer_.simplify(ir::max(x->hi, y->hi))};
        }
      }
    }
    if (const auto *s = e.as<ir::Select>()) {
      auto x = ends(s->true_value), y = ends(s->false_value);
      if (x && y) return Ends{outer_.simplify(ir::min(x->lo, y->lo)), outer_.simplify(ir::max(x->hi, y->hi))};
    }
    if (const auto *c = e.as<ir::Cast>()) {
      // A widening integer cast keeps the order of values.
      DataType from = c->value.dtype(), to = e.dtype();
      if (from.is_int() && to.is_int() && to.bits() >= from.bits()) {
        if (auto x = ends(c->value))
          return Ends{outer_.simplify(ir::cast(to, x->lo)), outer_.simplify(ir::cast(to, x->hi))};
      }
    }
    // Fallback: the constant bound with the domains bound.
    // A bound at the dtype's limits means "unknown" (and its extent would overflow).
    IntBound b = inner_.const_bound(e), limits = IntBound::of_dtype(e.dtype());
    if (b.min <= limits.min || b.max >= limits.max) return std::nullopt;
    return Ends{ir::make_int(e.dtype(), b.min), ir::make_int(e.dtype(), b.max)};
  }

  const VarDomains &dom_;
  const Analyzer &outer_;
  Analyzer inner_;
};

ir::Range from_ends(const Expr &lo, const Expr &hi, const Analyzer &ana) {
  return ir::Range{ana.simplify(lo), ana.simplify(hi - lo + 1)};
}

// [0, dtype max): every value a buffer index can validly take.
ir::Range all_indices(ir::DataType t) {
  IntBound b = IntBound::of_dtype(t);
  int64_t max = b.max == IntBound::kPosInf ? IntBound::kPosInf : b.max;
  return ir::Range{ir::make_int(t, 0), ir::make_int(t, max)};
}

}  // namespace

std::optional<ir::Range> try_relax(const Expr &e, const VarDomains &dom, const Analyzer &analyzer) {
  TESSERA_ICHECK(e.defined() && e.dtype().is_int()) << "relax: expected a signed integer expression";
  Relaxer relaxer(dom, analyzer);
  // Simplify under the domains first: (k1 // 32) with k1 in [0, 32) is 0.
  Analyzer inner = analyzer;
  for (const auto &[v, r] : dom) inner.bind(v, r);
  Expr s = inner.simplify(e);
  if (auto ends = relaxer.ends(s)) return from_ends(ends->lo, ends->hi, analyzer);
  return std::nullopt;
}

ir::Range relax(const Expr &e, const VarDomains &dom, const Analyzer &analyzer) {
  if (auto r = try_relax(e, dom, analyzer)) return *r;
  return all_indices(e.dtype());
}

std::vector<ir::Range> relax_region(const std::vector<Expr> &indices, const VarDomains &dom,
                                    const Analyzer &analyzer) {
  std::vector<ir::Range> out;
  out.reserve(indices.size());
  for (const Expr &i : indices) out.push_back(relax(i, dom, analyzer));
  return out;
}

ir::Range union_ranges(const std::vector<ir::Range> &ranges, const Analyzer &analyzer) {
  TESSERA_ICHECK(!ranges.empty()) << "union_ranges: no range";
  if (ranges.size() == 1) return {analyzer.simplify(ranges[0].min), analyzer.simplify(ranges[0].extent)};
  Expr lo = ranges[0].min, end = ranges[0].min + ranges[0].extent;
  for (size_t i = 1; i < ranges.size(); ++i) {
    lo = ir::min(lo, ranges[i].min);
    end = ir::max(end, ranges[i].min + ranges[i].extent);
  }
  lo = analyzer.simplify(lo);
  return ir::Range{lo, analyzer.simplify(analyzer.simplify(end) - lo)};
}

std::vector<ir::Range> union_regions(const std::vector<std::vector<ir::Range>> &regions,
                                     const Analyzer &analyzer) {
  TESSERA_ICHECK(!regions.empty()) << "union_regions: no region";
  std::vector<ir::Range> out;
  for (size_t d = 0; d < regions[0].size(); ++d) {
    std::vector<ir::Range> dim;
    for (const auto &r : regions) {
      TESSERA_ICHECK(r.size() == regions[0].size()) << "union_regions: regions of different rank";
      dim.push_back(r[d]);
    }
    out.push_back(union_ranges(dim, analyzer));
  }
  return out;
}

}  // namespace tessera::arith
