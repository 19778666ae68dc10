//===- lib/arith/ArithUtil.cpp - Private helpers of tessera::arith --------===//
#include "ArithUtil.h"

#include <functional>
#include <sstream>

#include "tessera/ir/Functor.h"

namespace tessera::arith::detail {

using ir::BinaryOp;
using ir::DataType;

int64_t sat_add(int64_t a, int64_t b) {
  // An infinite end absorbs finite ones; the callers never add opposite
  // infinities (both operands are lower ends or both upper ends).
  if (a == IntBound::kNegInf || b == IntBound::kNegInf) return IntBound::kNegInf;
  if (a == IntBound::kPosInf || b == IntBound::kPosInf) return IntBound::kPosInf;
  if (auto r = checked_add(a, b)) return *r;
  return a > 0 ? IntBound::kPosInf : IntBound::kNegInf;
}

int64_t sat_neg(int64_t a) {
  if (a == IntBound::kNegInf) return IntBound::kPosInf;
  if (a == IntBound::kPosInf) return IntBound::kNegInf;
  return -a;
}

int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  bool inf = a == IntBound::kNegInf || a == IntBound::kPosInf || b == IntBound::kNegInf ||
             b == IntBound::kPosInf;
  if (!inf)
    if (auto r = checked_mul(a, b)) return *r;
  return neg ? IntBound::kNegInf : IntBound::kPosInf;
}

std::optional<int64_t> fold_binary(BinaryOp op, DataType t, int64_t a, int64_t b) {
  // Unsigned values are stored as bit patterns: compute on uint64.
  if (t.is_uint()) {
    uint64_t x = static_cast<uint64_t>(a), y = static_cast<uint64_t>(b);
    switch (op) {
      case BinaryOp::Add: return static_cast<int64_t>(x + y);
      case BinaryOp::Sub: return static_cast<int64_t>(x - y);
      case BinaryOp::Mul: return static_cast<int64_t>(x * y);
      case BinaryOp::Div: case BinaryOp::FloorDiv:
        if (y == 0) return std::nullopt;
        return static_cast<int64_t>(x / y);
      case BinaryOp::Mod: case BinaryOp::FloorMod:
        if (y == 0) return std::nullopt;
        return static_cast<int64_t>(x % y);
      case BinaryOp::Min: return static_cast<int64_t>(x < y ? x : y);
      case BinaryOp::Max: return static_cast<int64_t>(x > y ? x : y);
      case BinaryOp::EQ: return x == y;
      case BinaryOp::NE: return x != y;
      case BinaryOp::LT: return x < y;
      case BinaryOp::LE: return x <= y;
      case BinaryOp::GT: return x > y;
      case BinaryOp::GE: return x >= y;
      case BinaryOp::BitAnd: return static_cast<int64_t>(x & y);
      case BinaryOp::BitOr: return static_cast<int64_t>(x | y);
      case BinaryOp::BitXor: return static_cast<int64_t>(x ^ y);
      case BinaryOp::Shl:
        if (y >= static_cast<uint64_t>(t.bits())) return std::nullopt;
        return static_cast<int64_t>(x << y);
      case BinaryOp::Shr:
        if (y >= static_cast<uint64_t>(t.bits())) return std::nullopt;
        return static_cast<int64_t>(x >> y);
      default: return std::nullopt;
    }
  }
  // Signed (and bool): wrap-around add/sub/mul through uint64.
  auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  switch (op) {
    case BinaryOp::Add: return static_cast<int64_t>(u(a) + u(b));
    case BinaryOp::Sub: return static_cast<int64_t>(u(a) - u(b));
    case BinaryOp::Mul: return static_cast<int64_t>(u(a) * u(b));
    case BinaryOp::Div:
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      return a / b;
    case BinaryOp::Mod:
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      return a % b;
    case BinaryOp::FloorDiv:
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      return floordiv64(a, b);
    case BinaryOp::FloorMod:
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      return floormod64(a, b);
    case BinaryOp::Min: return a < b ? a : b;
    case BinaryOp::Max: return a > b ? a : b;
    case BinaryOp::EQ: return a == b;
    case BinaryOp::NE: return a != b;
    case BinaryOp::LT: return a < b;
    case BinaryOp::LE: return a <= b;
    case BinaryOp::GT: return a > b;
    case BinaryOp::GE: return a >= b;
    case BinaryOp::And: return (a != 0) && (b != 0);
    case BinaryOp::Or: return (a != 0) || (b != 0);
    case BinaryOp::BitAnd: return a & b;
    case BinaryOp::BitOr: return a | b;
    case BinaryOp::BitXor: return a ^ b;
    case BinaryOp::Shl:
      if (b < 0 || b >= t.bits()) return std::nullopt;
      return static_cast<int64_t>(u(a) << b);
    case BinaryOp::Shr:
      if (b < 0 || b >= t.bits()) return std::nullopt;
      return a >> b;  // arithmetic shift on signed values
  }
  return std::nullopt;
}

