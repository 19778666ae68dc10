//===- lib/arith/ConstIntBound.cpp - Constant interval of an expression ---===//
//
// Interval arithmetic over the expression tree. Every rule over-approximates,
// so the result always contains every value. Signed arithmetic is assumed not
// to overflow (results are clamped to the dtype's range); an unsigned result
// that could wrap gives the dtype's whole range.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "ArithUtil.h"

namespace tessera::arith {

using ir::BinaryOp;
using ir::DataType;
using ir::Expr;

IntBound IntBound::of_dtype(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_int()) {
    if (t.bits() >= 64) return {};
    return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
  }
  if (t.is_uint()) {
    if (t.bits() >= 63) return {0, kPosInf};
    return {0, (int64_t{1} << t.bits()) - 1};
  }
  return {};
}

IntBound IntBound::union_with(const IntBound &o) const {
  return {std::min(min, o.min), std::max(max, o.max)};
}

IntBound IntBound::intersect(const IntBound &o) const {
  return {std::max(min, o.min), std::min(max, o.max)};
}

std::string IntBound::str() const {
  std::ostringstream os;
  os << "[";
  if (min == kNegInf) os << "-inf"; else os << min;
  os << ", ";
  if (max == kPosInf) os << "+inf"; else os << max;
  os << "]";
  return os.str();
}

namespace detail {
namespace {

bool is_inf(int64_t v) { return v == IntBound::kNegInf || v == IntBound::kPosInf; }

// floor(a / b) for an interval end `a` (maybe infinite) and finite b > 0.
int64_t end_floordiv(int64_t a, int64_t b) { return is_inf(a) ? a : floordiv64(a, b); }

class BoundEvaluator {
 public:
  explicit BoundEvaluator(const Analyzer &ana) : ana_(ana) {}

  IntBound eval(const Expr &e, int depth = 0) {
    DataType t = e.dtype();
    if (!t.is_int_like()) return IntBound::everything();
    IntBound r = eval_node(e, depth);
    IntBound range = IntBound::of_dtype(t);
    if (t.is_uint() && !(range.min <= r.min && r.max <= range.max)) return range;
    r = r.intersect(range);
    if (r.min > r.max) return range;  // contradictory facts: know nothing
    return r;
  }

 private:
  IntBound eval_node(const Expr &e, int depth) {
    if (depth > 64) return IntBound::everything();
    if (const auto *imm = e.as<ir::IntImm>()) return IntBound::constant(imm->value);
    if (e.is<ir::VarNode>()) return eval_var(e, depth);
    if (const auto *b = e.as<ir::Binary>()) return eval_binary(b, depth);
    if (const auto *u = e.as<ir::Unary>()) {
      IntBound a = eval(u->a, depth + 1);
      if (u->op == ir::UnaryOp::Neg) return {sat_neg(a.max), sat_neg(a.min)};
      if (u->op == ir::UnaryOp::Not) {
        if (a.is_const()) return IntBound::constant(a.min == 0);
        return {0, 1};
      }
      if (!is_inf(a.min) && !is_inf(a.max)) return {~a.max, ~a.min};
      return IntBound::everything();
    }
    if (const auto *s = e.as<ir::Select>()) {
      IntBound c = eval(s->cond, depth + 1);
      if (c.is_const()) return eval(c.min ? s->true_value : s->false_value, depth + 1);
      return eval(s->true_value, depth + 1).union_with(eval(s->false_value, depth + 1));
    }
    if (const auto *c = e.as<ir::Cast>()) {
      if (!c->value.dtype().is_int_like()) return IntBound::of_dtype(e.dtype());
      IntBound v = eval(c->value, depth + 1);
      if (e.dtype().is_bool()) return v.is_const() ? IntBound::constant(v.min != 0) : IntBound{0, 1};
      if (fits(v, e.dtype())) return v;
      return IntBound::of_dtype(e.dtype());
    }
    if (const auto *l = e.as<ir::Let>()) {
      IntBound vb = eval(l->value, depth + 1);
      lets_[l->var.get()] = vb;
      IntBound r = eval(l->body, depth + 1);
      lets_.erase(l->var.get());
      return r;
    }
    if (const auto *c = e.as<ir::Call>()) {
      if (c->op == ir::Intrinsic::IfThenElse && c->args.size() == 3)
        return eval(c->args[1], depth + 1).union_with(eval(c->args[2], depth + 1));
    }
    return IntBound::of_dtype(e.dtype());
  }

  IntBound eval_var(const Expr &e, int depth) {
    auto it = lets_.find(e.as<ir::VarNode>());
    if (it != lets_.end()) return it->second;
    const Analyzer::VarInfo *info = ana_.info(ir::Var::from(e));
    if (!info) return IntBound::of_dtype(e.dtype());
    IntBound r = info->bound;
    if (info->value.defined()) r = r.intersect(eval(info->value, depth + 1));
    return r;
  }

