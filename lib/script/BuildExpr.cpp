//===- BuildExpr.cpp - TVMScript expressions to IR -------------------------===//
//
// Typing follows TVMScript: a Python literal adapts to the other operand
// (`x + 1` with x float16 is `x + T.float16(1)`), otherwise operands promote
// as in ir/Op.h. Every operand is type-checked here before an IR factory sees
// it, so bad text gives a ParseError and never an internal error.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <charconv>
#include <optional>
#include <cmath>
#include <limits>

#include "Builder.h"
#include "OpaqueCalls.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/Tma.h"

namespace tessera::script::detail {

using namespace tessera::ir;

namespace {

Operand typed(Expr e) { return Operand{std::move(e)}; }

// A literal operand remembers where it is written; typed operands need no position.
Operand at(Operand o, Pos p) {
  if (o.is_lit()) o.pos = p;
  return o;
}

Operand int_literal(int64_t v) {
  bool fits32 = v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  Operand o{make_int(fits32 ? DataType::int32() : DataType::int64(), v), Operand::Lit::Int, v, 0};
  return o;
}

Operand float_literal(double v) {
  return Operand{FloatImm::make(DataType::float32(), v), Operand::Lit::Float, 0, v};
}

// A literal's value for messages: "300", "-1", "70000", "1e+39", "0.5".
std::string number_text(double v) {
  if (v == std::trunc(v) && std::fabs(v) < 1e16) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// The largest finite value of a float type, and the magnitude from which a
// value rounds (to nearest even) to infinity: max + half an ulp at max.
double max_finite(DataType t) {
  if (t.is_bfloat16()) return 0x1.fep127;
  if (t.bits() == 16) return 65504.0;
  if (t.bits() == 32) return std::numeric_limits<float>::max();
  return std::numeric_limits<double>::max();
}
double overflow_threshold(DataType t) {
  if (t.is_bfloat16()) return 0x1.ffp127;
  if (t.bits() == 16) return 65520.0;
  if (t.bits() == 32) return 0x1.ffffffp127;
  return std::numeric_limits<double>::infinity();
}

const char *type_word(DataType t) { return t.is_handle() ? "handle" : "value"; }

}  // namespace

std::string Builder::dotted_name(const PyExpr &e) const {
  if (e.kind == PyExprKind::Name) return e.name;
  if (e.kind == PyExprKind::Attr && e.base) {
    std::string b = dotted_name(*e.base);
    return b.empty() ? "" : b + "." + e.name;
  }
  return "";
}

const Binding *Builder::lookup(const std::string &name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto f = it->find(name); f != it->end()) return &f->second;
  return nullptr;
}

void Builder::expect_args(const PyExpr &call, size_t lo, size_t hi, const std::string &fn) {
  size_t n = call.args.size();
  if (n >= lo && n <= hi) return;
  std::string want = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
  src_.fail(call.pos, fn + " takes " + want + " argument" + (hi == 1 ? "" : "s") + ", found " + std::to_string(n));
}

void Builder::reject_kwargs(const PyExpr &call, const std::string &fn) {
  if (!call.kwargs.empty())
    src_.fail(call.kwarg_pos[0], "unexpected keyword argument " + quote(call.kwargs[0].first) + " to " + fn);
}

std::string Builder::expect_string(const PyExpr &e, const std::string &what) {
  if (e.kind != PyExprKind::Str) src_.fail(e.pos, "expected a string for " + what);
  return e.name;
}

ir::Buffer Builder::lookup_buffer(const PyExpr &e) {
  if (e.kind != PyExprKind::Name) src_.fail(e.pos, "expected a buffer name before '['");
  const Binding *b = lookup(e.name);
  if (!b) fail_undefined(e.pos, e.name);
  if (b->kind != Binding::Kind::Buffer)
    src_.fail(e.pos, quote(e.name) + " is not a buffer and cannot be indexed");
  return b->buffer;
}

Expr Builder::build_int(const PyExpr &e, const std::string &what) {
  Operand o = build(e);
  if (!o.e.dtype().is_integer())
    src_.fail(e.pos, what + " must be an integer, found " + o.e.dtype().str());
  return o.e;
}

void Builder::check_literal_fits(const Operand &v, DataType t) {
  if (!v.is_lit()) return;
  if (t.is_int_like()) {
    int64_t lo = 0, hi = 1;  // bool
    if (t.is_uint()) {
      hi = t.bits() >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << t.bits()) - 1;
    } else if (t.is_int()) {
      lo = t.bits() >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (t.bits() - 1));
      hi = t.bits() >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (t.bits() - 1)) - 1;
    }
    bool fits;
    std::string text;
    if (v.lit == Operand::Lit::Float) {  // a whole number here (callers reject fractions first)
      double fv = v.float_value;
      text = number_text(fv);
      fits = fv >= -0x1p63 && fv < 0x1p63 && static_cast<int64_t>(fv) >= lo && static_cast<int64_t>(fv) <= hi;
    } else {
      text = std::to_string(v.int_value);
      fits = v.int_value >= lo && v.int_value <= hi;
    }
    if (!fits) {
      std::string top = t.is_uint() && t.bits() == 64 ? "18446744073709551615" : std::to_string(hi);
      src_.fail(v.pos, "value " + text + " is out of range for " + t.str() + " [" + std::to_string(lo) + ", " + top + "]");
    }
    return;
  }
  if (t.is_float()) {
    double fv = v.lit == Operand::Lit::Float ? v.float_value : static_cast<double>(v.int_value);
    // inf and nan are kept: TVM allows them in any float type. A value that rounds
    // to the largest finite value fits (the printer writes float32 max as 3.4028235e+38).
    if (std::isfinite(fv) && std::fabs(fv) >= overflow_threshold(t))
      src_.fail(v.pos, "value " + number_text(fv) + " overflows " + t.str() + " (largest finite value " +
                           number_text(max_finite(t)) + ")");
  }
}

