//===- ReferenceProgram.cpp - The float64 reference and its error model ----===//
//
// make_reference_program (Verify.h): a mutator that widens every
// floating-point buffer, variable and operation to float64 (W), and, next to
// each floating-point store, stores the variance of the rounding error that
// evaluating the original expression in its own dtypes would carry (V) and
// the sum of the squares of the terms the value adds up (Q: for a sum, the
// squared magnitude a typical partial sum of those terms reaches in any
// order; for anything else the value squared). Every floating-point buffer B
// gets float64 companions B_variance and B_squares of the same shape; a load
// of B[i] reads the value from the widened B and V and Q from the companions.
// Integer computation is left as it is.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/Opaque.h"
#include "tessera/runtime/Verify.h"
#include "tessera/support/Error.h"

#include "InterchangeReductions.h"

namespace tessera::runtime {

namespace {

using namespace ir;

const DataType kF64 = DataType::float64();

/// Unit roundoff: half the distance from 1 to the next number.
double unit_roundoff(DataType t) {
  if (t.is_bfloat16()) return std::ldexp(1.0, -8);
  switch (t.bits()) {
    case 16: return std::ldexp(1.0, -11);
    case 32: return std::ldexp(1.0, -24);
    default: return std::ldexp(1.0, -53);
  }
}

/// The smallest positive normal number: below it rounding is absolute, not relative.
double min_normal(DataType t) {
  if (t.is_bfloat16()) return std::ldexp(1.0, -126);
  switch (t.bits()) {
    case 16: return std::ldexp(1.0, -14);
    case 32: return std::ldexp(1.0, -126);
    default: return std::ldexp(1.0, -1022);
  }
}

Expr f64(double v) { return FloatImm::make(kF64, v); }

/// Error terms of exact values are zero constants; these builders drop them,
/// so that the reference of a product of two inputs computes one rounding
/// term, not three (0 * x is 0 here whatever x is: an exact value carries no
/// error however large its partner).
bool is_zero(const Expr &e) {
  const auto *c = e.as<FloatImm>();
  return c && c->value == 0;
}
Expr plus(const Expr &a, const Expr &b) { return is_zero(a) ? b : is_zero(b) ? a : a + b; }
Expr times(const Expr &a, const Expr &b) { return is_zero(a) || is_zero(b) ? f64(0) : a * b; }
Expr over(const Expr &a, const Expr &b) { return is_zero(a) ? f64(0) : a / b; }
Expr square(const Expr &e) { return e * e; }
Expr absolute(const Expr &e) { return Call::make(kF64, Intrinsic::Abs, {e}); }
Expr math(Intrinsic op, const Expr &e) { return Call::make(kF64, op, {e}); }

/// The variance that one rounding of `value` (float64) to dtype t adds, with
/// the operation's error taken as c units of roundoff.
Expr rounding(DataType t, const Expr &value, double c) {
  double u = c * unit_roundoff(t);
  return square(f64(u) * max(absolute(value), f64(min_normal(t))));
}

/// The same from the square of the magnitude (no square root, no abs):
/// (c u)^2 max(magnitude^2, min_normal^2).
Expr rounding_of_square(DataType t, const Expr &magnitude_squared, double c) {
  double u = c * unit_roundoff(t), m = min_normal(t);
  return f64(u * u) * max(magnitude_squared, f64(m * m));
}

/// A float variable's float64 stand-ins in the reference program.
struct WideVar {
  Var value;
  Expr variance;  // a variable bound next to `value`, or 0 for parameters
  Expr squares;   // likewise, or value^2 for parameters
};

class ReferenceBuilder : public IRMutator {
 public:
  /// The widened counterpart of a floating-point buffer (made on first use).
  Buffer wide(const Buffer &b) {
    auto it = wide_.find(b);
    if (it != wide_.end()) return it->second;
    Buffer w = Buffer::make(b.name(), kF64, b.shape(), b.scope(), b->strides);
    wide_.emplace(b, w);
    return w;
  }
  /// Its companions: the variance and the sum of squared terms of each element.
  Buffer variance_of(const Buffer &b) { return companion(variance_, b, "_variance"); }
  Buffer squares_of(const Buffer &b) { return companion(squares_, b, "_squares"); }
  void bind_param(const Var &v) {
    if (!v.dtype().is_float()) return;
    Var w(v.name(), kF64);
    vars_[v.get()] = {w, f64(0), square(w)};
  }
  /// `b`, a parameter the function only reads: its elements are exact
  /// values, each a term of its own (variance 0, squares the value squared:
  /// what reference_args gives its companions), so loads of it read neither
  /// companion.
  void mark_input(const Buffer &b) { inputs_.insert(b.get()); }
  Var wide_param(const Var &v) const {
    auto it = vars_.find(v.get());
    return it == vars_.end() ? v : it->second.value;
  }

