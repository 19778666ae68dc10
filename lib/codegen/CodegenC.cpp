//===- lib/codegen/CodegenC.cpp - C-like source printer (base) --------------===//
//
// Precedence follows C (16 atoms and postfix, 15 unary and casts, 13 `* / %`,
// 12 `+ -`, 11 shifts, 10 relational, 9 equality, 8 `&`, 7 `^`, 6 `|`, 5 `&&`,
// 4 `||`, 3 `?:`). Operands of bit operations and of `||` get parentheses
// whenever they are themselves binary, even where C would not need them, as
// compilers warn (-Wparentheses) and readers stumble there.
//
//===----------------------------------------------------------------------===//
#include "tessera/codegen/CodegenC.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"

namespace tessera::codegen {

using namespace tessera::ir;

namespace {

const std::unordered_set<std::string> &reserved_words() {
  static const std::unordered_set<std::string> k = {
      "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
      "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short",
      "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
      "class", "delete", "new", "namespace", "template", "this", "true", "false", "operator", "private", "public",
      "protected", "virtual", "friend", "using", "typename", "try", "catch", "throw", "half", "half2", "main",
      "min", "max", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "floordiv", "floormod", "abs",
      "exp", "log", "sqrt", "pow", "float4", "int4", "uint4", "dim3", "nullptr", "not", "and", "or", "xor"};
  return k;
}

std::string sanitize(const std::string &hint) {
  std::string s;
  for (char c : hint) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  // Leading "__" and "_X" are reserved to the implementation in C and C++.
  while (s.size() > 1 && s[0] == '_' && (s[1] == '_' || std::isupper(static_cast<unsigned char>(s[1]))))
    s = s.substr(1);
  return s;
}

int binary_prec(BinaryOp op) {
  switch (op) {
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod: return 13;
    case BinaryOp::Add:
    case BinaryOp::Sub: return 12;
    case BinaryOp::Shl:
    case BinaryOp::Shr: return 11;
    case BinaryOp::LT:
    case BinaryOp::LE:
    case BinaryOp::GT:
    case BinaryOp::GE: return 10;
    case BinaryOp::EQ:
    case BinaryOp::NE: return 9;
    case BinaryOp::BitAnd: return 8;
    case BinaryOp::BitXor: return 7;
    case BinaryOp::BitOr: return 6;
    case BinaryOp::And: return 5;
    case BinaryOp::Or: return 4;
    default: return 0;
  }
}

const char *binary_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::EQ: return "==";
    case BinaryOp::NE: return "!=";
    case BinaryOp::LT: return "<";
    case BinaryOp::LE: return "<=";
    case BinaryOp::GT: return ">";
    case BinaryOp::GE: return ">=";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    default: return "?";
  }
}

bool wants_clear_operands(BinaryOp op) {
  return op == BinaryOp::Or || op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor ||
         op == BinaryOp::Shl || op == BinaryOp::Shr;
}