Operand Builder::adapt(const Operand &lit, DataType t) {
  switch (lit.lit) {
    case Operand::Lit::Int:
    case Operand::Lit::Bool:
      if (!t.is_integer() && !t.is_float()) return lit;
      check_literal_fits(lit, t);
      if (t.is_integer()) return typed(make_int(t, lit.int_value));
      return typed(make_const(t, static_cast<double>(lit.int_value)));
    case Operand::Lit::Float:
      if (!t.is_float()) return lit;  // float literal with an integer: the integer promotes to float32
      check_literal_fits(lit, t);
      return typed(FloatImm::make(t, lit.float_value));
    case Operand::Lit::None: return lit;
  }
  return lit;
}

Expr Builder::literal_as(const Operand &v, DataType t) {
  check_literal_fits(v, t);
  if (v.lit != Operand::Lit::Float && t.is_int_like()) return make_int(t, v.int_value);
  return make_const(t, v.lit == Operand::Lit::Float ? v.float_value : static_cast<double>(v.int_value));
}

Expr Builder::convert_to(const Operand &v, DataType t, Pos p, const std::string &what) {
  DataType from = v.e.dtype();
  if (from == t) {
    check_literal_fits(v, t);  // a weak float literal is already float32 but may overflow it
    return v.e;
  }
  if (v.lit == Operand::Lit::Float && t.is_int_like() && v.float_value != std::trunc(v.float_value))
    src_.fail(p, "cannot convert float literal " + std::to_string(v.float_value) + " to " + t.str() + " for " + what);
  if (v.is_lit() && !t.is_handle() && !t.is_void()) return literal_as(v, t);
  src_.fail(p, "type mismatch: " + what + " has type " + t.str() + " but the value has type " + from.str() +
                   " (use T.Cast(\"" + t.str() + "\", ...) to convert)");
}

Operand Builder::build(const PyExpr &e) {
  switch (e.kind) {
    case PyExprKind::Int: return at(int_literal(e.int_value), e.pos);
    case PyExprKind::Float: return at(float_literal(e.float_value), e.pos);
    case PyExprKind::Bool:
      return at(Operand{make_int(DataType::bool_(), e.int_value), Operand::Lit::Bool, e.int_value, 0}, e.pos);
    case PyExprKind::Name: {
      const Binding *b = lookup(e.name);
      if (!b) fail_undefined(e.pos, e.name);
      if (b->kind == Binding::Kind::Buffer)
        src_.fail(e.pos, "buffer " + quote(e.name) + " used as a value; index it as " + e.name + "[...]");
      if (b->kind == Binding::Kind::Handle)
        src_.fail(e.pos, "handle " + quote(e.name) + " used as a value; bind it with T.match_buffer first");
      if (b->kind == Binding::Kind::Tuple)
        src_.fail(e.pos, quote(e.name) + " is a tuple of " + std::to_string(b->elements.size()) +
                             " loop variables; index it (" + e.name + "[0]) or bind it with T.axis.remap");
      return typed(b->expr);
    }
    case PyExprKind::Call: return build_call(e);
    case PyExprKind::Subscript: return build_load(e);
    case PyExprKind::BinOp: {
      Operand a = build(*e.args[0]);
      Operand b = build(*e.args[1]);
      return at(build_binop(e.op, std::move(a), std::move(b), e.pos), e.pos);  // `200 + 100` folds
    }
    case PyExprKind::UnaryOp: return at(build_unary(e.op, build(*e.args[0]), e.pos), e.pos);  // `-1`
    case PyExprKind::Compare: {
      // 0 <= i < n  ->  0 <= i and i < n
      Operand lhs = build(*e.args[0]);
      Operand result;
      for (size_t k = 0; k < e.ops.size(); ++k) {
        Operand rhs = build(*e.args[k + 1]);
        Operand c = build_binop(e.ops[k], lhs, rhs, e.pos);
        result = k == 0 ? c : typed(logical_and(result.e, c.e));
        lhs = rhs;
      }
      return result;
    }
    case PyExprKind::BoolOp: {
      Operand acc = build(*e.args[0]);
      for (size_t k = 1; k < e.args.size(); ++k)
        acc = build_binop(e.op, acc, build(*e.args[k]), e.pos);
      return acc;
    }
    case PyExprKind::IfExp: {
      Operand c = build(*e.args[1]);
      Operand t = build(*e.args[0]);
      Operand f = build(*e.args[2]);
      if (t.is_lit() && !f.is_lit()) t = adapt(t, f.e.dtype());
      if (f.is_lit() && !t.is_lit()) f = adapt(f, t.e.dtype());
      for (const Operand *o : {&c, &t, &f})
        if (o->e.dtype().is_handle()) src_.fail(e.pos, "conditional expression of a handle");
      return typed(if_then_else(c.e, t.e, f.e));
    }
    case PyExprKind::Attr: {
      std::string n = dotted_name(e);
      if (e.base->kind == PyExprKind::Name)
        if (const Binding *b = lookup(e.base->name); b && b->kind == Binding::Kind::Buffer)
          src_.fail(e.pos, "buffer attribute " + quote(n) + " is not supported as a value" +
                               (e.name == "data" ? " (a buffer's address is only an argument of an opaque call)"
                                                 : " (tessera reads a buffer's elements, and its address A.data "
                                                   "as an opaque call's argument)"));
      src_.fail(e.pos, "expected a value, found " + quote(n.empty() ? e.name : n) +
                           (n.rfind("T.", 0) == 0 ? " (call it: " + n + "(...))" : ""));
    }
    case PyExprKind::Str: src_.fail(e.pos, "expected a value, found string " + quote(e.name));
    case PyExprKind::None: src_.fail(e.pos, "expected a value, found 'None'");
    case PyExprKind::Tuple: src_.fail(e.pos, "expected a value, found a tuple");
    case PyExprKind::List: src_.fail(e.pos, "expected a value, found a list");
    case PyExprKind::Dict: src_.fail(e.pos, "expected a value, found a dictionary");
    case PyExprKind::Slice: src_.fail(e.pos, "slices are only allowed in T.reads and T.writes");
    case PyExprKind::Starred:
      src_.fail(e.pos, "argument unpacking (*...) is only supported as T.grid(*A.shape) or T.grid(*(a, b))");
  }
  src_.fail(e.pos, "unsupported expression");
}