bool fits(const IntBound &b, DataType t) {
  IntBound r = IntBound::of_dtype(t);
  return r.min <= b.min && b.max <= r.max;
}

namespace {

int precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return 1;
    case BinaryOp::And: return 2;
    case BinaryOp::EQ: case BinaryOp::NE: case BinaryOp::LT: case BinaryOp::LE:
    case BinaryOp::GT: case BinaryOp::GE: return 4;
    case BinaryOp::BitOr: case BinaryOp::BitXor: case BinaryOp::BitAnd: return 5;
    case BinaryOp::Shl: case BinaryOp::Shr: return 6;
    case BinaryOp::Add: case BinaryOp::Sub: return 7;
    case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod: case BinaryOp::FloorDiv:
    case BinaryOp::FloorMod: return 8;
    case BinaryOp::Min: case BinaryOp::Max: return 10;
  }
  return 10;
}

const char *infix(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return " + ";
    case BinaryOp::Sub: return " - ";
    case BinaryOp::Mul: return " * ";
    case BinaryOp::FloorDiv: return " // ";
    case BinaryOp::FloorMod: return " % ";
    case BinaryOp::EQ: return " == ";
    case BinaryOp::NE: return " != ";
    case BinaryOp::LT: return " < ";
    case BinaryOp::LE: return " <= ";
    case BinaryOp::GT: return " > ";
    case BinaryOp::GE: return " >= ";
    case BinaryOp::And: return " and ";
    case BinaryOp::Or: return " or ";
    case BinaryOp::BitAnd: return " & ";
    case BinaryOp::BitOr: return " | ";
    case BinaryOp::BitXor: return " ^ ";
    case BinaryOp::Shl: return " << ";
    case BinaryOp::Shr: return " >> ";
    default: return nullptr;  // printed as calls
  }
}

void print(std::ostream &os, const ir::Expr &e, int outer) {
  if (const auto *imm = e.as<ir::IntImm>()) {
    if (e.dtype().is_bool()) {
      os << (imm->value ? "True" : "False");
      return;
    }
    os << imm->value;
    return;
  }
  if (const auto *f = e.as<ir::FloatImm>()) {
    os << f->value;
    return;
  }
  if (const auto *v = e.as<ir::VarNode>()) {
    os << v->name;
    return;
  }
  if (const auto *b = e.as<ir::Binary>()) {
    const char *op = infix(b->op);
    if (!op) {
      const char *fn = b->op == BinaryOp::Min   ? "T.min"
                       : b->op == BinaryOp::Max ? "T.max"
                       : b->op == BinaryOp::Div ? "T.truncdiv"
                                                : "T.truncmod";
      os << fn << "(";
      print(os, b->a, 0);
      os << ", ";
      print(os, b->b, 0);
      os << ")";
      return;
    }
    int p = precedence(b->op);
    if (p < outer) os << "(";
    print(os, b->a, p);
    os << op;
    print(os, b->b, p + 1);
    if (p < outer) os << ")";
    return;
  }
  if (const auto *u = e.as<ir::Unary>()) {
    os << (u->op == ir::UnaryOp::Not ? "not " : u->op == ir::UnaryOp::Neg ? "-" : "~");
    print(os, u->a, 9);
    return;
  }
  if (const auto *c = e.as<ir::Cast>()) {
    os << "T.Cast(\"" << e.dtype().str() << "\", ";
    print(os, c->value, 0);
    os << ")";
    return;
  }
  if (const auto *s = e.as<ir::Select>()) {
    os << "T.Select(";
    print(os, s->cond, 0);
    os << ", ";
    print(os, s->true_value, 0);
    os << ", ";
    print(os, s->false_value, 0);
    os << ")";
    return;
  }
  if (const auto *l = e.as<ir::Load>()) {
    os << l->buffer->name << "[";
    for (size_t i = 0; i < l->indices.size(); ++i) {
      if (i) os << ", ";
      print(os, l->indices[i], 0);
    }
    os << "]";
    return;
  }
  if (const auto *c = e.as<ir::Call>()) {
    os << "T." << ir::intrinsic_name(c->op) << "(";
    for (size_t i = 0; i < c->args.size(); ++i) {
      if (i) os << ", ";
      print(os, c->args[i], 0);
    }
    os << ")";
    return;
  }
  os << "<" << ir::node_kind_name(e.kind()) << ">";
}

}  // namespace

std::string expr_text(const ir::Expr &e) {
  std::ostringstream os;
  if (!e.defined()) return "<undefined>";
  print(os, e, 0);
  return os.str();
}

bool uses_var(const ir::Expr &e, const std::function<bool(const ir::VarNode *)> &pred) {
  struct Finder : ir::IRVisitor {
    const std::function<bool(const ir::VarNode *)> &pred;
    bool found = false;
    explicit Finder(const std::function<bool(const ir::VarNode *)> &p) : pred(p) {}
    void visit_(const ir::VarNode *op) override {
      if (pred(op)) found = true;
    }
  } finder(pred);
  finder.visit(e);
  return finder.found;
}

}  // namespace tessera::arith::detail