/// The shortest decimal that reads back as the same float (or double).
std::string shortest_decimal(double v, bool single) {
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (single ? std::strtof(buf, nullptr) == static_cast<float>(v) : std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

const char *const kFloorHelperInt =
    "__device__ __forceinline__ int floordiv(int a, int b) {\n"
    "  int q = a / b;\n"
    "  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;\n"
    "}\n";
const char *const kFloorModHelperInt =
    "__device__ __forceinline__ int floormod(int a, int b) {\n"
    "  int r = a % b;\n"
    "  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n"
    "}\n";
const char *const kFloorHelperI64 =
    "__device__ __forceinline__ long long floordiv(long long a, long long b) {\n"
    "  long long q = a / b;\n"
    "  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;\n"
    "}\n";
const char *const kFloorModHelperI64 =
    "__device__ __forceinline__ long long floormod(long long a, long long b) {\n"
    "  long long r = a % b;\n"
    "  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n"
    "}\n";
// T.round_to_tf32: to nearest, ties away (cvt.rna.tf32.f32's rounding), the
// low 13 bits cleared; the bit form runs on every target, exactly as the
// interpreter's (support/Half.h).
const char *const kRoundTf32Helper =
    "__device__ __forceinline__ float round_to_tf32(float x) {\n"
    "  unsigned u = __float_as_uint(x);\n"
    "  return (u & 0x7f800000u) == 0x7f800000u ? x : __uint_as_float((u + 0x1000u) & 0xffffe000u);\n"
    "}\n";
// ... and of a double (the float64 reference program): 11 significant bits.
const char *const kRoundTf32HelperF64 =
    "__device__ __forceinline__ double round_to_tf32(double x) {\n"
    "  unsigned long long u = __double_as_longlong(x);\n"
    "  return (u & 0x7ff0000000000000ull) == 0x7ff0000000000000ull\n"
    "             ? x : __longlong_as_double((u + (1ull << 41)) & ~((1ull << 42) - 1));\n"
    "}\n";

}  // namespace

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

std::string CodegenC::fresh(const std::string &hint) {
  std::string base = sanitize(hint);
  std::string s = base;
  for (int i = 1; used_.count(s) || reserved_words().count(s); ++i) s = base + "_" + std::to_string(i);
  used_.insert(s);
  return s;
}

void CodegenC::reserve(const Var &v, const std::string &name) {
  TESSERA_ICHECK(!used_.count(name)) << "name '" << name << "' reserved twice";
  used_.insert(name);
  names_[v.get()] = name;
}

std::string CodegenC::name_of(const Var &v) {
  auto it = names_.find(v.get());
  if (it != names_.end()) return it->second;
  return names_[v.get()] = fresh(v.name());
}

std::string CodegenC::name_of(const Buffer &b) {
  auto it = names_.find(b.get());
  if (it != names_.end()) return it->second;
  return names_[b.get()] = fresh(b.name());
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

std::string CodegenC::type_name(DataType t) {
  if (t.lanes() != 1) throw CodegenError("vector type " + t.str() + " is not supported yet");
  if (t.is_bool()) return "bool";
  if (t.is_int()) {
    switch (t.bits()) {
      case 8: return "signed char";
      case 16: return "short";
      case 32: return "int";
      case 64: return "long long";
    }
  }
  if (t.is_uint()) {
    switch (t.bits()) {
      case 8: return "unsigned char";
      case 16: return "unsigned short";
      case 32: return "unsigned int";
      case 64: return "unsigned long long";
    }
  }
  if (t == DataType::float32()) return "float";
  if (t == DataType::float64()) return "double";
  throw CodegenError("dtype " + t.str() + " is not supported by the C code generator");
}

CodegenC::Code CodegenC::int_imm(DataType t, int64_t v) {
  if (t.is_bool()) return {v ? "true" : "false", kAtom};
  if (t == DataType::int32()) {
    if (v == INT32_MIN) return {"(-2147483647 - 1)", kAtom};
    return {std::to_string(v), v < 0 ? kUnary : kAtom};
  }
  if (t == DataType::int64()) {
    if (v == INT64_MIN) return {"(-9223372036854775807LL - 1)", kAtom};
    return {std::to_string(v) + "LL", v < 0 ? kUnary : kAtom};
  }
  if (t.is_uint() && t.bits() >= 32) {
    std::string s = std::to_string(static_cast<uint64_t>(v)) + (t.bits() == 64 ? "ULL" : "U");
    return {s, kAtom};
  }
  return {"(" + type_name(t) + ")" + std::to_string(v), kUnary};
}

CodegenC::Code CodegenC::float_imm(DataType t, double v) {
  bool single = t == DataType::float32();
  if (std::isinf(v) || std::isnan(v)) {
    std::string bits = single ? "__int_as_float(0x7f800000)" : "__longlong_as_double(0x7ff0000000000000LL)";
    if (std::isnan(v)) bits = single ? "__int_as_float(0x7fc00000)" : "__longlong_as_double(0x7ff8000000000000LL)";
    if (v < 0) return {"-" + bits, kUnary};
    return {bits, kAtom};
  }
  std::string s = shortest_decimal(v, single) + (single ? "f" : "");
  return {s, v < 0 ? kUnary : kAtom};
}

CodegenC::Code CodegenC::cast(DataType to, const Expr &value) {
  if (value.dtype() == to) return print(value);
  return {"(" + type_name(to) + ")" + operand(value, kUnary), kUnary};
}

CodegenC::Code CodegenC::min_max(bool is_min, const Expr &a, const Expr &b) {
  DataType t = a.dtype();
  std::string fn = is_min ? "min" : "max";
  if (t == DataType::float32()) fn = is_min ? "fminf" : "fmaxf";
  else if (t == DataType::float64()) fn = is_min ? "fmin" : "fmax";
  else if (t.is_bool()) return {operand(a, 6) + (is_min ? " && " : " || ") + operand(b, 6), is_min ? 5 : 4};
  return {fn + "(" + expr(a) + ", " + expr(b) + ")", kAtom};
}

CodegenC::Code CodegenC::floor_div_mod(const Binary &b) {
  bool div = b.op == BinaryOp::FloorDiv;
  DataType t = b.a.dtype();
  if (t.is_uint()) return {operand(b.a, 13) + (div ? " / " : " % ") + operand(b.b, 14), 13};
  if (t.is_float()) {
    std::string floor_fn = t == DataType::float64() ? "floor" : "floorf";
    if (t != DataType::float64() && t != DataType::float32())
      throw CodegenError("floor division of " + t.str() + " is not supported yet");
    std::string q = floor_fn + "(" + operand(b.a, 13) + " / " + operand(b.b, 14) + ")";
    if (div) return {q, kAtom};
    return {operand(b.a, 12) + " - " + q + " * " + operand(b.b, 14), 12};
  }
  bool wide = t.bits() == 64;
  if (div) helpers_.insert(wide ? kFloorHelperI64 : kFloorHelperInt);
  else helpers_.insert(wide ? kFloorModHelperI64 : kFloorModHelperInt);
  return {std::string(div ? "floordiv(" : "floormod(") + expr(b.a) + ", " + expr(b.b) + ")", kAtom};
}

CodegenC::Code CodegenC::binary(const Binary &b) {
  switch (b.op) {
    case BinaryOp::FloorDiv:
    case BinaryOp::FloorMod: return floor_div_mod(b);
    case BinaryOp::Min:
    case BinaryOp::Max: return min_max(b.op == BinaryOp::Min, b.a, b.b);
    default: break;
  }
  int prec = binary_prec(b.op);
  int lhs_prec = prec, rhs_prec = prec + 1;
  if (wants_clear_operands(b.op)) {
    auto clear = [&](const Expr &e, int p) {
      const auto *x = e.as<Binary>();
      return x && x->op != b.op && binary_prec(x->op) > 0 ? kUnary : p;
    };
    lhs_prec = clear(b.a, lhs_prec);
    rhs_prec = clear(b.b, rhs_prec);
  }
  // Comparisons do not chain in C the way they read.
  if (prec == 9 || prec == 10) lhs_prec = prec + 1;
  return {operand(b.a, lhs_prec) + " " + binary_symbol(b.op) + " " + operand(b.b, rhs_prec), prec};
}

CodegenC::Code CodegenC::round_to_tf32(const Expr &x) {
  helpers_.insert(x.dtype() == DataType::float64() ? kRoundTf32HelperF64 : kRoundTf32Helper);
  return {"round_to_tf32(" + expr(x) + ")", kAtom};
}

CodegenC::Code CodegenC::call(const Call &c) {
  throw CodegenError(std::string("intrinsic T.") + intrinsic_name(c.op) + " is not supported by the C code generator");
}

std::string CodegenC::operand(const Expr &e, int prec) {
  Code c = print(e);
  return c.prec < prec ? "(" + c.text + ")" : c.text;
}

CodegenC::Code CodegenC::print(const Expr &e) {
  switch (e.kind()) {
    case NodeKind::IntImm: return int_imm(e.dtype(), e.as<IntImm>()->value);
    case NodeKind::FloatImm: return float_imm(e.dtype(), e.as<FloatImm>()->value);
    case NodeKind::Var: return {name_of(Var::from(e)), kAtom};
    case NodeKind::Binary: return binary(*e.as<Binary>());
    case NodeKind::Unary: {
      const auto *u = e.as<Unary>();
      const char *sym = u->op == UnaryOp::Not ? "!" : u->op == UnaryOp::BitNot ? "~" : "-";
      return {sym + operand(u->a, kAtom), kUnary};
    }
    case NodeKind::Select: {
      const auto *s = e.as<Select>();
      return {operand(s->cond, 4) + " ? " + operand(s->true_value, 4) + " : " + operand(s->false_value, kTernary),
              kTernary};
    }
    case NodeKind::Cast: return cast(e.dtype(), e.as<Cast>()->value);
    case NodeKind::Load: {
      const auto *l = e.as<Load>();
      TESSERA_ICHECK(l->indices.size() == 1) << "codegen of an unflattened buffer '" << l->buffer.name() << "'";
      return {name_of(l->buffer) + "[" + expr(l->indices[0]) + "]", kAtom};
    }
    case NodeKind::Call: return call(*e.as<Call>());
    case NodeKind::Let: {
      // C has no let expressions; values are pure, so substitute.
      const auto *l = e.as<Let>();
      return print(substitute(l->body, {{l->var, l->value}}));
    }
    default: TESSERA_UNREACHABLE("expression kind " << node_kind_name(e.kind()));
  }
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void CodegenC::line(const std::string &s) { body_ << std::string(2 * indent_, ' ') << s << '\n'; }

void CodegenC::evaluate(const Expr &e) {
  if (e.is<IntImm>()) return;  // T.evaluate(0): a no-op
  line(expr(e) + ";");
}

void CodegenC::loop_pragma(const For &f) {
  if (f.for_kind == ForKind::Unrolled) line("#pragma unroll");
}

bool CodegenC::vector_move(const For &) { return false; }

void CodegenC::stmt(const Stmt &s) {
  switch (s.kind()) {
    case NodeKind::Seq:
      for (const Stmt &x : s.as<Seq>()->stmts) stmt(x);
      return;
    case NodeKind::For: {
      const auto *f = s.as<For>();
      TESSERA_ICHECK(f->for_kind != ForKind::ThreadBinding) << "thread-bound loop '" << f->loop_var.name()
                                                           << "' left after lowering";
      if (f->for_kind == ForKind::Vectorized && vector_move(*f)) return;
      loop_pragma(*f);
      std::string v = name_of(f->loop_var);
      Expr end = arith::simplify(add(f->min, f->extent));
      line("for (" + type_name(f->loop_var.dtype()) + " " + v + " = " + expr(f->min) + "; " + v + " < " +
           operand(end, 11) + "; ++" + v + ") {");
      ++indent_;
      stmt(f->body);
      --indent_;
      line("}");
      // Loop variables are scoped: a sibling loop may reuse the name.
      used_.erase(v);
      names_.erase(f->loop_var.get());
      return;
    }
    case NodeKind::IfThenElse: {
      const auto *i = s.as<IfThenElse>();
      line("if (" + expr(i->cond) + ") {");
      ++indent_;
      stmt(i->then_case);
      --indent_;
      if (i->else_case) {
        line("} else {");
        ++indent_;
        stmt(*i->else_case);
        --indent_;
      }
      line("}");
      return;
    }
    case NodeKind::LetStmt: {
      const auto *l = s.as<LetStmt>();
      line("const " + type_name(l->var.dtype()) + " " + name_of(l->var) + " = " + expr(l->value) + ";");
      stmt(l->body);
      return;
    }
    case NodeKind::Store: {
      const auto *st = s.as<Store>();
      TESSERA_ICHECK(st->indices.size() == 1) << "codegen of an unflattened buffer '" << st->buffer.name() << "'";
      line(name_of(st->buffer) + "[" + expr(st->indices[0]) + "] = " + expr(st->value) + ";");
      return;
    }
    case NodeKind::Evaluate: return evaluate(s.as<Evaluate>()->value);
    default: TESSERA_UNREACHABLE("statement kind " << node_kind_name(s.kind()) << " left after lowering");
  }
}

std::string CodegenC::helper_definitions() const {
  std::string out;
  // A fixed order (int before long long, div before mod) keeps output stable.
  for (const char *h : {kFloorHelperInt, kFloorModHelperInt, kFloorHelperI64, kFloorModHelperI64, kRoundTf32Helper,
                        kRoundTf32HelperF64})
    if (helpers_.count(h)) out += std::string(h) + "\n";
  return out;
}

}  // namespace tessera::codegen
