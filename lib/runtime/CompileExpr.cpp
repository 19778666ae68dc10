//===- CompileExpr.cpp - Expressions to closures ---------------------------===//
//
// Integer semantics: every result is wrapped to its type's width (Wrap), so a
// value in an int64_t slot is always the exact value of the IR type. Float
// semantics: each operation is computed in FloatOps<K>::T (float for the
// 16-bit formats and float32, double for float64) and rounded to the format.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <limits>
#include <sstream>

#include "ExprNodes.h"

namespace tessera::runtime::detail {

using ir::BinaryOp;
using ir::DataType;
using ir::Expr;
using ir::Intrinsic;

int64_t wrap_int(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  int bits = t.bits();
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && ((u >> (bits - 1)) & 1)) u |= ~mask;
  return static_cast<int64_t>(u);
}

double round_float(DataType t, double v) {
  return dispatch_fk(t, [&]<FK K>() {
    using T = typename FloatOps<K>::T;
    return FloatOps<K>::fin(static_cast<T>(v));
  });
}

std::string format_index(const int64_t *idx, int n) {
  std::ostringstream os;
  os << "[";
  for (int i = 0; i < n; ++i) os << (i ? ", " : "") << idx[i];
  os << "]";
  return os.str();
}

std::string out_of_bounds_message(const std::string &what, const std::string &block, bool store,
                                  const int64_t *idx, const int64_t *shape, int ndim) {
  return "out-of-bounds " + std::string(store ? "store to " : "load ") + what + format_index(idx, ndim) + " (shape " +
         format_index(shape, ndim) + ") in block '" + block + "'";
}

std::string assume_failed_message(const std::string &block) {
  return "T.assume does not hold in block '" + block +
         "': the inputs break an assumption of the program (random inputs are made to keep only "
         "`B[indices] == value` and `n == value`, possibly `or` other conditions)";
}

void throw_out_of_bounds(const ErrCtx *ctx, bool store, const int64_t *idx, const BufState &b) {
  throw InterpretError(out_of_bounds_message(ctx->what, ctx->block, store, idx, b.shape, b.ndim));
}