  Buffer mutate_buffer(const Buffer &b) override {
    check_scalar(b->dtype, "buffer " + b.name());
    return b.dtype().is_float() ? wide(b) : b;
  }

  // ---- W: the widened value ------------------------------------------------
  Expr visit_(const FloatImm *op, const Expr &self) override {
    check_scalar(op->dtype, "a constant");
    return f64(op->value);  // already rounded to its dtype
  }
  Expr visit_(const VarNode *op, const Expr &self) override {
    auto it = vars_.find(op);
    return it == vars_.end() ? self : it->second.value;
  }
  Expr visit_(const Cast *op, const Expr &self) override {
    check_scalar(op->dtype, "a cast");
    Expr a = mutate(op->value);
    DataType to = op->dtype;
    if (!to.is_float()) return Cast::make(to, a);  // float -> int truncates the widened value
    if (to.bits() == 64) return Cast::make(kF64, a);
    // A cast to a narrower float keeps its rounding: through `to`, back to float64.
    return Cast::make(kF64, Cast::make(to, a));
  }
  Expr visit_(const Call *op, const Expr &self) override {
    check_scalar(op->dtype, std::string("a call to ") + intrinsic_name(op->op));
    if (is_async_or_warp_statement(op->op) || op->op == Intrinsic::ShflXor || op->op == Intrinsic::SyncThreads)
      throw UserError(std::string("the reference of a program cannot be computed through T.") +
                      intrinsic_name(op->op) + ": give the unscheduled program");
    switch (op->op) {
      case Intrinsic::MaxValue:
      case Intrinsic::MinValue:
        return op->dtype.is_float() ? Cast::make(kF64, self) : self;
      case Intrinsic::Reinterpret: {
        // The bits of the value in its own dtype.
        Expr a = op->args[0];
        Expr arg = a.dtype().is_float() ? Cast::make(a.dtype(), mutate(a)) : mutate(a);
        Expr r = Call::make(op->dtype, Intrinsic::Reinterpret, {arg});
        return op->dtype.is_float() ? Cast::make(kF64, r) : r;
      }
      default: break;
    }
    std::vector<Expr> args;
    for (const Expr &a : op->args) args.push_back(mutate(a));
    return Call::make(op->dtype.is_float() ? kF64 : op->dtype, op->op, std::move(args));
  }
  Expr visit_(const Let *op, const Expr &self) override {
    if (!op->var.dtype().is_float()) return IRMutator::visit_(op, self);
    Var w(op->var.name(), kF64);
    Expr value = mutate(op->value);
    Scoped bind(vars_, op->var.get(), {w, Expr(), Expr()});
    return Let::make(w, value, mutate(op->body));
  }

  // ---- V: the variance of the rounding error ---------------------------------
  Expr variance(const Expr &e) {
    DataType t = e.dtype();
    if (!t.is_float()) return f64(0);
    if (e.as<FloatImm>()) return f64(0);
    if (const auto *v = e.as<VarNode>()) {
      auto it = vars_.find(v);
      if (it == vars_.end() || !it->second.variance.defined())
        throw InternalError("reference: no variance for variable " + v->name);
      return it->second.variance;
    }
    if (const auto *l = e.as<Load>()) {
      if (inputs_.count(l->buffer.get())) return f64(0);  // an argument is exact
      std::vector<Expr> idx;
      for (const Expr &i : l->indices) idx.push_back(mutate(i));
      Expr v = Load::make(variance_of(l->buffer), std::move(idx));
      // In a reduction's update, an element read at the same index on every
      // step (D += A[k] + C[i]: C[i]) adds the same error each time: the
      // errors are not independent, and over the steps they add up linearly,
      // so each step counts its variance times the number of steps.
      if (reduction_ && !reduction_->writes.count(l->buffer.get()) && !uses_any(l->indices, reduction_->vars))
        v = v * reduction_->steps;
      return v;
    }
    if (const auto *c = e.as<Cast>()) {
      DataType from = c->value.dtype();
      if (!from.is_float()) return f64(0);  // an integer converts exactly, or rounds as the reference does
      Expr va = variance(c->value);
      // The reference rounds as the cast does; only an input that carries an
      // error can round to a neighbour.
      if (unit_roundoff(t) > unit_roundoff(from) && !is_zero(va))
        va = Select::make(eq(va, f64(0)), f64(0), va + rounding(t, mutate(e), 1));
      return va;
    }
    if (const auto *s = e.as<Select>())
      return Select::make(mutate(s->cond), variance(s->true_value), variance(s->false_value));
    if (const auto *u = e.as<Unary>()) return variance(u->a);  // negation
    if (const auto *l = e.as<Let>())
      return with_let(*l, [&] { return variance(l->body); });
    if (const auto *b = e.as<Binary>()) return binary_variance(*b, e);
    if (const auto *c = e.as<Call>()) return call_variance(*c, e);
    throw InternalError("reference: no error model for " + std::string(node_kind_name(e->kind)));
  }