std::optional<std::pair<std::vector<ir::Expr>, std::string>> Builder::sequence_of(const PyExpr &x) const {
  if (x.kind == PyExprKind::Name)
    if (const Binding *b = lookup(x.name); b && b->kind == Binding::Kind::Tuple)
      return std::pair{b->elements, quote(x.name)};
  if (x.kind == PyExprKind::Attr && x.name == "shape" && x.base->kind == PyExprKind::Name)
    if (const Binding *b = lookup(x.base->name); b && b->kind == Binding::Kind::Buffer)
      return std::pair{b->view ? b->view->shape : b->buffer.shape(), quote(x.base->name + ".shape")};
  return std::nullopt;
}

std::optional<Operand> Builder::build_element(const PyExpr &e) {
  if (e.kind != PyExprKind::Subscript || !e.base) return std::nullopt;
  auto seq = sequence_of(*e.base);
  if (!seq) return std::nullopt;
  const auto &[elements, what] = *seq;
  if (e.args.size() != 1) src_.fail(e.pos, what + " takes one index");
  Operand k = build(*e.args[0]);
  auto i = as_const_int(k.e);
  if (!i) src_.fail(e.args[0]->pos, "the index of " + what + " must be an integer constant");
  const int64_t n = int64_t(elements.size());
  if (*i < -n || *i >= n)
    src_.fail(e.args[0]->pos, "index " + std::to_string(*i) + " is out of range for " + what + " of " +
                                  std::to_string(n) + " element" + (n == 1 ? "" : "s"));
  return typed(elements[*i < 0 ? *i + n : *i]);
}

std::vector<Operand> Builder::unpack(const PyExpr &starred) {
  const PyExpr &x = *starred.args[0];
  std::vector<Operand> out;
  if (x.kind == PyExprKind::Tuple || x.kind == PyExprKind::List) {
    for (const PyExprPtr &a : x.args) out.push_back(build(*a));
    return out;
  }
  if (auto seq = sequence_of(x)) {
    for (const ir::Expr &v : seq->first) out.push_back(typed(v));
    return out;
  }
  src_.fail(x.pos, "'*' unpacks a buffer's shape (*A.shape), a tuple or a tuple of loop variables here");
}

Operand Builder::build_load(const PyExpr &e) {
  if (std::optional<Operand> element = build_element(e)) return *element;
  const Binding &b = buffer_binding(*e.base);
  Buffer buf = b.buffer;
  const std::string &name = b.view ? b.view->name : buf.name();
  size_t ndim = b.view ? b.view->shape.size() : size_t(buf.ndim());
  if (e.args.size() != ndim)
    src_.fail(e.pos, "buffer " + quote(name) + " has " + std::to_string(ndim) + " dimension" +
                         (ndim == 1 ? "" : "s") + " but is indexed with " + std::to_string(e.args.size()) +
                         " ind" + (e.args.size() == 1 ? "ex" : "ices"));
  std::vector<Expr> idx;
  for (const PyExprPtr &a : e.args) {
    if (a->kind == PyExprKind::Slice) src_.fail(a->pos, "slices are only allowed in T.reads and T.writes");
    idx.push_back(build_int(*a, "index of buffer " + quote(name)));
  }
  if (b.view) idx = view_indices(*b.view, buf, std::move(idx));
  return typed(Load::make(buf, std::move(idx)));
}