namespace {

[[noreturn]] void throw_div_zero(const ErrCtx *c, int64_t x) {
  std::ostringstream os;
  os << "integer division by zero in block '" << c->block << "': " << c->what << "(" << x << ", 0)";
  throw InterpretError(os.str());
}

[[noreturn]] void throw_bad_shift(const ErrCtx *c, DataType t, int64_t y) {
  std::ostringstream os;
  os << "shift amount " << y << " out of range [0, " << t.bits() << ") for " << t.str() << " " << c->what
     << " in block '" << c->block << "'";
  throw InterpretError(os.str());
}

// ---- integer operators ------------------------------------------------------

template <typename Fn>
struct IBin final : IntExpr {
  IntPtr a, b;
  Fn fn;
  IBin(IntPtr x, IntPtr y, Fn f) : a(std::move(x)), b(std::move(y)), fn(f) {}
  int64_t eval(Frame &f) const override { return fn(a->eval(f), b->eval(f)); }
};
/// `var op const`, the most common index shape (i * 64, k + 1, ...).
template <typename Fn>
struct IBinVarConst final : IntExpr {
  int slot;
  int64_t c;
  Fn fn;
  IBinVarConst(int s, int64_t y, Fn f) : slot(s), c(y), fn(f) {}
  int64_t eval(Frame &f) const override { return fn(f.iv[slot], c); }
};
template <typename Fn>
IntPtr ibin(Compiler &cc, const Expr &a, const Expr &b, Fn fn) {
  int s = cc.int_var_slot(a);
  auto cb = ir::as_const_int(b);
  if (s >= 0 && cb) return std::make_unique<IBinVarConst<Fn>>(s, *cb, fn);
  return std::make_unique<IBin<Fn>>(cc.compile_int(a), cc.compile_int(b), fn);
}

template <bool IsAnd>
struct ILogic final : IntExpr {
  IntPtr a, b;
  ILogic(IntPtr x, IntPtr y) : a(std::move(x)), b(std::move(y)) {}
  int64_t eval(Frame &f) const override {
    if constexpr (IsAnd)
      return a->eval(f) ? b->eval(f) != 0 : 0;
    else
      return a->eval(f) ? 1 : b->eval(f) != 0;
  }
};

// ---- float operators --------------------------------------------------------

/// Float comparison, an IntExpr (bool). Ordered: NaN compares false except `!=`.
template <typename Fn>
struct FCmp final : IntExpr {
  FloatPtr a, b;
  Fn fn;
  FCmp(FloatPtr x, FloatPtr y, Fn f) : a(std::move(x)), b(std::move(y)), fn(f) {}
  int64_t eval(Frame &f) const override { return fn(a->eval(f), b->eval(f)) ? 1 : 0; }
};
template <typename Fn>
IntPtr fcmp(FloatPtr a, FloatPtr b, Fn fn) {
  return std::make_unique<FCmp<Fn>>(std::move(a), std::move(b), fn);
}

// ---- casts ------------------------------------------------------------------

/// Integer (or bool) to float: converted directly to the computation type.
template <FK K, bool Unsigned64>
struct CastIF final : FloatExpr {
  IntPtr a;
  explicit CastIF(IntPtr x) : a(std::move(x)) {}
  double eval(Frame &f) const override {
    using T = typename FloatOps<K>::T;
    int64_t v = a->eval(f);
    if constexpr (Unsigned64)
      return FloatOps<K>::fin(static_cast<T>(static_cast<uint64_t>(v)));
    else
      return FloatOps<K>::fin(static_cast<T>(v));
  }
};

/// Float to integer: truncation toward zero, saturating at the type's range,
/// NaN -> 0 (what PTX `cvt.rzi` does).
struct CastFI final : IntExpr {
  FloatPtr a;
  double lo = 0, hi = 0;  // the representable range as doubles; hi is exclusive (a power of two)
  int64_t imin = 0, imax = 0;
  bool is_bool;
  CastFI(FloatPtr x, DataType t) : a(std::move(x)), is_bool(t.is_bool()) {
    if (is_bool) return;
    int bits = t.bits();
    if (t.is_int()) {
      lo = -std::ldexp(1.0, bits - 1);
      hi = std::ldexp(1.0, bits - 1);
      imin = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
      imax = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    } else {
      hi = std::ldexp(1.0, bits);
      imax = bits == 64 ? -1 : static_cast<int64_t>((uint64_t{1} << bits) - 1);  // uint64: all ones
    }
  }
  int64_t eval(Frame &f) const override {
    double v = a->eval(f);
    if (is_bool) return v != 0;
    if (std::isnan(v)) return 0;
    v = std::trunc(v);
    if (v < lo) return imin;
    if (v >= hi) return imax;
    if (v >= 0x1p63) return static_cast<int64_t>(static_cast<uint64_t>(v));  // uint64 upper half
    return static_cast<int64_t>(v);
  }
};

template <FK K>
struct CastFF final : FloatExpr {
  FloatPtr a;
  explicit CastFF(FloatPtr x) : a(std::move(x)) {}
  double eval(Frame &f) const override {
    using T = typename FloatOps<K>::T;
    return FloatOps<K>::fin(static_cast<T>(a->eval(f)));
  }
};
// ---- loads ------------------------------------------------------------------

template <typename E, typename Ix>
struct ILoad final : IntExpr {
  Ix ix;
  explicit ILoad(Ix &&i) : ix(std::move(i)) {}
  int64_t eval(Frame &f) const override { return read_int<E>(f.bufs[ix.buf].data, ix.offset(f)); }
};
template <typename E, typename Ix>
struct FLoad final : FloatExpr {
  Ix ix;
  explicit FLoad(Ix &&i) : ix(std::move(i)) {}
  double eval(Frame &f) const override { return read_float<E>(f.bufs[ix.buf].data, ix.offset(f)); }
};

/// A float binary operator whose operands have static types A and B: either
/// FloatExpr (a virtual call) or a final load class (a direct, inlinable
/// call). Used for the arithmetic of inner loops, `C[i, j] + A[i, k] * B[k, j]`.
template <FK K, typename Fn, typename A, typename B>
struct FBinT final : FloatExpr {
  FloatPtr a, b;
  Fn fn;
  FBinT(FloatPtr x, FloatPtr y, Fn f) : a(std::move(x)), b(std::move(y)), fn(f) {}
  double eval(Frame &f) const override {
    using T = typename FloatOps<K>::T;
    T x = static_cast<T>(static_cast<const A *>(a.get())->eval(f));
    T y = static_cast<T>(static_cast<const B *>(b.get())->eval(f));
    return FloatOps<K>::fin(fn(x, y));
  }
};

/// fbin, with the operands that are 1-D or 2-D variable-indexed loads called directly.
template <typename Fn>
FloatPtr fbin_fused(DataType t, FloatPtr a, FloatPtr b, Fn fn) {
  return dispatch_fk(t, [&]<FK K>() -> FloatPtr {
    using E = std::conditional_t<K == FK::F16, HalfTag,
                                 std::conditional_t<K == FK::BF16, BF16Tag, typename FloatOps<K>::T>>;
    using L1 = FLoad<E, VarIndexer<1>>;
    using L2 = FLoad<E, VarIndexer<2>>;
    auto with_b = [&]<typename A>() -> FloatPtr {
      if (dynamic_cast<const L2 *>(b.get()))
        return std::make_unique<FBinT<K, Fn, A, L2>>(std::move(a), std::move(b), fn);
      if (dynamic_cast<const L1 *>(b.get()))
        return std::make_unique<FBinT<K, Fn, A, L1>>(std::move(a), std::move(b), fn);
      return std::make_unique<FBinT<K, Fn, A, FloatExpr>>(std::move(a), std::move(b), fn);
    };
    if (dynamic_cast<const L2 *>(a.get())) return with_b.template operator()<L2>();
    if (dynamic_cast<const L1 *>(a.get())) return with_b.template operator()<L1>();
    return with_b.template operator()<FloatExpr>();
  });
}
// ---- let --------------------------------------------------------------------

/// `let var = value in body`: stores the value in var's slot, then evaluates the body.
template <typename Body, typename R>
struct LetNode final : Body {
  int slot = 0;
  IntPtr ival;
  FloatPtr fval;
  std::unique_ptr<Body> body;
  R eval(Frame &f) const override {
    if (fval)
      f.fv[slot] = fval->eval(f);
    else
      f.iv[slot] = ival->eval(f);
    return body->eval(f);
  }
};

/// Compiles a Let; `compile_body` is compile_int or compile_float, by the Let's type.
template <typename Body, typename R, typename CompileBody>
std::unique_ptr<Body> compile_let(Compiler &cc, const ir::Let &l, CompileBody compile_body) {
  auto n = std::make_unique<LetNode<Body, R>>();
  cc.compile_value(l.value, n->ival, n->fval);
  n->slot = cc.bind_var(l.var);
  n->body = compile_body(l.body);
  cc.unbind_var(l.var);
  return n;
}

}  // namespace