  // ---- Q: the sum of the squares of the terms a value adds up ---------------------
  Expr squares(const Expr &e) {
    if (const auto *v = e.as<VarNode>()) {
      auto it = vars_.find(v);
      if (it != vars_.end() && it->second.squares.defined()) return it->second.squares;
    }
    if (const auto *l = e.as<Load>(); l && l->buffer.dtype().is_float()) {
      if (inputs_.count(l->buffer.get())) return square(mutate(e));  // one term: itself
      std::vector<Expr> idx;
      for (const Expr &i : l->indices) idx.push_back(mutate(i));
      return Load::make(squares_of(l->buffer), std::move(idx));
    }
    if (const auto *b = e.as<Binary>(); b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub))
      return squares(b->a) + squares(b->b);
    if (const auto *u = e.as<Unary>(); u && u->op == UnaryOp::Neg) return squares(u->a);
    if (const auto *c = e.as<Cast>(); c && c->value.dtype().is_float()) return squares(c->value);
    if (const auto *s = e.as<Select>())
      return Select::make(mutate(s->cond), squares(s->true_value), squares(s->false_value));
    if (const auto *c = e.as<Call>(); c && c->op == Intrinsic::IfThenElse)
      return Call::make(kF64, Intrinsic::IfThenElse, {mutate(c->args[0]), squares(c->args[1]), squares(c->args[2])});
    if (const auto *l = e.as<Let>()) return with_let(*l, [&] { return squares(l->body); });
    return square(mutate(e));  // a term of its own
  }

  // ---- statements --------------------------------------------------------------
  Stmt visit_(const Store *op, const Stmt &self) override {
    std::vector<Expr> idx;
    for (const Expr &i : op->indices) idx.push_back(mutate(i));
    if (!op->buffer.dtype().is_float()) return Store::make(op->buffer, mutate(op->value), idx);
    Var w("ref_value", kF64), v("ref_variance", kF64), q("ref_squares", kF64);
    Stmt stores = Seq::make({Store::make(wide(op->buffer), w, idx), Store::make(variance_of(op->buffer), v, idx),
                             Store::make(squares_of(op->buffer), q, idx)});
    // Sequenced (squares, variance, value): as arguments of one call their
    // order would be the compiler's (gcc and clang differ), and the builder's
    // state (the companions made on first use) follows it.
    Expr sq = squares(op->value);
    Expr var = variance(op->value);
    Expr value = mutate(op->value);
    return LetStmt::make(w, value, LetStmt::make(v, var, LetStmt::make(q, sq, stores)));
  }
  Stmt visit_(const LetStmt *op, const Stmt &self) override {
    if (!op->var.dtype().is_float()) return IRMutator::visit_(op, self);
    Var w(op->var.name(), kF64), ev(op->var.name() + "_variance", kF64), eq(op->var.name() + "_squares", kF64);
    Expr value = mutate(op->value), var = variance(op->value), sq = squares(op->value);
    Scoped bind(vars_, op->var.get(), {w, ev, eq});
    return LetStmt::make(w, value, LetStmt::make(ev, var, LetStmt::make(eq, sq, mutate(op->body))));
  }
  Stmt visit_(const Block *op, const Stmt &self) override {
    // A reduction block: its reduce iter vars, their number of steps, and
    // the buffers it accumulates into (see variance(Load)).
    std::optional<Reduction> outer = reduction_;
    reduction_.reset();
    Reduction r{{}, f64(1), {}};
    for (const IterVar &iv : op->iter_vars)
      if (iv.kind == IterKind::Reduce) {
        r.vars.insert(iv.var.get());
        r.steps = r.steps * cast(kF64, iv.dom.extent);
      }
    for (const BufferRegion &w : op->writes) r.writes.insert(w.buffer.get());
    if (!r.vars.empty()) reduction_ = std::move(r);
    Stmt s = IRMutator::visit_(op, self);
    reduction_ = std::move(outer);
    const auto *b = s.as<Block>();
    // Every region and allocation of a float buffer gets its variance
    // companion, but an input's: it has none (mark_input), and a region of a
    // buffer that is neither a parameter nor allocated is ill-formed (the
    // schedule's IR check, on in builds without NDEBUG, found it).
    auto companions = [&](const std::vector<BufferRegion> &original, std::vector<BufferRegion> out) {
      for (const BufferRegion &r : original) {
        if (!r.buffer.dtype().is_float() || inputs_.count(r.buffer.get())) continue;
        BufferRegion c = mutate_region(r);
        c.buffer = variance_of(r.buffer);
        out.push_back(c);
        c.buffer = squares_of(r.buffer);
        out.push_back(c);
      }
      return out;
    };
    std::vector<Buffer> allocs = b->allocs;
    for (const Buffer &a : op->allocs)
      if (a.dtype().is_float()) {
        allocs.push_back(variance_of(a));
        allocs.push_back(squares_of(a));
      }
    return Block::make(b->name, b->iter_vars, b->bindings, b->predicate, companions(op->reads, b->reads),
                       companions(op->writes, b->writes), allocs, b->init, b->body, b->annotations);
  }

