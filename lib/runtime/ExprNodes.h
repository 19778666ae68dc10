//===- ExprNodes.h - Expression closures shared across files (private) ----===//
//
// The generic expression closures that both CompileExpr.cpp (operators, casts,
// loads) and CompileCall.cpp (intrinsic calls) build: constants and variables,
// unary and binary operators over a lambda, selects, float predicates.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

#include "Closures.h"
#include "Scalar.h"

namespace tessera::runtime::detail {

/// Wraps an int64 computed modulo 2^64 to a type's width and signedness.
struct Wrap {
  uint64_t mask = ~uint64_t{0};
  int sh = 0;
  bool sgn = true;
  bool is_bool = false;
  explicit Wrap(ir::DataType t) : sgn(t.is_int()), is_bool(t.is_bool()) {
    if (!is_bool && t.bits() < 64) {
      mask = (uint64_t{1} << t.bits()) - 1;
      sh = 64 - t.bits();
    }
  }
  int64_t operator()(uint64_t u) const {
    if (is_bool) return u != 0;
    if (sgn) return static_cast<int64_t>(u << sh) >> sh;
    return static_cast<int64_t>(u & mask);
  }
};

// ---- leaves -----------------------------------------------------------------

struct IConst final : IntExpr {
  int64_t v;
  explicit IConst(int64_t x) : v(x) {}
  int64_t eval(Frame &) const override { return v; }
};
struct IVar final : IntExpr {
  int slot;
  explicit IVar(int s) : slot(s) {}
  int64_t eval(Frame &f) const override { return f.iv[slot]; }
};
struct FConst final : FloatExpr {
  double v;
  explicit FConst(double x) : v(x) {}
  double eval(Frame &) const override { return v; }
};
struct FVar final : FloatExpr {
  int slot;
  explicit FVar(int s) : slot(s) {}
  double eval(Frame &f) const override { return f.fv[slot]; }
};

// ---- operators over a lambda --------------------------------------------------

template <typename Fn>
struct IUn final : IntExpr {
  IntPtr a;
  Fn fn;
  IUn(IntPtr x, Fn f) : a(std::move(x)), fn(f) {}
  int64_t eval(Frame &f) const override { return fn(a->eval(f)); }
};
template <typename Fn>
IntPtr iun(IntPtr a, Fn fn) {
  return std::make_unique<IUn<Fn>>(std::move(a), fn);
}

struct ISelect final : IntExpr {
  IntPtr c, t, e;
  ISelect(IntPtr x, IntPtr y, IntPtr z) : c(std::move(x)), t(std::move(y)), e(std::move(z)) {}
  int64_t eval(Frame &f) const override { return c->eval(f) ? t->eval(f) : e->eval(f); }
};

template <FK K, typename Fn>
struct FBin final : FloatExpr {
  FloatPtr a, b;
  Fn fn;
  FBin(FloatPtr x, FloatPtr y, Fn f) : a(std::move(x)), b(std::move(y)), fn(f) {}
  double eval(Frame &f) const override {
    using T = typename FloatOps<K>::T;
    return FloatOps<K>::fin(fn(static_cast<T>(a->eval(f)), static_cast<T>(b->eval(f))));
  }
};
template <typename Fn>
FloatPtr fbin(ir::DataType t, FloatPtr a, FloatPtr b, Fn fn) {
  return dispatch_fk(t, [&]<FK K>() -> FloatPtr { return std::make_unique<FBin<K, Fn>>(std::move(a), std::move(b), fn); });
}

template <FK K, typename Fn>
struct FUn final : FloatExpr {
  FloatPtr a;
  Fn fn;
  FUn(FloatPtr x, Fn f) : a(std::move(x)), fn(f) {}
  double eval(Frame &f) const override {
    using T = typename FloatOps<K>::T;
    return FloatOps<K>::fin(fn(static_cast<T>(a->eval(f))));
  }
};
template <typename Fn>
FloatPtr fun(ir::DataType t, FloatPtr a, Fn fn) {
  return dispatch_fk(t, [&]<FK K>() -> FloatPtr { return std::make_unique<FUn<K, Fn>>(std::move(a), fn); });
}

/// A float-to-int predicate (isnan, ...).
template <typename Fn>
struct FPred final : IntExpr {
  FloatPtr a;
  Fn fn;
  FPred(FloatPtr x, Fn f) : a(std::move(x)), fn(f) {}
  int64_t eval(Frame &f) const override { return fn(a->eval(f)) ? 1 : 0; }
};

struct FSelect final : FloatExpr {
  IntPtr c;
  FloatPtr t, e;
  FSelect(IntPtr x, FloatPtr y, FloatPtr z) : c(std::move(x)), t(std::move(y)), e(std::move(z)) {}
  double eval(Frame &f) const override { return c->eval(f) ? t->eval(f) : e->eval(f); }
};

// ---- calls (CompileCall.cpp) ----------------------------------------------------

/// An intrinsic call of integer or bool type (if_then_else, max_value, isnan, abs, ...).
IntPtr compile_int_call(Compiler &cc, const ir::Call &c);
/// An intrinsic call of float type (if_then_else, max_value, reinterpret, exp, pow, ...).
FloatPtr compile_float_call(Compiler &cc, const ir::Call &c);

}  // namespace tessera::runtime::detail