// ---- the compiler -----------------------------------------------------------

Indexer::Indexer(Compiler &cc, const ir::Buffer &b, int slot, const std::vector<Expr> &indices, bool is_store)
    : buf(slot), ndim(static_cast<int>(indices.size())), store(is_store), ctx(cc.ctx(b.name())) {
  for (int d = 0; d < ndim; ++d) {
    var_slot[d] = cc.int_var_slot(indices[d]);
    if (var_slot[d] < 0) idx[d] = cc.compile_int(indices[d]);
  }
}

int Compiler::int_var_slot(const Expr &e) const {
  const auto *v = e.as<ir::VarNode>();
  if (!v) return -1;
  auto it = vars_.find(v);
  if (it == vars_.end() || it->second.empty() || it->second.back().is_float) return -1;
  return it->second.back().slot;
}

const ErrCtx *Compiler::ctx(std::string what) {
  prog_.contexts.push_back(ErrCtx{block_, std::move(what)});
  return &prog_.contexts.back();
}

static void check_scalar_type(DataType t, const char *what, const std::string &block) {
  if (t.lanes() != 1)
    throw InterpretError(std::string("vector type ") + t.str() + " of " + what + " in block '" + block +
                         "' is not supported by the interpreter");
  if (t.is_handle() || t.is_void())
    throw InterpretError(std::string(what) + " of type " + t.str() + " in block '" + block +
                         "' has no value the interpreter can compute");
}

