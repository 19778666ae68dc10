//===- DiffText.cpp - Short renderings of IR for diff messages -------------===//
//
// structural_diff names the first difference in a few words; these render an
// expression as one line of TVMScript-like text and a statement as the path
// segment it contributes. They are not the printer: no line breaks, no
// declarations, and deep expressions are cut off.
//
//===----------------------------------------------------------------------===//
#include "DiffText.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tessera::ir::detail {
namespace {

const char *binary_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Sub:
      return "-";
    case BinaryOp::Mul:
      return "*";
    case BinaryOp::Div:
      return "/";
    case BinaryOp::FloorDiv:
      return "//";
    case BinaryOp::FloorMod:
      return "%";
    case BinaryOp::EQ:
      return "==";
    case BinaryOp::NE:
      return "!=";
    case BinaryOp::LT:
      return "<";
    case BinaryOp::LE:
      return "<=";
    case BinaryOp::GT:
      return ">";
    case BinaryOp::GE:
      return ">=";
    case BinaryOp::And:
      return "and";
    case BinaryOp::Or:
      return "or";
    case BinaryOp::BitAnd:
      return "&";
    case BinaryOp::BitOr:
      return "|";
    case BinaryOp::BitXor:
      return "^";
    case BinaryOp::Shl:
      return "<<";
    case BinaryOp::Shr:
      return ">>";
    default:
      return nullptr;  // Mod, Min, Max are printed as calls
  }
}

/// The shortest decimal text that reads back as exactly `v`.
std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  // Shortest text that reads back exactly.
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace

std::string expr_text(const Expr &e, int depth) {
  if (!e.defined()) return "(undefined)";
  if (depth == 0) return "...";
  auto list = [&](const std::vector<Expr> &xs) {
    std::string s;
    for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + expr_text(xs[i], depth - 1);
    return s;
  };
  switch (e.kind()) {
    case NodeKind::IntImm: {
      int64_t v = e.as<IntImm>()->value;
      if (e.dtype().is_bool()) return v ? "True" : "False";
      if (e.dtype() == DataType::int32()) return std::to_string(v);
      return "T." + e.dtype().str() + "(" + std::to_string(v) + ")";
    }
    case NodeKind::FloatImm:
      return "T." + e.dtype().str() + "(" + float_text(e.as<FloatImm>()->value) + ")";
    case NodeKind::Var:
      return e.as<VarNode>()->name;
    case NodeKind::Binary: {
      const auto *b = e.as<Binary>();
      if (const char *sym = binary_symbol(b->op))
        return "(" + expr_text(b->a, depth - 1) + " " + sym + " " + expr_text(b->b, depth - 1) + ")";
      const char *fn = b->op == BinaryOp::Mod ? "truncmod" : b->op == BinaryOp::Min ? "min" : "max";
      return std::string("T.") + fn + "(" + list({b->a, b->b}) + ")";
    }
    case NodeKind::Unary: {
      const auto *u = e.as<Unary>();
      const char *sym = u->op == UnaryOp::Not ? "not " : u->op == UnaryOp::BitNot ? "~" : "-";
      return sym + expr_text(u->a, depth - 1);
    }
    case NodeKind::Select: {
      const auto *s = e.as<Select>();
      return "T.Select(" + list({s->cond, s->true_value, s->false_value}) + ")";
    }
    case NodeKind::Cast:
      return "T.Cast(\"" + e.dtype().str() + "\", " + expr_text(e.as<Cast>()->value, depth - 1) + ")";
    case NodeKind::Load: {
      const auto *l = e.as<Load>();
      return l->buffer.name() + "[" + list(l->indices) + "]";
    }
    case NodeKind::Call: {
      const auto *c = e.as<Call>();
      return std::string("T.") + intrinsic_name(c->op) + "(" + list(c->args) + ")";
    }
    case NodeKind::StringImm: return "\"" + e.as<StringImm>()->value + "\"";
    case NodeKind::BufferPtr: return e.as<BufferPtr>()->buffer.name() + ".data";
    case NodeKind::OpaqueCall: {
      const auto *c = e.as<OpaqueCall>();
      return c->callee + "(" + list(c->args) + ")";
    }
    case NodeKind::Let: {
      const auto *l = e.as<Let>();
      return "T.let(" + l->var.name() + ", " + expr_text(l->value, depth - 1) + ", " +
             expr_text(l->body, depth - 1) + ")";
    }
    default:
      return node_kind_name(e.kind());
  }
}

std::string stmt_brief(const Stmt &s) {
  if (!s.defined()) return "(nothing)";
  if (const auto *f = s.as<For>()) return "For(" + f->loop_var.name() + ")";
  if (const auto *b = s.as<Block>()) return "Block(" + b->name + ")";
  if (const auto *st = s.as<Store>()) return "Store(" + st->buffer.name() + ")";
  if (const auto *l = s.as<LetStmt>()) return "LetStmt(" + l->var.name() + ")";
  if (const auto *q = s.as<Seq>()) return "Seq(" + std::to_string(q->stmts.size()) + " statements)";
  return node_kind_name(s.kind());
}

}  // namespace tessera::ir::detail