Operand Builder::build_unary(const std::string &op, Operand a, Pos p) {
  DataType t = a.e.dtype();
  if (t.is_handle() || t.is_void()) src_.fail(p, "operator " + quote(op) + " on a " + type_word(t));
  if (op == "not") return typed(logical_not(a.e));
  if (op == "+") return a;
  if (op == "~") {
    if (!t.is_int_like()) src_.fail(p, "operator '~' needs an integer operand, found " + t.str());
    return typed(bitwise_not(a.e));
  }
  // Unary minus keeps a literal weak: `x * -1` adapts -1 to x's type.
  if (a.lit == Operand::Lit::Int && a.int_value != std::numeric_limits<int64_t>::min()) {
    Operand r = int_literal(-a.int_value);
    return r;
  }
  if (a.lit == Operand::Lit::Float) return float_literal(-a.float_value);
  if (t.is_bool()) src_.fail(p, "unary '-' on a bool value");
  return typed(neg(a.e));
}

Operand Builder::build_binop(const std::string &op, Operand a, Operand b, Pos p) {
  for (const Operand *o : {&a, &b})
    if (o->e.dtype().is_handle() || o->e.dtype().is_void())
      src_.fail(p, "operator " + quote(op) + " on a " + type_word(o->e.dtype()));
  if (op == "and") return typed(logical_and(a.e, b.e));
  if (op == "or") return typed(logical_or(a.e, b.e));
  // Fold arithmetic on two literals the way Python would, keeping them weak.
  if (a.is_lit() && b.is_lit() && a.lit != Operand::Lit::Bool && b.lit != Operand::Lit::Bool &&
      (op == "+" || op == "-" || op == "*")) {
    if (a.lit == Operand::Lit::Int && b.lit == Operand::Lit::Int) {
      int64_t r;
      bool overflow = op == "+"   ? __builtin_add_overflow(a.int_value, b.int_value, &r)
                      : op == "-" ? __builtin_sub_overflow(a.int_value, b.int_value, &r)
                                  : __builtin_mul_overflow(a.int_value, b.int_value, &r);
      if (!overflow) return int_literal(r);
    } else {
      double x = a.lit == Operand::Lit::Int ? static_cast<double>(a.int_value) : a.float_value;
      double y = b.lit == Operand::Lit::Int ? static_cast<double>(b.int_value) : b.float_value;
      return float_literal(op == "+" ? x + y : op == "-" ? x - y : x * y);
    }
  }
  if (a.is_lit() && !b.is_lit()) a = adapt(a, b.e.dtype());
  if (b.is_lit() && !a.is_lit()) b = adapt(b, a.e.dtype());
  DataType ta = a.e.dtype(), tb = b.e.dtype();
  bool any_float = ta.is_float() || tb.is_float();
  if (op == "+") return typed(add(a.e, b.e));
  if (op == "-") return typed(sub(a.e, b.e));
  if (op == "*") return typed(mul(a.e, b.e));
  if (op == "/") return typed(div(a.e, b.e));
  if (op == "//") return typed(any_float ? call(Intrinsic::Floor, {div(a.e, b.e)}) : floordiv(a.e, b.e));
  if (op == "%") {
    if (any_float) src_.fail(p, "operator '%' needs integer operands, found " + ta.str() + " and " + tb.str());
    return typed(floormod(a.e, b.e));
  }
  if (op == "**") {
    if (any_float) return typed(call(Intrinsic::Pow, {a.e, b.e}));
    // Integer power: only a constant exponent, expanded to multiplications.
    auto k = as_const_int(b.e);
    if (!k || *k < 0 || *k > 64)
      src_.fail(p, "integer '**' needs a constant exponent between 0 and 64; use T.pow on floats");
    Expr r = make_int(promote_types(ta, tb), 1);
    Expr base = cast(promote_types(ta, tb), a.e);
    for (int64_t i = 0; i < *k; ++i) r = i == 0 ? base : mul(r, base);
    return typed(r);
  }
  if (op == "<") return typed(lt(a.e, b.e));
  if (op == "<=") return typed(le(a.e, b.e));
  if (op == ">") return typed(gt(a.e, b.e));
  if (op == ">=") return typed(ge(a.e, b.e));
  if (op == "==") return typed(eq(a.e, b.e));
  if (op == "!=") return typed(ne(a.e, b.e));
  // Bitwise operators: on two bools, & and | are the logical operators.
  if (op == "&" || op == "|" || op == "^" || op == "<<" || op == ">>") {
    if (ta.is_bool() && tb.is_bool() && op == "&") return typed(logical_and(a.e, b.e));
    if (ta.is_bool() && tb.is_bool() && op == "|") return typed(logical_or(a.e, b.e));
    if (!ta.is_int_like() || !tb.is_int_like())
      src_.fail(p, "operator " + quote(op) + " needs integer operands, found " + ta.str() + " and " + tb.str());
    if (op == "&") return typed(bitwise_and(a.e, b.e));
    if (op == "|") return typed(bitwise_or(a.e, b.e));
    if (op == "^") return typed(bitwise_xor(a.e, b.e));
    if (op == "<<") return typed(shift_left(a.e, b.e));
    return typed(shift_right(a.e, b.e));
  }
  src_.fail(p, "unsupported operator " + quote(op));
}