  IntBound eval_binary(const ir::Binary *b, int depth) {
    if (!b->a.dtype().is_int_like()) {
      // Float comparisons: some bool.
      return IntBound::of_dtype(b->dtype);
    }
    IntBound x = eval(b->a, depth + 1), y = eval(b->b, depth + 1);
    switch (b->op) {
      case BinaryOp::Add: return {sat_add(x.min, y.min), sat_add(x.max, y.max)};
      case BinaryOp::Sub: return {sat_add(x.min, sat_neg(y.max)), sat_add(x.max, sat_neg(y.min))};
      case BinaryOp::Mul: {
        int64_t c[4] = {sat_mul(x.min, y.min), sat_mul(x.min, y.max), sat_mul(x.max, y.min),
                        sat_mul(x.max, y.max)};
        return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      }
      case BinaryOp::Div:
      case BinaryOp::FloorDiv: {
        bool trunc = b->op == BinaryOp::Div;
        if (trunc && x.min < 0) {
          // Truncating division by a positive constant is monotone too.
          if (y.is_const() && y.min > 0 && !is_inf(x.min) && !is_inf(x.max))
            return {x.min / y.min, x.max / y.min};
          return IntBound::everything();
        }
        if (y.min > 0 && !is_inf(y.min)) {
          // Monotone in x; for x >= 0 the largest divisor gives the smallest quotient.
          int64_t lo = x.min >= 0 ? (is_inf(y.max) ? 0 : end_floordiv(x.min, y.max))
                                  : end_floordiv(x.min, y.min);
          int64_t hi = x.max >= 0 ? end_floordiv(x.max, y.min)
                                  : (is_inf(y.max) ? -1 : end_floordiv(x.max, y.max));
          return {lo, hi};
        }
        if (y.is_const() && y.min < 0 && !trunc)
          return {is_inf(x.max) ? sat_neg(x.max) : floordiv64(x.max, y.min),
                  is_inf(x.min) ? sat_neg(x.min) : floordiv64(x.min, y.min)};
        return IntBound::everything();
      }
      case BinaryOp::Mod:
      case BinaryOp::FloorMod: {
        bool trunc = b->op == BinaryOp::Mod;
        if (y.min <= 0) return IntBound::everything();
        if (trunc && x.min < 0) {
          if (is_inf(y.max)) return IntBound::everything();
          return {x.max <= 0 ? -(y.max - 1) : -(y.max - 1), x.max <= 0 ? 0 : y.max - 1};
        }
        if (y.is_const() && !is_inf(x.min) && !is_inf(x.max) &&
            floordiv64(x.min, y.min) == floordiv64(x.max, y.min)) {
          int64_t k = floordiv64(x.min, y.min) * y.min;
          return {x.min - k, x.max - k};
        }
        int64_t hi = is_inf(y.max) ? IntBound::kPosInf : y.max - 1;
        if (x.min >= 0) hi = std::min(hi, x.max);
        return {0, hi};
      }
      case BinaryOp::Min: return {std::min(x.min, y.min), std::min(x.max, y.max)};
      case BinaryOp::Max: return {std::max(x.min, y.min), std::max(x.max, y.max)};
      case BinaryOp::EQ:
        if (x.is_const() && y.is_const()) return IntBound::constant(x.min == y.min);
        if (x.max < y.min || y.max < x.min) return IntBound::constant(0);
        return {0, 1};
      case BinaryOp::NE:
        if (x.is_const() && y.is_const()) return IntBound::constant(x.min != y.min);
        if (x.max < y.min || y.max < x.min) return IntBound::constant(1);
        return {0, 1};
      case BinaryOp::LT:
        if (x.max < y.min) return IntBound::constant(1);
        if (x.min >= y.max) return IntBound::constant(0);
        return {0, 1};
      case BinaryOp::LE:
        if (x.max <= y.min) return IntBound::constant(1);
        if (x.min > y.max) return IntBound::constant(0);
        return {0, 1};
      case BinaryOp::GT:
        if (x.min > y.max) return IntBound::constant(1);
        if (x.max <= y.min) return IntBound::constant(0);
        return {0, 1};
      case BinaryOp::GE:
        if (x.min >= y.max) return IntBound::constant(1);
        if (x.max < y.min) return IntBound::constant(0);
        return {0, 1};
      case BinaryOp::And:
        if (x.max == 0 || y.max == 0) return IntBound::constant(0);
        if (x.min >= 1 && y.min >= 1) return IntBound::constant(1);
        return {0, 1};
      case BinaryOp::Or:
        if (x.min >= 1 || y.min >= 1) return IntBound::constant(1);
        if (x.max == 0 && y.max == 0) return IntBound::constant(0);
        return {0, 1};
      case BinaryOp::BitAnd:
        if (x.min >= 0 && y.min >= 0) return {0, std::min(x.max, y.max)};
        if (x.min >= 0) return {0, x.max};
        if (y.min >= 0) return {0, y.max};
        return IntBound::of_dtype(b->dtype);
      case BinaryOp::Shr:
        if (x.min >= 0 && y.is_const() && y.min >= 0 && y.min < 63)
          return {x.min >> y.min, is_inf(x.max) ? x.max : x.max >> y.min};
        return IntBound::of_dtype(b->dtype);
      case BinaryOp::Shl:
        if (y.is_const() && y.min >= 0 && y.min < 62)
          return {sat_mul(x.min, int64_t{1} << y.min), sat_mul(x.max, int64_t{1} << y.min)};
        return IntBound::of_dtype(b->dtype);
      default: return IntBound::of_dtype(b->dtype);
    }
  }

  const Analyzer &ana_;
  std::unordered_map<const ir::VarNode *, IntBound> lets_;
};

}  // namespace

IntBound eval_bound(const Expr &e, const Analyzer &analyzer) {
  BoundEvaluator ev(analyzer);
  return ev.eval(e);
}

}  // namespace detail
}  // namespace tessera::arith