 private:
  struct Reduction {
    std::unordered_set<const VarNode *> vars;
    Expr steps;
    std::unordered_set<const BufferNode *> writes;
  };
  /// The reduction block being widened, if any.
  std::optional<Reduction> reduction_;

  static bool uses_any(const std::vector<Expr> &indices, const std::unordered_set<const VarNode *> &vars) {
    bool found = false;
    for (const Expr &i : indices)
      pre_order_visit(Evaluate::make(i), [&](const Expr &x) {
        if (const auto *v = x.as<VarNode>(); v && vars.count(v)) found = true;
      }, nullptr);
    return found;
  }

  /// Binds a variable for the extent of a C++ scope.
  struct Scoped {
    Scoped(std::unordered_map<const VarNode *, WideVar> &m, const VarNode *k, WideVar v) : m_(m), k_(k) {
      auto it = m_.find(k);
      if (it != m_.end()) saved_ = it->second;
      m_[k] = std::move(v);
    }
    ~Scoped() {
      if (saved_) m_[k_] = *saved_;
      else m_.erase(k_);
    }
    std::unordered_map<const VarNode *, WideVar> &m_;
    const VarNode *k_;
    std::optional<WideVar> saved_;
  };

  Buffer companion(std::unordered_map<Buffer, Buffer, BufferHash, BufferEq> &m, const Buffer &b,
                   const std::string &suffix) {
    auto it = m.find(b);
    if (it != m.end()) return it->second;
    Buffer c = Buffer::make(b.name() + suffix, kF64, b.shape(), b.scope(), b->strides);
    m.emplace(b, c);
    return c;
  }

  /// `body()` (a variance or squares expression) inside the float64 bindings
  /// of the Let's variable: value, variance and squares.
  template <typename Body>
  Expr with_let(const Let &l, Body body) {
    if (!l.var.dtype().is_float()) {
      Expr value = mutate(l.value);
      return Let::make(l.var, value, body());
    }
    Var w(l.var.name(), kF64), ev(l.var.name() + "_variance", kF64), eq(l.var.name() + "_squares", kF64);
    Expr value = mutate(l.value), var = variance(l.value), sq = squares(l.value);
    Scoped bind(vars_, l.var.get(), {w, ev, eq});
    return Let::make(w, value, Let::make(ev, var, Let::make(eq, sq, body())));
  }

  void check_scalar(DataType t, const std::string &what) const {
    if (t.lanes() != 1)
      throw UserError("the reference of a program cannot be computed through " + what + " of vector type " + t.str() +
                      ": give the unscheduled program");
  }