Operand Builder::build_call(const PyExpr &e) {
  std::string fn = dotted_name(*e.base);
  // A TVM built-in tessera keeps as written, or a call of another function of
  // the module (Module.subroutine(A.data)): opaque to tessera.
  // A.access_ptr("r", ...): the address of (part of) a buffer, as tensor
  // intrinsics pass it; opaque like them.
  if (e.base->kind == PyExprKind::Attr && e.base->name == "access_ptr" && e.base->base->kind == PyExprKind::Name)
    if (const Binding *b = lookup(e.base->base->name); b && b->kind == Binding::Kind::Buffer)
      return build_opaque_call(e, "access_ptr", BufferPtr::make(b->buffer));
  // tessera's own warp statements (T.mma_sync is tessera's, not TVM's family).
  const bool own = fn.rfind("T.", 0) == 0 && intrinsic_from_name(fn.substr(2)).has_value();
  if ((!own && is_opaque_callee(fn)) ||
      (!module_class_.empty() && fn.rfind(module_class_ + ".", 0) == 0 && fn.find('.', module_class_.size() + 1) == std::string::npos))
    return build_opaque_call(e, fn);
  if (fn.rfind("T.", 0) != 0) {
    if (fn == "range") src_.fail(e.pos, "'range' is only allowed as a for-loop iterator");
    if (e.base->kind == PyExprKind::Name && !lookup(e.base->name))
      fail_undefined(e.pos, e.base->name);
    src_.fail(e.pos, "unknown function " + quote(fn.empty() ? "<expression>" : fn));
  }
  std::string name = fn.substr(2);
  auto nargs = [&](size_t lo, size_t hi) { expect_args(e, lo, hi, fn); };

  // Typed constants and conversions: T.float16(1.5), T.float32("inf"), T.int64(n).
  if (auto dt = parse_scalar_type(name); dt && !dt->is_handle() && !dt->is_void()) {
    reject_kwargs(e, fn);
    if (e.args.empty()) src_.fail(e.pos, fn + "() without a value declares a variable; assign it: n = " + fn + "()");
    nargs(1, 1);
    const PyExpr &a = *e.args[0];
    if (a.kind == PyExprKind::Str) {
      if (!dt->is_float()) src_.fail(a.pos, fn + " of a string needs a float type");
      const std::string &s = a.name;
      double v;
      if (s == "inf" || s == "+inf") v = std::numeric_limits<double>::infinity();
      else if (s == "-inf") v = -std::numeric_limits<double>::infinity();
      else if (s == "nan" || s == "-nan") v = std::numeric_limits<double>::quiet_NaN();
      else src_.fail(a.pos, "expected \"inf\", \"-inf\" or \"nan\", found string " + quote(s));
      return typed(FloatImm::make(*dt, v));
    }
    Operand v = build(a);
    if (v.e.dtype().is_handle()) src_.fail(a.pos, "cannot convert a handle to " + dt->str());
    if (v.lit == Operand::Lit::Float && dt->is_int_like() && v.float_value != std::trunc(v.float_value))
      src_.fail(a.pos, "float literal does not fit " + dt->str());
    if (v.is_lit()) return typed(literal_as(v, *dt));
    return typed(cast(*dt, v.e));
  }
  if (name == "Cast" || name == "reinterpret") {
    reject_kwargs(e, fn);
    nargs(2, 2);
    DataType t = parse_dtype(*e.args[0]);
    Operand v = build(*e.args[1]);
    if (v.e.dtype().is_handle() || t.is_handle()) src_.fail(e.pos, fn + " of a handle");
    if (name == "Cast") return typed(v.is_lit() ? cast(t, v.e) : Cast::make(t, v.e));
    if (v.e.dtype().bits() != t.bits())
      src_.fail(e.pos, "T.reinterpret from " + v.e.dtype().str() + " to " + t.str() + " changes the width");
    return typed(Call::make(t, Intrinsic::Reinterpret, {v.e}));
  }
  if (name == "cast") {
    // T.cast(value, dtype): TVM's spelling with the value first.
    const PyExpr *dt = e.args.size() > 1 ? e.args[1].get() : nullptr;
    for (size_t k = 0; k < e.kwargs.size(); ++k) {
      if (e.kwargs[k].first != "dtype" || dt)
        src_.fail(e.kwarg_pos[k], "unexpected keyword argument " + quote(e.kwargs[k].first) + " to " + fn);
      dt = e.kwargs[k].second.get();
    }
    if (e.args.empty() || e.args.size() > 2 || !dt) src_.fail(e.pos, fn + " takes a value and a data type: T.cast(x, \"float32\")");
    DataType t = parse_dtype(*dt);
    Operand v = build(*e.args[0]);
    if (v.e.dtype().is_handle() || t.is_handle()) src_.fail(e.pos, fn + " of a handle");
    return typed(v.is_lit() ? cast(t, v.e) : Cast::make(t, v.e));
  }
  if (name == "max_value" || name == "min_value") {
    reject_kwargs(e, fn);
    nargs(1, 1);
    DataType t = parse_dtype(*e.args[0]);
    if (t.is_handle() || t.is_bool()) src_.fail(e.args[0]->pos, fn + " of " + t.str());
    return typed(Call::make(t, name == "max_value" ? Intrinsic::MaxValue : Intrinsic::MinValue, {}));
  }
  if (name == "assume") {
    // T.assume(cond): a promise about the program's values (checked by the interpreter).
    reject_kwargs(e, fn);
    nargs(1, 1);
    Operand c = build(*e.args[0]);
    if (!c.e.dtype().is_int_like()) src_.fail(e.args[0]->pos, fn + " needs a condition, found " + c.e.dtype().str());
    Expr cond = c.e.dtype().is_bool() ? c.e : ne(c.e, make_const(c.e.dtype(), 0));
    return typed(Call::make(DataType::bool_(), Intrinsic::Assume, {cond}));
  }
  if (name == "syncthreads") {
    reject_kwargs(e, fn);
    nargs(0, 0);
    return typed(Call::make(DataType::int32(), Intrinsic::SyncThreads, {}));
  }
  if (auto op = intrinsic_from_name(name); op && is_async_or_warp_statement(*op)) {
    // The tensor-core and cp.async statements, as the tensor-core rule writes
    // them (ir/Intrinsics.def): addresses are buffer elements, counts int32.
    reject_kwargs(e, fn);
    const bool tma = *op == Intrinsic::TmaLoad || *op == Intrinsic::TmaStore;
    // T.tma_load: dst, bar, src.data, swizzle; T.tma_store: src, dst.data,
    // swizzle; then per dimension of the tensor a box extent and (after all
    // extents) a coordinate.
    const int fixed = *op == Intrinsic::TmaLoad ? 4 : 3, tensor_arg = fixed - 2;
    const char *leading = *op == Intrinsic::TmaLoad ? "dst, bar, src.data, swizzle" : "src, dst.data, swizzle";
    const int n = tma ? static_cast<int>(e.args.size()) : intrinsic_arity(*op);
    // T.wgmma's transpose flags default to 0 (both operands K-major).
    const int optional = *op == Intrinsic::Wgmma ? 2 : 0;
    if (tma) {
      nargs(fixed + 2, fixed + 2 * tma::kMaxDims);
      if ((n - fixed) % 2 != 0)
        src_.fail(e.pos, fn + " takes " + std::string(leading) + ", then one box extent and one coordinate per "
                              "dimension of the tensor; got " + std::to_string(n) + " arguments (an " +
                              (n % 2 ? "odd" : "even") + " count)");
    } else {
      nargs(n - optional, n);
    }
    std::vector<int> addresses = address_operands(*op);
    std::vector<Expr> args;
    for (int k = 0; k < static_cast<int>(e.args.size()); ++k) {
      const PyExpr &a = *e.args[k];
      if (*op == Intrinsic::MmaSync && k == 0) {
        if (a.kind != PyExprKind::Str || (a.name != "m16n8k16" && a.name != "m16n8k32" && a.name != "m16n8k8"))
          src_.fail(a.pos, fn + " takes the shape \"m16n8k16\", \"m16n8k32\" or \"m16n8k8\" first");
        args.push_back(StringImm::make(a.name));
        continue;
      }
      if (*op == Intrinsic::Wgmma && k == 0) {
        if (a.kind != PyExprKind::Str || !a.name.starts_with("m64n"))
          src_.fail(a.pos, fn + " takes the shape first: \"m64nNk16\" or \"m64nNk32\"");
        args.push_back(StringImm::make(a.name));
        continue;
      }
      if (tma && k == tensor_arg) {
        const Binding *b = a.kind == PyExprKind::Attr && a.name == "data" && a.base->kind == PyExprKind::Name
                               ? lookup(a.base->name)
                               : nullptr;
        if (!b || b->kind != Binding::Kind::Buffer)
          src_.fail(a.pos, "argument " + std::to_string(k + 1) + " of " + fn +
                               " must be the global tensor's address, as in A.data");
        if (static_cast<size_t>(n - fixed) != 2 * b->buffer.shape().size())
          src_.fail(e.pos, fn + " of '" + b->buffer.name() + "' (" + std::to_string(b->buffer.shape().size()) +
                               " dimensions) takes " + std::to_string(b->buffer.shape().size()) +
                               " box extents and as many coordinates; got " + std::to_string(n - fixed) +
                               " of them");
        args.push_back(BufferPtr::make(b->buffer));
        continue;
      }
      Operand v = build(a);
      if (std::find(addresses.begin(), addresses.end(), k) != addresses.end()) {
        if (!v.e.as<Load>()) src_.fail(a.pos, "argument " + std::to_string(k + 1) + " of " + fn + " must be a buffer element (an address)");
        args.push_back(v.e);
        continue;
      }
      if (!v.e.dtype().is_int_like()) src_.fail(a.pos, "argument " + std::to_string(k + 1) + " of " + fn + " must be an integer");
      args.push_back(v.is_lit() ? adapt(v, DataType::int32()).e : v.e);
    }
    while (static_cast<int>(args.size()) < n) args.push_back(make_int(DataType::int32(), 0));
    return typed(Call::make(DataType::int32(), *op, std::move(args)));
  }
  if (name == "shfl_xor") {
    // T.shfl_xor(mask, value, lane_mask, width), as lowering writes it.
    reject_kwargs(e, fn);
    nargs(4, 4);
    Expr mask = convert_to(build(*e.args[0]), DataType::uint(32), e.args[0]->pos, "the mask of " + fn);
    Operand value = build(*e.args[1]);
    if (value.e.dtype().is_handle()) src_.fail(e.args[1]->pos, fn + " of a handle");
    Expr lane_mask =
        convert_to(build(*e.args[2]), DataType::int32(), e.args[2]->pos, "the lane mask of " + fn);
    Expr width = convert_to(build(*e.args[3]), DataType::int32(), e.args[3]->pos, "the width of " + fn);
    return typed(Call::make(value.e.dtype(), Intrinsic::ShflXor, {mask, value.e, lane_mask, width}));
  }
  if (name == "let") {
    // T.let(v, value, body): `v` is a new variable for `body` only, typed by `value`.
    reject_kwargs(e, fn);
    nargs(3, 3);
    const PyExpr &v = *e.args[0];
    if (v.kind != PyExprKind::Name) src_.fail(v.pos, "expected a variable name as the first argument of T.let");
    Operand value = build(*e.args[1]);
    if (value.e.dtype().is_handle()) src_.fail(e.args[1]->pos, "T.let of a handle");
    Var var(v.name, value.e.dtype());
    push_scope();
    bind_scalar(v.name, var);
    Operand body = build(*e.args[2]);
    pop_scope();
    return typed(Let::make(var, value.e, body.e));
  }
  if (name == "likely") {
    nargs(1, 1);
    return build(*e.args[0]);
  }

  // TVM prints `dtype=` on calls whose type it does not infer
  // (T.if_then_else(c, a, 0.0, dtype="float32"), T.sqrt(x, dtype="float32")):
  // the call's result type. Literals take it; a typed result converts to it.
  std::optional<DataType> want;
  for (size_t k = 0; k < e.kwargs.size(); ++k) {
    if (e.kwargs[k].first != "dtype")
      src_.fail(e.kwarg_pos[k], "unexpected keyword argument " + quote(e.kwargs[k].first) + " to " + fn);
    want = parse_dtype(*e.kwargs[k].second);
  }
  auto result = [&](Operand r) -> Operand {
    if (!want || r.e.dtype() == *want) return r;
    if (r.is_lit()) return adapt(r, *want);
    return typed(cast(*want, r.e));
  };
  std::vector<Operand> args;
  auto build_args = [&]() {
    for (const PyExprPtr &a : e.args) {
      args.push_back(build(*a));
      if (args.back().e.dtype().is_handle()) src_.fail(a->pos, "argument of " + fn + " is a handle");
    }
  };
  static const std::pair<const char *, const char *> kBinary[] = {
      {"min", "min"},           {"max", "max"},           {"floordiv", "//"},      {"floormod", "%"},
      {"truncdiv", "truncdiv"}, {"truncmod", "truncmod"}, {"Div", "truncdiv"},    {"Mod", "truncmod"},
      {"FloorDiv", "//"},       {"FloorMod", "%"},        {"bitwise_and", "&"},    {"bitwise_or", "|"},
      {"bitwise_xor", "^"},     {"shift_left", "<<"},     {"shift_right", ">>"},   {"ceildiv", "ceildiv"},
      {"Min", "min"},           {"Max", "max"},           {"Add", "+"},            {"Sub", "-"},
      {"Mul", "*"}};
  for (const auto &[spelling, op] : kBinary) {
    if (name != spelling) continue;
    nargs(2, 2);
    build_args();
    Operand a = args[0], b = args[1];
    if (want && a.is_lit() && b.is_lit()) a = adapt(a, *want);
    std::string o = op;
    if (o == "min" || o == "max" || o == "truncdiv" || o == "truncmod" || o == "ceildiv") {
      if (a.is_lit() && !b.is_lit()) a = adapt(a, b.e.dtype());
      if (b.is_lit() && !a.is_lit()) b = adapt(b, a.e.dtype());
      bool any_float = a.e.dtype().is_float() || b.e.dtype().is_float();
      if (o == "min") return result(typed(min(a.e, b.e)));
      if (o == "max") return result(typed(max(a.e, b.e)));
      if (o == "truncdiv") return result(typed(truncdiv(a.e, b.e)));
      if (any_float && o == "truncmod") src_.fail(e.pos, fn + " needs integer operands");
      if (o == "truncmod") return result(typed(truncmod(a.e, b.e)));
      // ceildiv(a, b) = floordiv(a + b - 1, b) on integers, ceil(a / b) on floats.
      if (any_float) return result(typed(call(Intrinsic::Ceil, {div(a.e, b.e)})));
      Operand num = build_binop("-", build_binop("+", a, b, e.pos), int_literal(1), e.pos);
      return result(build_binop("//", num, b, e.pos));
    }
    return result(build_binop(o, a, b, e.pos));
  }
  if (name == "bitwise_not") {
    nargs(1, 1);
    build_args();
    return result(build_unary("~", args[0], e.pos));
  }
  if (name == "Select" || name == "if_then_else") {
    nargs(3, 3);
    build_args();
    Operand c = args[0], t = args[1], f = args[2];
    if (want && t.is_lit()) t = adapt(t, *want);
    if (want && f.is_lit()) f = adapt(f, *want);
    if (t.is_lit() && !f.is_lit()) t = adapt(t, f.e.dtype());
    if (f.is_lit() && !t.is_lit()) f = adapt(f, t.e.dtype());
    if (t.e.dtype() != f.e.dtype() && !t.e.dtype().is_handle() && !f.e.dtype().is_handle()) {
      // Arms of different types meet in the promoted type, as in an expression.
      DataType common = promote_types(t.e.dtype(), f.e.dtype());
      t = typed(cast(common, t.e));
      f = typed(cast(common, f.e));
    }
    if (c.e.dtype().is_handle()) src_.fail(e.args[0]->pos, "the condition of " + fn + " is a handle");
    if (!c.e.dtype().is_bool()) c = typed(ne(c.e, make_const(c.e.dtype(), 0)));
    return result(typed(name == "Select" ? select(c.e, t.e, f.e) : if_then_else(c.e, t.e, f.e)));
  }
  if (auto op = intrinsic_from_name(name)) {
    int arity = intrinsic_arity(*op);
    nargs(arity, arity);
    build_args();
    std::vector<Expr> xs;
    // A literal next to a typed operand adapts (T.pow(x, 2) with x float16).
    DataType like = DataType::void_();
    for (const Operand &a : args)
      if (!a.is_lit()) like = like.is_void() ? a.e.dtype() : promote_types(like, a.e.dtype());
    if (like.is_void() && want) like = *want;
    for (Operand &a : args) xs.push_back(a.is_lit() && !like.is_void() ? adapt(a, like).e : a.e);
    if ((*op == Intrinsic::IsNan || *op == Intrinsic::IsInf || *op == Intrinsic::IsFinite) && !xs[0].dtype().is_float())
      xs[0] = cast(DataType::float32(), xs[0]);
    if (*op == Intrinsic::Abs && xs[0].dtype().is_bool()) xs[0] = cast(DataType::int32(), xs[0]);
    if (*op == Intrinsic::RoundToTf32 && xs[0].dtype() != DataType::float32())
      src_.fail(e.args[0]->pos, "T.round_to_tf32 rounds a float32; this argument is " + xs[0].dtype().str());
    return result(typed(call(*op, std::move(xs))));
  }
  src_.fail(e.pos, "unknown function " + quote(fn));
}

