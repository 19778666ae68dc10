//===- Printer.cpp - Writing canonical TVMScript ---------------------------===//
//
// One Printer object prints one function (or one statement / expression). It
// walks the IR in text order and names every variable and buffer the first
// time it is printed, which is where it is defined in a well-formed program,
// so the names are stable: once printed they are unique, and printing the
// re-parsed text hands every variable its own hint back.
//
// Expressions are printed with Python's operator precedence and only the
// parentheses that precedence and left-associativity require.
//
//===----------------------------------------------------------------------===//
#include "tessera/script/Printer.h"

#include "OpaqueCalls.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/Functor.h"
#include "tessera/support/Error.h"

namespace tessera::script {
namespace {

using namespace ir;

// Python operator precedence, lowest to highest. Comparisons chain in Python
// (`a < b < c`), so a comparison operand of a comparison needs parentheses.
enum Prec : int {
  kOr = 3,
  kAnd,
  kNot,
  kCmp,
  kBitOr,
  kBitXor,
  kBitAnd,
  kShift,
  kAdd,
  kMul,
  kUnary,
  kAtom = 20,
};

struct Printed {
  std::string text;
  int prec;
};

// Names a variable may not take: Python keywords, the `T`/`I` prefixes, and
// `range` and `float`, which printed loops and annotations call.
bool is_reserved(const std::string &s) {
  static const std::unordered_set<std::string> kReserved = {
      "False", "None",   "True",    "and",      "as",     "assert", "async",  "await",
      "break", "class",  "continue", "def",     "del",    "elif",   "else",   "except",
      "finally", "for",  "from",    "global",   "if",     "import", "in",     "is",
      "lambda", "nonlocal", "not",  "or",       "pass",   "raise",  "return", "try",
      "while", "with",   "yield",   "T",        "I",      "range",  "float"};
  return kReserved.count(s) != 0;
}

// A valid Python identifier close to `hint`.
std::string sanitize(const std::string &hint) {
  std::string s;
  for (char c : hint) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s.empty()) s = "v";
  if (s[0] >= '0' && s[0] <= '9') s = "v" + s;
  return s;
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The value a float constant of type `t` takes when read from decimal `v`.
double round_to(DataType t, double v) {
  Expr e = FloatImm::make(t, v);
  return e.as<FloatImm>()->value;
}

// The shortest decimal spelling of `v` that reads back to the same value of
// type `t`, written like Python's repr: "0.5", "1.0", "1e-05", "1.5e+20".
std::string float_repr(DataType t, double v) {
  char buf[64];
  int prec = 1;
  for (; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
    double back = std::strtod(buf, nullptr);
    if (round_to(t, back) == v) break;
  }
  // buf is "[-]d.ddde[+-]xx": split into sign, digits and exponent.
  std::string s = buf;
  bool negative = s[0] == '-';
  if (negative) s = s.substr(1);
  size_t e_pos = s.find('e');
  int exp = std::atoi(s.c_str() + e_pos + 1);
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i)
    if (s[i] != '.') digits += s[i];
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  int n = static_cast<int>(digits.size());
  if (exp >= -4 && exp < 16) {
    if (exp < 0) {
      out += "0." + std::string(-exp - 1, '0') + digits;
    } else if (exp + 1 >= n) {
      out += digits + std::string(exp + 1 - n, '0') + ".0";
    } else {
      out += digits.substr(0, exp + 1) + "." + digits.substr(exp + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (n > 1) out += "." + digits.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof(ebuf), "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
  return out + ebuf;
}

std::string dtype_fn(DataType t) { return "T." + t.str(); }

const char *binary_symbol(BinaryOp op, int &prec) {
  switch (op) {
    case BinaryOp::Add: prec = kAdd; return "+";
    case BinaryOp::Sub: prec = kAdd; return "-";
    case BinaryOp::Mul: prec = kMul; return "*";
    case BinaryOp::Div: prec = kMul; return "/";
    case BinaryOp::FloorDiv: prec = kMul; return "//";
    case BinaryOp::FloorMod: prec = kMul; return "%";
    case BinaryOp::EQ: prec = kCmp; return "==";
    case BinaryOp::NE: prec = kCmp; return "!=";
    case BinaryOp::LT: prec = kCmp; return "<";
    case BinaryOp::LE: prec = kCmp; return "<=";
    case BinaryOp::GT: prec = kCmp; return ">";
    case BinaryOp::GE: prec = kCmp; return ">=";
    case BinaryOp::And: prec = kAnd; return "and";
    case BinaryOp::Or: prec = kOr; return "or";
    case BinaryOp::BitAnd: prec = kBitAnd; return "&";
    case BinaryOp::BitOr: prec = kBitOr; return "|";
    case BinaryOp::BitXor: prec = kBitXor; return "^";
    case BinaryOp::Shl: prec = kShift; return "<<";
    case BinaryOp::Shr: prec = kShift; return ">>";
    default: return nullptr;  // printed as calls
  }
}

// Deep equality of two expressions with variables by identity: enough to tell
// whether a block iter var's domain is its loop's range.
bool same_expr(const Expr &a, const Expr &b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  if (const auto *x = a.as<IntImm>()) return x->value == b.as<IntImm>()->value;
  if (const auto *x = a.as<Binary>()) {
    const auto *y = b.as<Binary>();
    return x->op == y->op && same_expr(x->a, y->a) && same_expr(x->b, y->b);
  }
  if (const auto *x = a.as<Cast>()) return same_expr(x->value, b.as<Cast>()->value);
  return false;
}

// `a + b`, folded when both are integer constants.
Expr plus(const Expr &a, const Expr &b) {
  if (is_const_int(a, 0) && a.dtype() == b.dtype()) return b;
  auto x = as_const_int(a), y = as_const_int(b);
  if (x && y && a.dtype() == b.dtype()) return make_int(a.dtype(), *x + *y);
  if (a.dtype() != b.dtype()) return Binary::make(BinaryOp::Add, a, Cast::make(a.dtype(), b));
  // lo + (hi - lo) is hi: the extent of `range(1, n)` is `n - 1`.
  if (const auto *d = b.as<Binary>(); d && d->op == BinaryOp::Sub && same_expr(d->b, a)) return d->a;
  // `v - 1` + 3 is `v + 2`, and 1 + (n - 1) is n: what a TVM user writes.
  const Binary *bin = a.as<Binary>();
  std::optional<int64_t> k = y;
  if (x) {
    bin = b.as<Binary>();
    k = x;
  }
  if (k && bin && (bin->op == BinaryOp::Add || bin->op == BinaryOp::Sub)) {
    if (auto c = as_const_int(bin->b)) {
      int64_t sum = (bin->op == BinaryOp::Add ? *c : -*c) + *k;
      if (sum == 0) return bin->a;
      BinaryOp op = sum > 0 ? BinaryOp::Add : BinaryOp::Sub;
      return Binary::make(op, bin->a, make_int(a.dtype(), sum > 0 ? sum : -sum));
    }
  }
  return Binary::make(BinaryOp::Add, a, b);
}

/// A root block that carries allocations and nothing else.
bool only_allocates(const Block &b) {
  return b.iter_vars.empty() && b.reads.empty() && b.writes.empty() && !b.init && b.annotations.empty() &&
         is_const_int(b.predicate, 1);
}

bool is_default_root(const Block &b) { return only_allocates(b) && b.allocs.empty(); }

class Printer {
 public:
  explicit Printer(bool unique, const PrintOptions *opts = nullptr) : unique_(unique), opts_(opts) {}

  std::string str() const { return out_.str(); }

  //===--------------------------------------------------------------------===//
  // Names
  //===--------------------------------------------------------------------===//

  std::string name_of(const void *key, const std::string &hint) {
    if (!unique_) return hint;
    if (auto it = names_.find(key); it != names_.end()) {
      used_.insert(it->second);
      return it->second;
    }
    std::string base = sanitize(hint), name = base;
    for (int i = 1; is_reserved(name) || used_.count(name); ++i) name = base + "_" + std::to_string(i);
    used_.insert(name);
    names_.emplace(key, name);
    return name;
  }
  std::string name_of(const Var &v) { return name_of(v.get(), v.name()); }
  std::string name_of(const Buffer &b) { return name_of(b.get(), b.name()); }
  /// Ends the scope of a loop or iter variable: its name may be taken again by
  /// a variable of a sibling scope (as TVM prints `for i` in every loop nest).
  void release(const Var &v) {
    if (auto it = names_.find(v.get()); it != names_.end()) used_.erase(it->second);
  }
  /// Reserves a name that no variable may take (e.g. `var_A` of a handle).
  std::string name_as(const void *key, const std::string &hint) { return name_of(key, hint); }

  //===--------------------------------------------------------------------===//
  // Expressions
  //===--------------------------------------------------------------------===//

  std::string expr(const Expr &e) { return print_expr(e).text; }

  std::string paren(const Expr &e, bool need) {
    Printed p = print_expr(e);
    return need ? "(" + p.text + ")" : p.text;
  }
  std::string operand(const Expr &e, int min_prec) {
    Printed p = print_expr(e);
    return p.prec < min_prec ? "(" + p.text + ")" : p.text;
  }

  std::string call(const std::string &fn, const std::vector<Expr> &args) {
    std::string s = fn + "(";
    for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + expr(args[i]);
    return s + ")";
  }

  std::string indices(const Buffer &b, const std::vector<Expr> &idx) {
    std::string s = name_of(b) + "[";
    if (idx.empty()) return s + "()]";
    for (size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + expr(idx[i]);
    return s + "]";
  }

  Printed print_expr(const Expr &e) {
    if (!e.defined()) return {"None", kAtom};
    switch (e.kind()) {
      case NodeKind::IntImm: return print_int(e);
      case NodeKind::FloatImm: return print_float(e);
      case NodeKind::Var: return {name_of(Var::from(e)), kAtom};
      case NodeKind::Binary: return print_binary(*e.as<Binary>());
      case NodeKind::Unary: {
        const auto *u = e.as<Unary>();
        if (u->op == UnaryOp::Not) return {"not " + operand(u->a, kNot), kNot};
        return {(u->op == UnaryOp::Neg ? "-" : "~") + operand(u->a, kUnary), kUnary};
      }
      case NodeKind::Select: {
        const auto *s = e.as<Select>();
        return {call("T.Select", {s->cond, s->true_value, s->false_value}), kAtom};
      }
      case NodeKind::Cast: {
        const auto *c = e.as<Cast>();
        return {"T.Cast(" + quote(c->dtype.str()) + ", " + expr(c->value) + ")", kAtom};
      }
      case NodeKind::Load: {
        const auto *l = e.as<Load>();
        return {indices(l->buffer, l->indices), kAtom};
      }
      case NodeKind::Call: return {print_call(*e.as<Call>()), kAtom};
      case NodeKind::StringImm: return {quote(e.as<StringImm>()->value), kAtom};
      case NodeKind::BufferPtr: return {name_of(e.as<BufferPtr>()->buffer) + ".data", kAtom};
      case NodeKind::OpaqueCall: {
        const auto *c = e.as<OpaqueCall>();
        std::string s = c->callee + "(";
        size_t first = 0;
        if (c->callee == "access_ptr" && !c->args.empty() && c->args[0].is<BufferPtr>()) {
          s = name_of(c->args[0].as<BufferPtr>()->buffer) + ".access_ptr(";
          first = 1;
        }
        for (size_t i = first; i < c->args.size(); ++i) s += (i > first ? ", " : "") + expr(c->args[i]);
        if (c->dtype != detail::default_opaque_dtype(c->callee, c->args))
          s += std::string(c->args.empty() ? "" : ", ") + "dtype=" + quote(c->dtype.str());
        return {s + ")", kAtom};
      }
      case NodeKind::Let: {
        const auto *l = e.as<Let>();
        std::string var = name_of(l->var);
        return {"T.let(" + var + ", " + expr(l->value) + ", " + expr(l->body) + ")", kAtom};
      }
      default: break;
    }
    TESSERA_UNREACHABLE("printing a statement node as an expression");
  }

  Printed print_int(const Expr &e) {
    DataType t = e.dtype();
    int64_t v = e.as<IntImm>()->value;
    if (t.is_bool()) return {v ? "True" : "False", kAtom};
    if (t == DataType::int32()) return {std::to_string(v), v < 0 ? kUnary : kAtom};
    std::string text = t.is_uint() && t.bits() == 64 ? std::to_string(static_cast<uint64_t>(v)) : std::to_string(v);
    return {dtype_fn(t) + "(" + text + ")", kAtom};
  }

  Printed print_float(const Expr &e) {
    double v = e.as<FloatImm>()->value;
    std::string text;
    if (std::isnan(v))
      text = "\"nan\"";
    else if (std::isinf(v))
      text = v > 0 ? "\"inf\"" : "\"-inf\"";
    else
      text = float_repr(e.dtype(), v);
    return {dtype_fn(e.dtype()) + "(" + text + ")", kAtom};
  }

  Printed print_binary(const Binary &b) {
    switch (b.op) {
      case BinaryOp::Min: return {call("T.min", {b.a, b.b}), kAtom};
      case BinaryOp::Max: return {call("T.max", {b.a, b.b}), kAtom};
      case BinaryOp::Mod: return {call("T.truncmod", {b.a, b.b}), kAtom};
      case BinaryOp::Div:
        if (!b.a.dtype().is_float()) return {call("T.truncdiv", {b.a, b.b}), kAtom};
        break;
      default: break;
    }
    int prec = 0;
    const char *sym = binary_symbol(b.op, prec);
    // Left-associative: the left operand may share the precedence, the right
    // one may not; comparisons chain, so neither side may be a comparison.
    std::string lhs = operand(b.a, prec == kCmp ? prec + 1 : prec);
    std::string rhs = operand(b.b, prec + 1);
    return {lhs + " " + sym + " " + rhs, prec};
  }

  std::string print_call(const Call &c) {
    std::string fn = std::string("T.") + intrinsic_name(c.op);
    switch (c.op) {
      case Intrinsic::Reinterpret:
        return fn + "(" + quote(c.dtype.str()) + ", " + expr(c.args[0]) + ")";
      case Intrinsic::MaxValue:
      case Intrinsic::MinValue: return fn + "(" + quote(c.dtype.str()) + ")";
      default: return call(fn, c.args);
    }
  }

  //===--------------------------------------------------------------------===//
  // Statements
  //===--------------------------------------------------------------------===//

  void line(int indent, const std::string &s) { out_ << std::string(4 * indent, ' ') << s << '\n'; }
  /// A line that opens `node`, with its trailing comment from PrintOptions if any.
  void line(int indent, const std::string &s, const StmtNode *node) {
    const std::string *c = comment_of(node);
    line(indent, c ? s + "  # " + *c : s);
  }
  const std::string *comment_of(const StmtNode *node) const {
    if (!opts_) return nullptr;
    auto it = opts_->comments.find(node);
    return it == opts_->comments.end() ? nullptr : &it->second;
  }

  std::string annotations(const Annotations &anns) {
    std::string s = "{";
    bool first = true;
    for (const auto &[k, v] : anns) {
      s += (first ? "" : ", ") + quote(k) + ": " + v.str();
      first = false;
    }
    return s + "}";
  }

  /// `tail` says whether `s` ends its enclosing scope: only then can a LetStmt
  /// be written as a plain assignment that scopes over the rest of the lines.
  void stmt(const Stmt &s, int ind, bool tail = true) {
    switch (s.kind()) {
      case NodeKind::Seq: {
        const auto &stmts = s.as<Seq>()->stmts;
        if (stmts.empty()) line(ind, "T.evaluate(0)");
        for (size_t i = 0; i < stmts.size(); ++i) stmt(stmts[i], ind, tail && i + 1 == stmts.size());
        return;
      }
      case NodeKind::For: return print_for(s, ind);
      case NodeKind::Block: return print_block(*s.as<Block>(), ind);
      case NodeKind::Store: {
        const auto *st = s.as<Store>();
        std::string lhs = indices(st->buffer, st->indices);
        return line(ind, lhs + " = " + expr(st->value));
      }
      case NodeKind::IfThenElse: {
        const auto *i = s.as<IfThenElse>();
        line(ind, "if " + expr(i->cond) + ":");
        stmt(i->then_case, ind + 1);
        if (i->else_case) {
          line(ind, "else:");
          stmt(*i->else_case, ind + 1);
        }
        return;
      }
      case NodeKind::LetStmt: {
        const auto *l = s.as<LetStmt>();
        std::string value = expr(l->value);
        std::string var = name_of(l->var);
        if (tail) {
          line(ind, var + ": " + dtype_fn(l->var.dtype()) + " = " + value);
          return stmt(l->body, ind, true);
        }
        line(ind, "with T.LetStmt(" + value + ") as " + var + ":");
        return stmt(l->body, ind + 1);
      }
      case NodeKind::Evaluate: return line(ind, "T.evaluate(" + expr(s.as<Evaluate>()->value) + ")");
      default: break;
    }
    TESSERA_UNREACHABLE("printing an expression node as a statement");
  }

  bool is_grid_loop(const For &f) const {
    return !comment_of(&f) && f.for_kind == ForKind::Serial && f.annotations.empty() && is_const_int(f.min, 0);
  }

  static bool uses_any(const Expr &e, const std::vector<const For *> &loops) {
    bool found = false;
    pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
      for (const For *f : loops) found |= x.same_as(f->loop_var);
    }, nullptr);
    return found;
  }

  void print_for(const Stmt &s, int ind) {
    const For *f = s.as<For>();
    std::vector<const For *> loops = {f};
    if (is_grid_loop(*f)) {
      // Fold perfectly nested serial loops from 0 into one T.grid.
      while (const For *inner = loops.back()->body.as<For>()) {
        if (!is_grid_loop(*inner) || uses_any(inner->extent, loops)) break;
        loops.push_back(inner);
      }
    }
    for (const For *l : loops) ranges_[l->loop_var.get()] = Range{l->min, l->extent};
    if (loops.size() > 1) {
      std::string vars, exts;
      for (size_t i = 0; i < loops.size(); ++i) {
        vars += (i ? ", " : "") + name_of(loops[i]->loop_var);
        exts += (i ? ", " : "") + expr(loops[i]->extent);
      }
      line(ind, "for " + vars + " in T.grid(" + exts + "):");
    } else {
      std::string var = name_of(f->loop_var);
      line(ind, "for " + var + " in " + loop_iter(*f) + ":", f);
    }
    stmt(loops.back()->body, ind + 1);
    for (const For *l : loops) {
      ranges_.erase(l->loop_var.get());
      release(l->loop_var);
    }
  }

  std::string loop_iter(const For &f) {
    std::string bounds = is_const_int(f.min, 0) ? expr(f.extent) : expr(f.min) + ", " + expr(plus(f.min, f.extent));
    if (f.for_kind == ForKind::Serial && f.annotations.empty()) return "range(" + bounds + ")";
    std::string s = std::string("T.") + for_kind_name(f.for_kind) + "(" + bounds;
    if (f.for_kind == ForKind::ThreadBinding) s += ", thread=" + quote(f.thread_tag);
    if (!f.annotations.empty()) s += ", annotations=" + annotations(f.annotations);
    return s + ")";
  }

  std::string region(const BufferRegion &r) {
    std::string s = name_of(r.buffer) + "[";
    if (r.region.empty()) return s + "()]";
    for (size_t i = 0; i < r.region.size(); ++i) {
      const Range &rg = r.region[i];
      s += i ? ", " : "";
      if (is_const_int(rg.extent, 1) && rg.extent.dtype() == rg.min.dtype()) {
        s += expr(rg.min);
        continue;
      }
      s += expr(rg.min) + ":" + expr(plus(rg.min, rg.extent));
    }
    return s + "]";
  }

  std::string regions(const char *fn, const std::vector<BufferRegion> &rs) {
    std::string s = std::string(fn) + "(";
    for (size_t i = 0; i < rs.size(); ++i) s += (i ? ", " : "") + region(rs[i]);
    return s + ")";
  }

  bool remappable(const IterVar &iv, const Expr &binding) {
    if (iv.kind == IterKind::Opaque || !binding.is<VarNode>()) return false;
    auto it = ranges_.find(static_cast<const VarNode *>(binding.get()));
    if (it == ranges_.end()) return false;
    return same_expr(it->second.min, iv.dom.min) && same_expr(it->second.extent, iv.dom.extent);
  }

  std::string alloc_decl(const Buffer &b) {
    std::string s = "T.alloc_buffer(" + shape(b);
    if (b.dtype() != DataType::float32()) s += ", " + quote(b.dtype().str());
    return s + buffer_kwargs(b) + ")";
  }

  std::string shape(const Buffer &b) {
    std::string s = "(";
    for (size_t i = 0; i < b.shape().size(); ++i) s += (i ? ", " : "") + expr(b.shape()[i]);
    return s + (b.shape().size() == 1 ? ",)" : ")");
  }

  std::string buffer_kwargs(const Buffer &b) {
    std::string s;
    if (!b->strides.empty()) {
      s += ", strides=(";
      for (size_t i = 0; i < b->strides.size(); ++i) s += (i ? ", " : "") + expr(b->strides[i]);
      s += b->strides.size() == 1 ? ",)" : ")";
    }
    if (b.scope() != "global") s += ", scope=" + quote(b.scope());
    return s;
  }

  void print_block(const Block &b, int ind) {
    line(ind, "with T.block(" + quote(b.name) + "):", &b);
    int in = ind + 1;
    if (!b.iter_vars.empty()) {
      bool remap = true;
      for (size_t i = 0; i < b.iter_vars.size(); ++i) remap &= remappable(b.iter_vars[i], b.bindings[i]);
      if (remap) {
        std::string lhs, kinds, rhs;
        for (size_t i = 0; i < b.iter_vars.size(); ++i) {
          lhs += (i ? ", " : "") + name_of(b.iter_vars[i].var);
          kinds += iter_kind_char(b.iter_vars[i].kind);
          rhs += (i ? ", " : "") + expr(b.bindings[i]);
        }
        line(in, lhs + " = T.axis.remap(\"" + kinds + "\", [" + rhs + "])");
      } else {
        for (size_t i = 0; i < b.iter_vars.size(); ++i) {
          const IterVar &iv = b.iter_vars[i];
          static const char *kKinds[] = {"spatial", "reduce", "opaque"};
          std::string dom = is_const_int(iv.dom.min, 0)
                                ? expr(iv.dom.extent)
                                : "(" + expr(iv.dom.min) + ", " + expr(plus(iv.dom.min, iv.dom.extent)) + ")";
          std::string binding = expr(b.bindings[i]);
          line(in, name_of(iv.var) + " = T.axis." + kKinds[static_cast<int>(iv.kind)] + "(" + dom + ", " +
                       binding + ")");
        }
      }
    }
    if (b.predicate.defined() && !is_const_int(b.predicate, 1)) line(in, "T.where(" + expr(b.predicate) + ")");
    line(in, regions("T.reads", b.reads));
    line(in, regions("T.writes", b.writes));
    if (!b.annotations.empty()) line(in, "T.block_attr(" + annotations(b.annotations) + ")");
    for (const Buffer &a : b.allocs) {
      std::string decl = alloc_decl(a);
      line(in, name_of(a) + " = " + decl);
    }
    if (b.init) {
      line(in, "with T.init():");
      stmt(*b.init, in + 1);
    }
    stmt(b.body, in);
    for (const IterVar &iv : b.iter_vars) release(iv.var);
  }

  //===--------------------------------------------------------------------===//
  // Functions
  //===--------------------------------------------------------------------===//

  static bool has_symbolic_shape(const Buffer &b) {
    for (const Expr &e : b.shape())
      if (!e.is<IntImm>()) return true;
    for (const Expr &e : b->strides)
      if (!e.is<IntImm>()) return true;
    return false;
  }

  void func(const PrimFunc &f, int ind) {
    // Step 1. The signature: buffers with constant shapes as T.Buffer
    // annotations, the others as handles bound by T.match_buffer below.
    std::vector<std::pair<Var, Buffer>> matched;
    std::unordered_set<const void *> params;
    std::string sig;
    for (const Var &p : f.params()) {
      params.insert(p.get());
      sig += sig.empty() ? "" : ", ";
      Buffer b = f.buffer_of(p);
      if (b.defined() && !has_symbolic_shape(b)) {
        std::string decl = "T.Buffer(" + shape(b) + ", " + quote(b.dtype().str()) + buffer_kwargs(b) + ")";
        sig += name_of(b) + ": " + decl;
        continue;
      }
      if (b.defined()) {
        matched.emplace_back(p, b);
        std::string hint = p.name() == b.name() ? "var_" + p.name() : p.name();
        sig += name_of(p.get(), hint) + ": T.handle";
        continue;
      }
      sig += name_of(p) + ": " + dtype_fn(p.dtype());
    }
    line(ind, "@T.prim_func");
    line(ind, "def " + f.name() + "(" + sig + "):");
    int in = ind + 1;
    if (!f.attrs().empty()) line(in, "T.func_attr(" + annotations(f.attrs()) + ")");
    // Step 2. Symbolic shape variables and free variables of the body.
    for (const Var &v : free_vars(f, params)) line(in, name_of(v) + " = " + dtype_fn(v.dtype()) + "()");
    for (const auto &[p, b] : matched) {
      std::string s = "T.match_buffer(" + name_of(p) + ", " + shape(b);
      if (b.dtype() != DataType::float32()) s += ", " + quote(b.dtype().str());
      s += buffer_kwargs(b) + ")";
      line(in, name_of(b) + " = " + s);
    }
    // Step 3. The body: the root block only when it carries anything.
    const Block &root = f.root_block();
    bool nested_root = root.body.is<Block>() && root.body.as<Block>()->name == "root" &&
                       root.body.as<Block>()->iter_vars.empty();
    if (is_default_root(root) && !nested_root) {
      stmt(root.body, in);
    } else if (only_allocates(root) && !nested_root) {
      // Function-level T.alloc_buffer lines, which the parser puts back into
      // the root block (TVM prints the root block this way too).
      for (const Buffer &a : root.allocs) {
        std::string decl = alloc_decl(a);
        line(in, name_of(a) + " = " + decl);
      }
      stmt(root.body, in);
    } else {
      stmt(f.body(), in);
    }
  }

  /// Variables that the function uses but does not define, in order of first
  /// use: symbolic shape variables first, then any others of the body.
  std::vector<Var> free_vars(const PrimFunc &f, const std::unordered_set<const void *> &params) {
    struct Collect : IRVisitor {
      std::unordered_set<const void *> defined, seen;
      std::vector<Var> out;
      Expr current;
      void visit(const Expr &e) override {
        Expr saved = current;
        current = e;
        IRVisitor::visit(e);
        current = saved;
      }
      void visit(const Stmt &s) override { IRVisitor::visit(s); }
      void use_buffer(const Buffer &b) {
        for (const Expr &e : b.shape()) visit(e);
        for (const Expr &e : b->strides) visit(e);
      }
      void visit_(const VarNode *op) override {
        if (!defined.count(op) && seen.insert(op).second) out.push_back(Var::from(current));
      }
      void visit_(const For *op) override {
        defined.insert(op->loop_var.get());
        IRVisitor::visit_(op);
      }
      void visit_(const Block *op) override {
        for (const IterVar &iv : op->iter_vars) defined.insert(iv.var.get());
        for (const Buffer &b : op->allocs) use_buffer(b);
        IRVisitor::visit_(op);
      }
      void visit_(const Let *op) override {
        defined.insert(op->var.get());
        IRVisitor::visit_(op);
      }
      void visit_(const LetStmt *op) override {
        defined.insert(op->var.get());
        IRVisitor::visit_(op);
      }
    } c;
    c.defined = params;
    for (const Buffer &b : f.param_buffers()) c.use_buffer(b);
    c.visit(f.body());
    return c.out;
  }

 private:
  bool unique_;
  const PrintOptions *opts_;
  std::ostringstream out_;
  std::unordered_map<const void *, std::string> names_;
  std::unordered_set<std::string> used_;
  /// Ranges of the loops around the statement being printed.
  std::unordered_map<const VarNode *, Range> ranges_;
};

}  // namespace

std::string print(const ir::Module &m) {
  if (m.funcs.size() == 1) return print(m.funcs[0]);
  std::string s = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n@I.ir_module\nclass Module:\n";
  for (size_t i = 0; i < m.funcs.size(); ++i) {
    Printer p(/*unique=*/true);
    p.func(m.funcs[i], 1);
    s += (i ? "\n" : "") + p.str();
  }
  return s;
}

std::string print(const ir::PrimFunc &f) {
  Printer p(/*unique=*/true);
  p.func(f, 0);
  return "# from tvm.script import tir as T\n\n" + p.str();
}

std::string print(const ir::PrimFunc &f, const PrintOptions &opts) {
  Printer p(/*unique=*/true, &opts);
  p.func(f, 0);
  return "# from tvm.script import tir as T\n\n" + p.str();
}

std::string print(const ir::Stmt &s) {
  Printer p(/*unique=*/false);
  p.stmt(s, 0);
  return p.str();
}

std::string print(const ir::Expr &e) {
  Printer p(/*unique=*/false);
  return p.expr(e);
}

}  // namespace tessera::script
