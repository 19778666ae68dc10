//===- CompileCall.cpp - Intrinsic calls to closures -----------------------===//
//
// Every ir::Call of a scalar type: the selects and type extremes, the float
// predicates (isnan, ...), reinterpret between bit patterns, and the float
// math functions, each computed in FloatOps<K>::T and rounded to the type.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <limits>

#include "Exp.h"
#include "ExprNodes.h"

namespace tessera::runtime::detail {

using ir::DataType;
using ir::Expr;
using ir::Intrinsic;

namespace {

[[noreturn]] void throw_cross_lane(const ir::Call &c, const Compiler &cc) {
  throw InterpretError(std::string("intrinsic '") + ir::intrinsic_name(c.op) + "' in block '" + cc.block() +
                       "' exchanges values between GPU threads; the interpreter runs one thread at a time");
}

[[noreturn]] void throw_bad_intrinsic(const ir::Call &c, const Compiler &cc) {
  throw InterpretError(std::string("intrinsic '") + ir::intrinsic_name(c.op) + "' cannot produce " + c.dtype.str() +
                       " in block '" + cc.block() + "'");
}

// ---- reinterpret ------------------------------------------------------------

/// The bit pattern of a float value of type `t` (zero-extended to 64 bits).
uint64_t float_bits(DataType t, double v) {
  switch (float_kind(t)) {
    case FK::F16: return float_to_half_bits(static_cast<float>(v));
    case FK::BF16: return float_to_bfloat16_bits(static_cast<float>(v));
    case FK::F32: {
      float x = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &x, 4);
      return u;
    }
    default: {
      uint64_t u;
      std::memcpy(&u, &v, 8);
      return u;
    }
  }
}

double bits_float(DataType t, uint64_t u) {
  switch (float_kind(t)) {
    case FK::F16: return half_bits_to_float(static_cast<uint16_t>(u));
    case FK::BF16: return bfloat16_bits_to_float(static_cast<uint16_t>(u));
    case FK::F32: {
      uint32_t w = static_cast<uint32_t>(u);
      float x;
      std::memcpy(&x, &w, 4);
      return x;
    }
    default: {
      double x;
      std::memcpy(&x, &u, 8);
      return x;
    }
  }
}

struct ReinterpretFI final : IntExpr {
  FloatPtr a;
  DataType from;
  Wrap w;
  ReinterpretFI(FloatPtr x, DataType f, DataType t) : a(std::move(x)), from(f), w(t) {}
  int64_t eval(Frame &f) const override { return w(float_bits(from, a->eval(f))); }
};
struct ReinterpretIF final : FloatExpr {
  IntPtr a;
  DataType to;
  ReinterpretIF(IntPtr x, DataType t) : a(std::move(x)), to(t) {}
  double eval(Frame &f) const override { return bits_float(to, static_cast<uint64_t>(a->eval(f))); }
};
struct ReinterpretFF final : FloatExpr {
  FloatPtr a;
  DataType from, to;
  ReinterpretFF(FloatPtr x, DataType f, DataType t) : a(std::move(x)), from(f), to(t) {}
  double eval(Frame &f) const override { return bits_float(to, float_bits(from, a->eval(f))); }
};

// ---- float math ---------------------------------------------------------------

FloatPtr compile_float_math(Compiler &cc, const ir::Call &c) {
  DataType t = c.dtype;
  auto arg = [&](int i) { return cc.compile_float(c.args[i]); };
  switch (c.op) {
#define TESSERA_UNARY_MATH(Name, name, expr) \
  case Intrinsic::Name: return fun(t, arg(0), [](auto x) { return expr; });
#include "UnaryMath.def"
    case Intrinsic::Pow: return fbin(t, arg(0), arg(1), [](auto x, auto y) { return std::pow(x, y); });
    case Intrinsic::Atan2: return fbin(t, arg(0), arg(1), [](auto y, auto x) { return std::atan2(y, x); });
    case Intrinsic::Hypot: return fbin(t, arg(0), arg(1), [](auto x, auto y) { return std::hypot(x, y); });
    default: throw_bad_intrinsic(c, cc);
  }
}


int64_t int_extreme(DataType t, bool max) {
  if (t.is_bool()) return max ? 1 : 0;
  if (t.is_uint()) return max ? wrap_int(t, -1) : 0;
  if (t.bits() >= 64) return max ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  int64_t m = (int64_t{1} << (t.bits() - 1));
  return max ? m - 1 : -m;
}

}  // namespace