Operand Builder::build_opaque_call(const PyExpr &e, const std::string &fn, const Expr &self) {
  std::vector<Expr> args;
  if (self.defined()) args.push_back(self);
  for (const PyExprPtr &a : e.args) {
    if (a->kind == PyExprKind::Str) {
      args.push_back(StringImm::make(a->name));
      continue;
    }
    if (a->kind == PyExprKind::Attr && a->name == "data" && a->base->kind == PyExprKind::Name) {
      // A.data: the buffer's address (a view's: its base buffer's).
      const Binding *b = lookup(a->base->name);
      if (b && b->kind == Binding::Kind::Buffer) {
        args.push_back(BufferPtr::make(b->buffer));
        continue;
      }
    }
    if (a->kind == PyExprKind::Name) {
      // A handle parameter passes through; a buffer passes its address.
      const Binding *b = lookup(a->name);
      if (b && b->kind == Binding::Kind::Handle) {
        args.push_back(b->handle);
        continue;
      }
      if (b && b->kind == Binding::Kind::Buffer) {
        args.push_back(BufferPtr::make(b->buffer));
        continue;
      }
      if (b && b->kind == Binding::Kind::Allocation && b->buffer.defined()) {
        args.push_back(BufferPtr::make(b->buffer));
        continue;
      }
    }
    args.push_back(build(*a).e);
  }
  DataType t = default_opaque_dtype(fn, args);
  for (size_t k = 0; k < e.kwargs.size(); ++k) {
    if (e.kwargs[k].first != "dtype")
      src_.fail(e.kwarg_pos[k], "unexpected keyword argument " + quote(e.kwargs[k].first) + " to " + fn);
    t = parse_dtype(*e.kwargs[k].second);
  }
  return typed(OpaqueCall::make(t, fn, std::move(args)));
}

}  // namespace tessera::script::detail