[[noreturn]] static void throw_cannot_interpret(const Expr &e, const std::string &block) {
  if (const auto *c = e.as<ir::OpaqueCall>())
    throw InterpretError("cannot interpret " + c->callee + " in block '" + block +
                         "': tessera has no semantics for it (an opaque call)");
  throw InterpretError(std::string("cannot interpret ") + ir::node_kind_name(e.kind()) + " of type " +
                       e.dtype().str() + " in block '" + block + "'");
}

int Compiler::var_slot(const ir::VarNode &v) const {
  auto it = vars_.find(&v);
  if (it == vars_.end() || it->second.empty())
    throw InterpretError("variable '" + v.name + "' is used outside its scope in block '" + block_ + "'");
  return it->second.back().slot;
}

void Compiler::compile_value(const Expr &e, IntPtr &ival, FloatPtr &fval) {
  if (e.dtype().is_float())
    fval = compile_float(e);
  else
    ival = compile_int(e);
}

IntPtr Compiler::compile_int(const Expr &e) {
  DataType t = e.dtype();
  check_scalar_type(t, "an expression", block_);
  if (!t.is_int_like()) {
    // A float expression where an integer is required: a front-end bug.
    throw InterpretError("expected an integer expression, got " + t.str() + " " +
                         ir::node_kind_name(e.kind()) + " in block '" + block_ + "'");
  }
  switch (e.kind()) {
    case ir::NodeKind::IntImm: return std::make_unique<IConst>(e.as<ir::IntImm>()->value);
    case ir::NodeKind::Var: return std::make_unique<IVar>(var_slot(*e.as<ir::VarNode>()));
    case ir::NodeKind::Binary: {
      const auto *b = e.as<ir::Binary>();
      DataType ot = b->a.dtype();
      if (ot.is_float()) {
        FloatPtr x = compile_float(b->a), y = compile_float(b->b);
        switch (b->op) {
          case BinaryOp::EQ: return fcmp(std::move(x), std::move(y), [](double p, double q) { return p == q; });
          case BinaryOp::NE: return fcmp(std::move(x), std::move(y), [](double p, double q) { return p != q; });
          case BinaryOp::LT: return fcmp(std::move(x), std::move(y), [](double p, double q) { return p < q; });
          case BinaryOp::LE: return fcmp(std::move(x), std::move(y), [](double p, double q) { return p <= q; });
          case BinaryOp::GT: return fcmp(std::move(x), std::move(y), [](double p, double q) { return p > q; });
          case BinaryOp::GE: return fcmp(std::move(x), std::move(y), [](double p, double q) { return p >= q; });
          default:
            throw InterpretError(std::string("operator ") + ir::binary_op_name(b->op) + " on " + ot.str() +
                                 " yields " + t.str() + " in block '" + block_ + "'");
        }
      }
      Wrap w(t);
      bool u64 = ot.is_uint() && ot.bits() == 64;
      bool sgn = ot.is_int();
      const Expr &a = b->a, &c = b->b;
      switch (b->op) {
        case BinaryOp::Add: return ibin(*this, a, c, [w](int64_t x, int64_t y) { return w(uint64_t(x) + uint64_t(y)); });
        case BinaryOp::Sub: return ibin(*this, a, c, [w](int64_t x, int64_t y) { return w(uint64_t(x) - uint64_t(y)); });
        case BinaryOp::Mul: return ibin(*this, a, c, [w](int64_t x, int64_t y) { return w(uint64_t(x) * uint64_t(y)); });
        case BinaryOp::Div:
        case BinaryOp::FloorDiv:
        case BinaryOp::Mod:
        case BinaryOp::FloorMod: {
          bool is_div = b->op == BinaryOp::Div || b->op == BinaryOp::FloorDiv;
          bool floor = b->op == BinaryOp::FloorDiv || b->op == BinaryOp::FloorMod;
          const ErrCtx *cx = ctx(is_div ? (floor ? "floordiv" : "truncdiv") : (floor ? "floormod" : "truncmod"));
          if (!sgn) {
            // Unsigned (and bool): values are non-negative, so floor == trunc.
            if (is_div)
              return ibin(*this, a, c, [w, cx](int64_t x, int64_t y) {
                if (y == 0) throw_div_zero(cx, x);
                return w(uint64_t(x) / uint64_t(y));
              });
            return ibin(*this, a, c, [w, cx](int64_t x, int64_t y) {
              if (y == 0) throw_div_zero(cx, x);
              return w(uint64_t(x) % uint64_t(y));
            });
          }
          // Signed. y == -1 is special-cased: INT64_MIN / -1 overflows in C++.
          if (is_div && floor)
            return ibin(*this, a, c, [w, cx](int64_t x, int64_t y) {
              if (y == 0) throw_div_zero(cx, x);
              if (y == -1) return w(uint64_t(0) - uint64_t(x));
              int64_t q = x / y;
              if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
              return w(uint64_t(q));
            });
          if (is_div)
            return ibin(*this, a, c, [w, cx](int64_t x, int64_t y) {
              if (y == 0) throw_div_zero(cx, x);
              if (y == -1) return w(uint64_t(0) - uint64_t(x));
              return w(uint64_t(x / y));
            });
          if (floor)
            return ibin(*this, a, c, [cx](int64_t x, int64_t y) {
              if (y == 0) throw_div_zero(cx, x);
              if (y == -1) return int64_t{0};
              int64_t r = x % y;
              if (r != 0 && ((r < 0) != (y < 0))) r += y;
              return r;
            });
          return ibin(*this, a, c, [cx](int64_t x, int64_t y) {
            if (y == 0) throw_div_zero(cx, x);
            if (y == -1) return int64_t{0};
            return x % y;
          });
        }
        case BinaryOp::Min:
          if (u64) return ibin(*this, a, c, [](int64_t x, int64_t y) { return uint64_t(x) < uint64_t(y) ? x : y; });
          return ibin(*this, a, c, [](int64_t x, int64_t y) { return x < y ? x : y; });
        case BinaryOp::Max:
          if (u64) return ibin(*this, a, c, [](int64_t x, int64_t y) { return uint64_t(x) > uint64_t(y) ? x : y; });
          return ibin(*this, a, c, [](int64_t x, int64_t y) { return x > y ? x : y; });
#define TESSERA_ICMP(Op, op)                                                                                 \
  case BinaryOp::Op:                                                                                         \
    if (u64) return ibin(*this, a, c, [](int64_t x, int64_t y) -> int64_t { return uint64_t(x) op uint64_t(y); }); \
    return ibin(*this, a, c, [](int64_t x, int64_t y) -> int64_t { return x op y; });
          TESSERA_ICMP(EQ, ==)
          TESSERA_ICMP(NE, !=)
          TESSERA_ICMP(LT, <)
          TESSERA_ICMP(LE, <=)
          TESSERA_ICMP(GT, >)
          TESSERA_ICMP(GE, >=)
#undef TESSERA_ICMP
        case BinaryOp::And: return std::make_unique<ILogic<true>>(compile_int(a), compile_int(c));
        case BinaryOp::Or: return std::make_unique<ILogic<false>>(compile_int(a), compile_int(c));
        case BinaryOp::BitAnd: return ibin(*this, a, c, [w](int64_t x, int64_t y) { return w(uint64_t(x & y)); });
        case BinaryOp::BitOr: return ibin(*this, a, c, [w](int64_t x, int64_t y) { return w(uint64_t(x | y)); });
        case BinaryOp::BitXor: return ibin(*this, a, c, [w](int64_t x, int64_t y) { return w(uint64_t(x ^ y)); });
        case BinaryOp::Shl:
        case BinaryOp::Shr: {
          bool left = b->op == BinaryOp::Shl;
          const ErrCtx *cx = ctx(left ? "shift_left" : "shift_right");
          int64_t bits = t.bits();
          if (left)
            return ibin(*this, a, c, [w, cx, t, bits](int64_t x, int64_t y) {
              if (y < 0 || y >= bits) throw_bad_shift(cx, t, y);
              return w(uint64_t(x) << y);
            });
          if (sgn)  // sign-extended value: an arithmetic shift
            return ibin(*this, a, c, [w, cx, t, bits](int64_t x, int64_t y) {
              if (y < 0 || y >= bits) throw_bad_shift(cx, t, y);
              return w(uint64_t(x >> y));
            });
          return ibin(*this, a, c, [w, cx, t, bits](int64_t x, int64_t y) {
            if (y < 0 || y >= bits) throw_bad_shift(cx, t, y);
            return w(uint64_t(x) >> y);
          });
        }
      }
      break;
    }
    case ir::NodeKind::Unary: {
      const auto *u = e.as<ir::Unary>();
      Wrap w(t);
      switch (u->op) {
        case ir::UnaryOp::Not: return iun(compile_int(u->a), [](int64_t x) -> int64_t { return x == 0; });
        case ir::UnaryOp::BitNot: return iun(compile_int(u->a), [w](int64_t x) { return w(~uint64_t(x)); });
        case ir::UnaryOp::Neg: return iun(compile_int(u->a), [w](int64_t x) { return w(uint64_t(0) - uint64_t(x)); });
      }
      break;
    }
    case ir::NodeKind::Select: {
      const auto *s = e.as<ir::Select>();
      return std::make_unique<ISelect>(compile_int(s->cond), compile_int(s->true_value), compile_int(s->false_value));
    }
    case ir::NodeKind::Cast: {
      const auto *c = e.as<ir::Cast>();
      DataType from = c->value.dtype();
      check_scalar_type(from, "a cast operand", block_);
      if (from.is_float()) return std::make_unique<CastFI>(compile_float(c->value), t);
      if (from == t) return compile_int(c->value);
      Wrap w(t);
      return iun(compile_int(c->value), [w](int64_t x) { return w(uint64_t(x)); });
    }
    case ir::NodeKind::Load: {
      const auto *l = e.as<ir::Load>();
      int slot = buffer_slot(l->buffer, "load from");
      return dispatch_int_storage(t, [&]<typename E>() -> IntPtr {
        return make_indexer(*this, l->buffer, slot, l->indices, false, [&]<typename Ix>(Ix &&ix) -> IntPtr {
          return std::make_unique<ILoad<E, Ix>>(std::move(ix));
        });
      });
    }
    case ir::NodeKind::Call: return compile_int_call(*this, *e.as<ir::Call>());
    case ir::NodeKind::Let:
      return compile_let<IntExpr, int64_t>(*this, *e.as<ir::Let>(), [this](const Expr &b) { return compile_int(b); });
    default: break;
  }
  throw_cannot_interpret(e, block_);
}