double float_extreme(DataType t, bool max) {
  double v;
  switch (float_kind(t)) {
    case FK::F16: v = 65504.0; break;
    case FK::BF16: v = bfloat16_bits_to_float(0x7f7f); break;
    case FK::F32: v = std::numeric_limits<float>::max(); break;
    default: v = std::numeric_limits<double>::max();
  }
  return max ? v : -v;
}

IntPtr compile_int_call(Compiler &cc, const ir::Call &c) {
  DataType t = c.dtype;
  if (ir::is_async_or_warp_statement(c.op))
    throw InterpretError(std::string("T.") + ir::intrinsic_name(c.op) + " in block '" + cc.block() +
                         "' is a statement (T.evaluate), not a value");
  switch (c.op) {
    case Intrinsic::IfThenElse:
      return std::make_unique<ISelect>(cc.compile_int(c.args[0]), cc.compile_int(c.args[1]), cc.compile_int(c.args[2]));
    case Intrinsic::MaxValue: return std::make_unique<IConst>(int_extreme(t, true));
    case Intrinsic::MinValue: return std::make_unique<IConst>(int_extreme(t, false));
    // A thread-block barrier: the interpreter runs one thread at a time.
    case Intrinsic::SyncThreads: return std::make_unique<IConst>(0);
    case Intrinsic::ShflXor: throw_cross_lane(c, cc);
    case Intrinsic::Assume: {
      // The program's promise, checked: a false assumption is the input's fault.
      std::string what = assume_failed_message(cc.block());
      return iun(cc.compile_int(c.args[0]), [what](int64_t v) -> int64_t {
        if (!v) throw InterpretError(what);
        return 1;
      });
    }
    case Intrinsic::IsNan:
    case Intrinsic::IsInf:
    case Intrinsic::IsFinite: {
      const Expr &x = c.args[0];
      if (!x.dtype().is_float()) {
        // Integers are never NaN or infinite; still evaluate the operand (it may fail).
        int64_t r = c.op == Intrinsic::IsFinite;
        return iun(cc.compile_int(x), [r](int64_t) { return r; });
      }
      FloatPtr a = cc.compile_float(x);
      if (c.op == Intrinsic::IsNan)
        return std::make_unique<FPred<bool (*)(double)>>(std::move(a), [](double v) { return std::isnan(v); });
      if (c.op == Intrinsic::IsInf)
        return std::make_unique<FPred<bool (*)(double)>>(std::move(a), [](double v) { return std::isinf(v); });
      return std::make_unique<FPred<bool (*)(double)>>(std::move(a), [](double v) { return std::isfinite(v); });
    }
    case Intrinsic::Abs: {
      Wrap w(t);
      return iun(cc.compile_int(c.args[0]), [w](int64_t x) { return w(x < 0 ? uint64_t(0) - uint64_t(x) : uint64_t(x)); });
    }
    case Intrinsic::Reinterpret: {
      DataType from = c.args[0].dtype();
      if (from.is_float()) return std::make_unique<ReinterpretFI>(cc.compile_float(c.args[0]), from, t);
      Wrap w(t);
      return iun(cc.compile_int(c.args[0]), [w](int64_t x) { return w(uint64_t(x)); });
    }
    default: throw_bad_intrinsic(c, cc);
  }
}

FloatPtr compile_float_call(Compiler &cc, const ir::Call &c) {
  DataType t = c.dtype;
  switch (c.op) {
    case Intrinsic::IfThenElse:
      return std::make_unique<FSelect>(cc.compile_int(c.args[0]), cc.compile_float(c.args[1]),
                                       cc.compile_float(c.args[2]));
    case Intrinsic::MaxValue: return std::make_unique<FConst>(float_extreme(t, true));
    case Intrinsic::MinValue: return std::make_unique<FConst>(float_extreme(t, false));
    case Intrinsic::ShflXor: throw_cross_lane(c, cc);
    case Intrinsic::Reinterpret: {
      DataType from = c.args[0].dtype();
      if (from.is_float()) return std::make_unique<ReinterpretFF>(cc.compile_float(c.args[0]), from, t);
      return std::make_unique<ReinterpretIF>(cc.compile_int(c.args[0]), t);
    }
    default: return compile_float_math(cc, c);
  }
}

}  // namespace tessera::runtime::detail