  Expr binary_variance(const Binary &b, const Expr &e) {
    DataType t = e.dtype();
    Expr va = variance(b.a), vb = variance(b.b);
    Expr wa = mutate(b.a), wb = mutate(b.b), w = mutate(e);
    switch (b.op) {
      // A sum's rounding is counted at the larger of its operands' magnitudes
      // and the root of the sum of squares of the terms they hold: the size
      // a partial sum of those terms typically reaches in ANY order (every
      // GPU reduction sums in another order than the program's).
      case BinaryOp::Add:
      case BinaryOp::Sub: {
        // (Squared: max(a^2, b^2, Q), the same magnitude without a square root.)
        Expr scale_squared = max(max(square(wa), square(wb)), squares(b.a) + squares(b.b));
        return plus(plus(va, vb), rounding_of_square(t, scale_squared, 1));
      }
      case BinaryOp::Mul: return plus(plus(times(square(wb), va), times(square(wa), vb)), rounding(t, w, 1));
      case BinaryOp::Div: return plus(over(plus(va, times(square(w), vb)), square(wb)), rounding(t, w, 1));
      case BinaryOp::Min:
      case BinaryOp::Max: return is_zero(va) && is_zero(vb) ? f64(0) : max(va, vb);  // the chosen operand's error
      case BinaryOp::Mod:
      case BinaryOp::FloorMod: return plus(plus(va, vb), rounding(t, w, 1));
      default: return f64(0);  // FloorDiv and the rest give whole numbers
    }
  }

  Expr call_variance(const Call &c, const Expr &e) {
    DataType t = e.dtype();
    auto arg = [&](size_t i) { return mutate(c.args[i]); };
    auto va = [&](size_t i) { return variance(c.args[i]); };
    Expr w = mutate(e);
    const double ln2 = std::log(2.0), ln10 = std::log(10.0);
    switch (c.op) {
      case Intrinsic::Exp: return plus(times(square(w), va(0)), rounding(t, w, 4));
      case Intrinsic::Exp2: return plus(times(square(w * f64(ln2)), va(0)), rounding(t, w, 4));
      case Intrinsic::Exp10: return plus(times(square(w * f64(ln10)), va(0)), rounding(t, w, 4));
      case Intrinsic::Log: return plus(over(va(0), square(arg(0))), rounding(t, w, 4));
      case Intrinsic::Log2: return plus(over(va(0), square(arg(0) * f64(ln2))), rounding(t, w, 4));
      case Intrinsic::Log10: return plus(over(va(0), square(arg(0) * f64(ln10))), rounding(t, w, 4));
      case Intrinsic::Log1p: return plus(over(va(0), square(f64(1) + arg(0))), rounding(t, w, 4));
      case Intrinsic::Sqrt:
        return plus(over(va(0), f64(4) * max(absolute(arg(0)), f64(1e-300))), rounding(t, w, 1));
      case Intrinsic::Rsqrt: return plus(times(square(f64(0.5) * w * w * w), va(0)), rounding(t, w, 4));
      case Intrinsic::Sigmoid: return plus(times(square(w * (f64(1) - w)), va(0)), rounding(t, w, 8));
      case Intrinsic::Tanh: return plus(times(square(f64(1) - w * w), va(0)), rounding(t, w, 4));
      case Intrinsic::Sin: return plus(times(square(math(Intrinsic::Cos, arg(0))), va(0)), rounding(t, w, 4));
      case Intrinsic::Cos: return plus(times(square(math(Intrinsic::Sin, arg(0))), va(0)), rounding(t, w, 4));
      case Intrinsic::Erf: {
        Expr d = f64(2 / std::sqrt(M_PI)) * math(Intrinsic::Exp, -(arg(0) * arg(0)));
        return plus(times(square(d), va(0)), rounding(t, w, 4));
      }
      // The inverse and hyperbolic functions: the squared derivative times the
      // argument's variance, and four units of roundoff for the function.
      case Intrinsic::Tan: return plus(times(square(f64(1) + w * w), va(0)), rounding(t, w, 4));
      case Intrinsic::Asin:
      case Intrinsic::Acos: return plus(over(va(0), max(f64(1) - arg(0) * arg(0), f64(1e-300))), rounding(t, w, 4));
      case Intrinsic::Atan: return plus(over(va(0), square(f64(1) + arg(0) * arg(0))), rounding(t, w, 4));
      case Intrinsic::Sinh: return plus(times(square(math(Intrinsic::Cosh, arg(0))), va(0)), rounding(t, w, 4));
      case Intrinsic::Cosh: return plus(times(square(math(Intrinsic::Sinh, arg(0))), va(0)), rounding(t, w, 4));
      case Intrinsic::Asinh: return plus(over(va(0), arg(0) * arg(0) + f64(1)), rounding(t, w, 4));
      case Intrinsic::Acosh: return plus(over(va(0), max(arg(0) * arg(0) - f64(1), f64(1e-300))), rounding(t, w, 4));
      case Intrinsic::Atanh:
        return plus(over(va(0), max(square(f64(1) - arg(0) * arg(0)), f64(1e-300))), rounding(t, w, 4));
      case Intrinsic::Atan2: {  // atan2(y, x): d/dy = x / r^2, d/dx = -y / r^2
        Expr y = arg(0), x = arg(1), r2 = max(y * y + x * x, f64(1e-300));
        return plus(plus(over(times(x * x, va(0)), r2 * r2), over(times(y * y, va(1)), r2 * r2)), rounding(t, w, 4));
      }
      case Intrinsic::Hypot: {  // d/dx = x / w, d/dy = y / w
        Expr x = arg(0), y = arg(1), w2 = max(w * w, f64(1e-300));
        return plus(plus(over(times(x * x, va(0)), w2), over(times(y * y, va(1)), w2)), rounding(t, w, 4));
      }
      case Intrinsic::Pow: {
        Expr a = arg(0), b = arg(1);
        Expr da = b * Call::make(kF64, Intrinsic::Pow, {a, b - f64(1)});
        Expr vb = va(1);
        // d/db a^b = a^b ln a, undefined for a <= 0: only counted when b carries an error.
        Expr db = Select::make(eq(vb, f64(0)), f64(0), square(w * math(Intrinsic::Log, absolute(a))) * vb);
        return square(da) * va(0) + db + rounding(t, w, 8);
      }
      case Intrinsic::Abs: return va(0);
      // As a narrowing cast: the reference rounds as the program does; only
      // an input that carries an error can round to a neighbour (11
      // significant bits: 2^13 float32 units of roundoff).
      case Intrinsic::RoundToTf32: {
        Expr v = va(0);
        return is_zero(v) ? v : Select::make(eq(v, f64(0)), f64(0), v + rounding(t, w, 8192));
      }
      case Intrinsic::IfThenElse:
        return Call::make(kF64, Intrinsic::IfThenElse, {mutate(c.args[0]), va(1), va(2)});
      default: return f64(0);  // floor, ceil, round, trunc, max_value, reinterpret: exact
    }
  }