FloatPtr Compiler::compile_float(const Expr &e) {
  DataType t = e.dtype();
  check_scalar_type(t, "an expression", block_);
  if (!t.is_float())
    throw InterpretError("expected a float expression, got " + t.str() + " " + ir::node_kind_name(e.kind()) +
                         " in block '" + block_ + "'");
  switch (e.kind()) {
    case ir::NodeKind::FloatImm: return std::make_unique<FConst>(round_float(t, e.as<ir::FloatImm>()->value));
    case ir::NodeKind::Var: return std::make_unique<FVar>(var_slot(*e.as<ir::VarNode>()));
    case ir::NodeKind::Binary: {
      const auto *b = e.as<ir::Binary>();
      FloatPtr x = compile_float(b->a), y = compile_float(b->b);
      switch (b->op) {
        case BinaryOp::Add: return fbin_fused(t, std::move(x), std::move(y), [](auto p, auto q) { return p + q; });
        case BinaryOp::Sub: return fbin_fused(t, std::move(x), std::move(y), [](auto p, auto q) { return p - q; });
        case BinaryOp::Mul: return fbin_fused(t, std::move(x), std::move(y), [](auto p, auto q) { return p * q; });
        case BinaryOp::Div: return fbin(t, std::move(x), std::move(y), [](auto p, auto q) { return p / q; });
        case BinaryOp::Mod: return fbin(t, std::move(x), std::move(y), [](auto p, auto q) { return std::fmod(p, q); });
        // floor(a / b) and a - floor(a / b) * b with every step rounded to the type.
        case BinaryOp::FloorDiv:
          return dispatch_fk(t, [&]<FK K>() -> FloatPtr {
            return fbin(t, std::move(x), std::move(y), [](auto p, auto q) {
              return std::floor(static_cast<decltype(p)>(FloatOps<K>::fin(p / q)));
            });
          });
        case BinaryOp::FloorMod:
          return dispatch_fk(t, [&]<FK K>() -> FloatPtr {
            return fbin(t, std::move(x), std::move(y), [](auto p, auto q) {
              using T = decltype(p);
              T fl = std::floor(static_cast<T>(FloatOps<K>::fin(p / q)));
              T prod = static_cast<T>(FloatOps<K>::fin(fl * q));
              return p - prod;
            });
          });
        // Min/Max propagate NaN (a read of poisoned memory must not vanish in a max-reduction).
        case BinaryOp::Min:
          return fbin_fused(t, std::move(x), std::move(y), [](auto p, auto q) { return (p != p || q != q) ? p + q : (q < p ? q : p); });
        case BinaryOp::Max:
          return fbin_fused(t, std::move(x), std::move(y), [](auto p, auto q) { return (p != p || q != q) ? p + q : (q > p ? q : p); });
        default: break;
      }
      throw InterpretError(std::string("operator ") + ir::binary_op_name(b->op) + " is not defined on " + t.str() +
                           " in block '" + block_ + "'");
    }
    case ir::NodeKind::Unary: {
      const auto *u = e.as<ir::Unary>();
      if (u->op != ir::UnaryOp::Neg)
        throw InterpretError(std::string("operator ") + ir::unary_op_name(u->op) + " is not defined on " + t.str() +
                             " in block '" + block_ + "'");
      return fun(t, compile_float(u->a), [](auto x) { return -x; });
    }
    case ir::NodeKind::Select: {
      const auto *s = e.as<ir::Select>();
      return std::make_unique<FSelect>(compile_int(s->cond), compile_float(s->true_value), compile_float(s->false_value));
    }
    case ir::NodeKind::Cast: {
      const auto *c = e.as<ir::Cast>();
      DataType from = c->value.dtype();
      check_scalar_type(from, "a cast operand", block_);
      if (from == t) return compile_float(c->value);
      if (from.is_float())
        return dispatch_fk(t, [&]<FK K>() -> FloatPtr { return std::make_unique<CastFF<K>>(compile_float(c->value)); });
      bool u64 = from.is_uint() && from.bits() == 64;
      return dispatch_fk(t, [&]<FK K>() -> FloatPtr {
        if (u64) return std::make_unique<CastIF<K, true>>(compile_int(c->value));
        return std::make_unique<CastIF<K, false>>(compile_int(c->value));
      });
    }
    case ir::NodeKind::Load: {
      const auto *l = e.as<ir::Load>();
      int slot = buffer_slot(l->buffer, "load from");
      return dispatch_float_storage(t, [&]<typename E>() -> FloatPtr {
        return make_indexer(*this, l->buffer, slot, l->indices, false, [&]<typename Ix>(Ix &&ix) -> FloatPtr {
          return std::make_unique<FLoad<E, Ix>>(std::move(ix));
        });
      });
    }
    case ir::NodeKind::Call: return compile_float_call(*this, *e.as<ir::Call>());
    case ir::NodeKind::Let:
      return compile_let<FloatExpr, double>(*this, *e.as<ir::Let>(), [this](const Expr &b) { return compile_float(b); });
    default: break;
  }
  throw_cannot_interpret(e, block_);
}

}  // namespace tessera::runtime::detail