  std::unordered_map<Buffer, Buffer, BufferHash, BufferEq> wide_, variance_, squares_;
  std::unordered_map<const VarNode *, WideVar> vars_;
  std::unordered_set<const BufferNode *> inputs_;
};

}  // namespace

ReferenceProgram make_reference_program(const PrimFunc &f) {
  check_no_opaque(f, "compute the reference of");
  ReferenceBuilder b;
  const std::vector<bool> written = written_params(f);
  for (size_t i = 0; i < f.params().size(); ++i) {
    const Var &p = f.params()[i];
    if (!f.buffer_of(p).defined()) b.bind_param(p);
    else if (!written[i]) b.mark_input(f.buffer_of(p));
  }
  std::vector<Var> params;
  std::vector<std::pair<Var, Buffer>> buffer_map;
  for (const Var &p : f.params()) {
    Buffer buf = f.buffer_of(p);
    if (!buf.defined()) {
      params.push_back(b.wide_param(p));
      continue;
    }
    Buffer w = b.mutate_buffer(buf);
    Var h = w.same_as(buf) ? p : Var(p.name(), p.dtype());
    params.push_back(h);
    buffer_map.push_back({h, w});
  }
  Stmt body = b.mutate(f.body());
  ReferenceProgram out;
  for (size_t i = 0; i < f.params().size(); ++i) {
    const Var &p = f.params()[i];
    Buffer buf = f.buffer_of(p);
    // A parameter the function only reads is exact (mark_input): its loads
    // read no companion, so it has none to pass.
    if (!buf.defined() || !buf.dtype().is_float() || !written[i]) {
      out.variance_param.push_back(-1);
      out.squares_param.push_back(-1);
      continue;
    }
    Var hv(p.name() + "_variance", p.dtype()), hq(p.name() + "_squares", p.dtype());
    out.variance_param.push_back(int(params.size()));
    params.push_back(hv);
    buffer_map.push_back({hv, b.variance_of(buf)});
    out.squares_param.push_back(int(params.size()));
    params.push_back(hq);
    buffer_map.push_back({hq, b.squares_of(buf)});
  }
  // Each output's terms in the program's order, the outputs of a reduction
  // interleaved (InterchangeReductions.h): the same bits, several times faster.
  out.func = detail::interchange_reductions(PrimFunc::make(f.name() + "_reference", params, buffer_map, body, f.attrs()));
  return out;
}

}  // namespace tessera::runtime
