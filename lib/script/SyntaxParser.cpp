//===- SyntaxParser.cpp - Tokens to the Python AST -------------------------===//
//
// A recursive-descent parser for the Python subset TVMScript uses: decorated
// defs and classes, for/with/if/elif/else, assignments (plain, annotated,
// augmented, tuple targets), expression statements, pass/return, and the
// usual expression grammar with Python's precedence. Nesting is capped so a
// hostile input cannot overflow the stack.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <string>

#include "Ast.h"
#include "Lexer.h"

namespace tessera::script::detail {
namespace {

/// Deeper nesting than this (brackets, operators, blocks) is rejected.
constexpr int kMaxDepth = 100;

class SyntaxParser {
 public:
  SyntaxParser(const SourceFile &src, std::vector<Token> toks) : src_(src), toks_(std::move(toks)) {}

  PyBody parse_file() {
    PyBody out;
    while (peek().kind != TokKind::End) {
      if (peek().kind == TokKind::Newline) {
        next();
        continue;
      }
      if (peek().kind == TokKind::Indent) src_.fail(peek().pos, "unexpected indent");
      parse_statement(out);
    }
    return out;
  }

 private:
  // ---- token helpers ----
  const Token &peek(int k = 0) const {
    size_t j = std::min(i_ + k, toks_.size() - 1);
    return toks_[j];
  }
  const Token &next() {
    const Token &t = toks_[i_];
    if (i_ + 1 < toks_.size()) ++i_;
    return t;
  }
  bool accept_op(const char *op) {
    if (!peek().is_op(op)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail_expected(const std::string &what) {
    src_.fail(peek().pos, "expected " + what + ", found " + describe(peek()));
  }
  const Token &expect_op(const char *op, const char *context = nullptr) {
    if (!peek().is_op(op))
      fail_expected(quote(op) + (context ? std::string(" ") + context : std::string()));
    return next();
  }
  // Closes a bracket opened at `open_pos`, naming it when missing.
  void expect_close(const char *close, const char *open, Pos open_pos) {
    if (peek().is_op(close)) {
      next();
      return;
    }
    src_.fail(peek().pos, "expected " + quote(close) + " to close " + quote(open) + " from " +
                              std::to_string(open_pos.line) + ":" + std::to_string(open_pos.col) +
                              ", found " + describe(peek()));
  }
  std::string expect_name(const char *what) {
    if (peek().kind != TokKind::Name || is_keyword(peek().text)) fail_expected(what);
    return next().text;
  }
  static bool is_keyword(const std::string &s) {
    static const char *const kw[] = {"def", "class", "for", "in", "if", "elif", "else", "with", "as",
                                     "and", "or", "not", "pass", "return", "import", "from", "True",
                                     "False", "None", "while", "lambda", "is", "del", "yield"};
    for (const char *k : kw)
      if (s == k) return true;
    return false;
  }
  void enter(Pos p) {
    if (++depth_ > kMaxDepth) src_.fail(p, "nesting too deep (more than " + std::to_string(kMaxDepth) + " levels)");
  }
  void leave() { --depth_; }
  struct DepthGuard {
    SyntaxParser &p;
    DepthGuard(SyntaxParser &p, Pos pos) : p(p) { p.enter(pos); }
    ~DepthGuard() { p.leave(); }
  };

  static PyExprPtr make_expr(PyExprKind k, Pos p) {
    auto e = std::make_unique<PyExpr>();
    e->kind = k;
    e->pos = p;
    return e;
  }
  static PyStmtPtr make_stmt(PyStmtKind k, Pos p) {
    auto s = std::make_unique<PyStmt>();
    s->kind = k;
    s->pos = p;
    return s;
  }

  // ---- statements ----
  void parse_statement(PyBody &out) {
    const Token &t = peek();
    DepthGuard g(*this, t.pos);
    if (t.is_op("@")) return out.push_back(parse_decorated());
    if (t.is_name("def") || t.is_name("class")) return out.push_back(parse_def({}));
    if (t.is_name("for")) return out.push_back(parse_for());
    if (t.is_name("with")) return out.push_back(parse_with());
    if (t.is_name("if")) return out.push_back(parse_if());
    if (t.is_name("elif") || t.is_name("else"))
      src_.fail(t.pos, "unexpected " + quote(t.text) + " without a matching 'if'");
    if (t.is_name("while")) src_.fail(t.pos, "'while' loops are not supported by tessera (its IR has counted loops only)");
    parse_simple_line(out);
  }

  // simple_stmt (';' simple_stmt)* NEWLINE
  void parse_simple_line(PyBody &out) {
    out.push_back(parse_simple());
    while (accept_op(";")) {
      if (peek().kind == TokKind::Newline) break;
      out.push_back(parse_simple());
    }
    if (peek().kind != TokKind::Newline && peek().kind != TokKind::End) fail_expected("end of line");
    if (peek().kind == TokKind::Newline) next();
  }

  PyStmtPtr parse_simple() {
    const Token &t = peek();
    Pos p = t.pos;
    if (t.is_name("pass")) {
      next();
      return make_stmt(PyStmtKind::Pass, p);
    }
    if (t.is_name("break") || t.is_name("continue"))
      src_.fail(p, quote(t.text) + " is not supported by tessera (its loops always run to their end): guard the "
                   "loop body with an 'if' instead");
    if (t.is_name("return")) {
      next();
      auto s = make_stmt(PyStmtKind::Return, p);
      if (peek().kind != TokKind::Newline && !peek().is_op(";")) s->value = parse_exprlist();
      return s;
    }
    if (t.is_name("import") || t.is_name("from")) {
      // `from tvm.script import tir as T`: skipped to the end of the line.
      while (peek().kind != TokKind::Newline && peek().kind != TokKind::End) next();
      return make_stmt(PyStmtKind::Import, p);
    }
    PyExprPtr lhs = parse_exprlist();
    if (peek().is_op("=")) {
      auto s = make_stmt(PyStmtKind::Assign, p);
      next();
      s->target = std::move(lhs);
      s->value = parse_exprlist();
      if (peek().is_op("=")) src_.fail(peek().pos, "chained assignment is not supported");
      return s;
    }
    if (peek().is_op(":")) {
      next();
      auto s = make_stmt(PyStmtKind::AnnAssign, p);
      s->target = std::move(lhs);
      s->annotation = parse_expr();
      if (accept_op("=")) s->value = parse_exprlist();
      return s;
    }
    static const char *const kAug[] = {"+=", "-=", "*=", "/=", "//=", "%=", "**=", "&=", "|=", "^=", "<<=", ">>="};
    for (const char *aug : kAug) {
      if (!peek().is_op(aug)) continue;
      next();
      auto s = make_stmt(PyStmtKind::AugAssign, p);
      s->op = std::string(aug, std::char_traits<char>::length(aug) - 1);
      s->target = std::move(lhs);
      s->value = parse_exprlist();
      return s;
    }
    auto s = make_stmt(PyStmtKind::Expr, p);
    s->value = std::move(lhs);
    return s;
  }

  PyStmtPtr parse_decorated() {
    std::vector<PyExprPtr> decos;
    while (peek().is_op("@")) {
      next();
      decos.push_back(parse_expr());
      if (peek().kind != TokKind::Newline) fail_expected("end of line after decorator");
      next();
    }
    if (!peek().is_name("def") && !peek().is_name("class")) fail_expected("'def' or 'class' after decorator");
    return parse_def(std::move(decos));
  }

  /// `@R.function`, `@R.function(pure=False)`, ...: a Relax decorator.
  static bool is_relax_decorator(const PyExpr &d) {
    const PyExpr &e = d.kind == PyExprKind::Call ? *d.base : d;
    return e.kind == PyExprKind::Attr && e.base->kind == PyExprKind::Name && e.base->name == "R";
  }

  /// Skips the rest of a def (its signature and indented body) token by
  /// token: Relax's syntax is Python's, but not ours to read.
  void skip_def_rest() {
    int depth = 0;
    while (peek().kind != TokKind::End) {
      const Token &t = next();
      if (t.is_op("(") || t.is_op("[") || t.is_op("{")) ++depth;
      if (t.is_op(")") || t.is_op("]") || t.is_op("}")) --depth;
      if (depth == 0 && t.is_op(":")) break;
    }
    if (peek().kind == TokKind::End) fail_expected("the body of the function");
    if (peek().kind != TokKind::Newline) {  // `def f(x): return x`
      while (peek().kind != TokKind::Newline && peek().kind != TokKind::End) next();
      if (peek().kind == TokKind::Newline) next();
      return;
    }
    next();
    if (peek().kind != TokKind::Indent) fail_expected("an indented function body");
    next();
    for (int level = 1; level > 0 && peek().kind != TokKind::End;) {
      TokKind k = next().kind;
      level += k == TokKind::Indent ? 1 : k == TokKind::Dedent ? -1 : 0;
    }
  }

  PyStmtPtr parse_def(std::vector<PyExprPtr> decos) {
    Pos p = peek().pos;
    bool is_class = next().text == "class";
    auto s = make_stmt(is_class ? PyStmtKind::ClassDef : PyStmtKind::FuncDef, p);
    s->decorators = std::move(decos);
    s->name = expect_name(is_class ? "class name" : "function name");
    if (!is_class && std::any_of(s->decorators.begin(), s->decorators.end(),
                                 [](const PyExprPtr &d) { return is_relax_decorator(*d); })) {
      skip_def_rest();
      s->skipped = true;
      return s;
    }
    if (is_class) {
      if (peek().is_op("(")) {
        Pos open = next().pos;
        while (!peek().is_op(")") && peek().kind != TokKind::End && peek().kind != TokKind::Newline) parse_expr();
        expect_close(")", "(", open);
      }
    } else {
      Pos open = expect_op("(", "after the function name").pos;
      while (!peek().is_op(")")) {
        PyParam param;
        param.pos = peek().pos;
        param.name = expect_name("parameter name");
        if (accept_op(":")) param.annotation = parse_expr();
        if (peek().is_op("=")) src_.fail(peek().pos, "default parameter values are not supported");
        s->params.push_back(std::move(param));
        if (!accept_op(",")) break;
      }
      expect_close(")", "(", open);
      if (accept_op("->")) s->annotation = parse_expr();
    }
    s->body = parse_suite(is_class ? "class" : "function");
    return s;
  }

  PyStmtPtr parse_for() {
    auto s = make_stmt(PyStmtKind::For, next().pos);
    s->target = parse_target_list();
    if (!peek().is_name("in")) fail_expected("'in' in for loop");
    next();
    s->value = parse_exprlist();
    s->body = parse_suite("for loop");
    return s;
  }

  // Loop targets stop at 'in', so they are parsed as bitwise-or expressions.
  PyExprPtr parse_target_list() {
    Pos p = peek().pos;
    PyExprPtr first = parse_bitor();
    if (!peek().is_op(",")) return first;
    auto tup = make_expr(PyExprKind::Tuple, p);
    tup->args.push_back(std::move(first));
    while (accept_op(",")) {
      if (peek().is_name("in")) break;
      tup->args.push_back(parse_bitor());
    }
    return tup;
  }

  PyStmtPtr parse_with() {
    auto s = make_stmt(PyStmtKind::With, next().pos);
    s->value = parse_expr();
    if (peek().is_name("as")) {
      next();
      s->target = parse_target_list();
    }
    if (peek().is_op(",")) src_.fail(peek().pos, "several context managers in one 'with' are not supported");
    s->body = parse_suite("with statement");
    return s;
  }

  PyStmtPtr parse_if() {
    auto s = make_stmt(PyStmtKind::If, next().pos);
    s->value = parse_namedexpr();
    s->body = parse_suite("if statement");
    if (peek().is_name("elif")) {
      s->orelse.push_back(parse_if());
    } else if (peek().is_name("else")) {
      next();
      s->orelse = parse_suite("else branch");
    }
    return s;
  }

  PyExprPtr parse_namedexpr() { return parse_expr(); }

  // ':' then either simple statements on the same line or NEWLINE INDENT stmts DEDENT.
  PyBody parse_suite(const char *what) {
    if (!peek().is_op(":")) fail_expected(std::string("':' to start the ") + what + " body");
    next();
    PyBody body;
    if (peek().kind != TokKind::Newline) {
      parse_simple_line(body);
      return body;
    }
    next();
    if (peek().kind != TokKind::Indent) fail_expected(std::string("an indented ") + what + " body");
    next();
    while (peek().kind != TokKind::Dedent && peek().kind != TokKind::End) {
      if (peek().kind == TokKind::Indent) src_.fail(peek().pos, "unexpected indent");
      parse_statement(body);
    }
    if (peek().kind == TokKind::Dedent) next();
    return body;
  }

  // ---- expressions ----
  // exprlist: expr (',' expr)* [','] -> a Tuple when there is a comma.
  PyExprPtr parse_exprlist() {
    Pos p = peek().pos;
    PyExprPtr first = parse_expr();
    if (!peek().is_op(",")) return first;
    auto tup = make_expr(PyExprKind::Tuple, p);
    tup->args.push_back(std::move(first));
    while (accept_op(",")) {
      if (!starts_expr()) break;
      tup->args.push_back(parse_expr());
    }
    return tup;
  }

  bool starts_expr() const {
    const Token &t = peek();
    switch (t.kind) {
      case TokKind::Name: return !is_keyword(t.text) || t.text == "not" || t.text == "True" ||
                                 t.text == "False" || t.text == "None" || t.text == "lambda";
      case TokKind::Int:
      case TokKind::Float:
      case TokKind::String: return true;
      case TokKind::Op: return t.text == "(" || t.text == "[" || t.text == "{" || t.text == "-" ||
                               t.text == "+" || t.text == "~";
      default: return false;
    }
  }

  PyExprPtr parse_expr() {
    DepthGuard g(*this, peek().pos);
    if (peek().is_name("lambda")) {
      // TVM prints a lambda in one place: the reducer of a cross-thread
      // reduction it has already lowered (T.tvm_thread_allreduce).
      const Pos at = peek().pos;
      const std::string_view line = src_.line_text(at.line).substr(0, size_t(std::max(0, at.col - 1)));
      if (line.find("comm_reducer(") != std::string_view::npos)
        src_.fail(at, "T.comm_reducer is not supported: it belongs to a cross-thread reduction TVM has already "
                      "lowered (T.tvm_thread_allreduce); give tessera the program from before TVM's "
                      "LowerCrossThreadReduction, where the reduction is a block with T.init()");
      src_.fail(at, "lambda expressions are not supported");
    }
    PyExprPtr e = parse_or();
    if (peek().is_name("if")) {
      auto ife = make_expr(PyExprKind::IfExp, e->pos);
      next();
      PyExprPtr cond = parse_or();
      if (!peek().is_name("else")) fail_expected("'else' in conditional expression");
      next();
      PyExprPtr other = parse_expr();
      ife->args.push_back(std::move(e));
      ife->args.push_back(std::move(cond));
      ife->args.push_back(std::move(other));
      return ife;
    }
    return e;
  }

  PyExprPtr parse_boolop(const char *kw, PyExprPtr (SyntaxParser::*sub)()) {
    PyExprPtr e = (this->*sub)();
    if (!peek().is_name(kw)) return e;
    auto b = make_expr(PyExprKind::BoolOp, e->pos);
    b->op = kw;
    b->args.push_back(std::move(e));
    while (peek().is_name(kw)) {
      next();
      b->args.push_back((this->*sub)());
    }
    return b;
  }
  PyExprPtr parse_or() { return parse_boolop("or", &SyntaxParser::parse_and); }
  PyExprPtr parse_and() { return parse_boolop("and", &SyntaxParser::parse_not); }

  PyExprPtr parse_not() {
    if (!peek().is_name("not")) return parse_compare();
    Pos p = next().pos;
    DepthGuard g(*this, p);
    auto u = make_expr(PyExprKind::UnaryOp, p);
    u->op = "not";
    u->args.push_back(parse_not());
    return u;
  }

  PyExprPtr parse_compare() {
    PyExprPtr e = parse_bitor();
    static const char *const kCmp[] = {"<", "<=", ">", ">=", "==", "!="};
    auto is_cmp = [&]() -> const char * {
      for (const char *c : kCmp)
        if (peek().is_op(c)) return c;
      if (peek().is_name("in") || peek().is_name("is")) src_.fail(peek().pos, "operator " + quote(peek().text) + " is not supported");
      return nullptr;
    };
    const char *op = is_cmp();
    if (!op) return e;
    auto c = make_expr(PyExprKind::Compare, e->pos);
    c->args.push_back(std::move(e));
    while ((op = is_cmp())) {
      next();
      c->ops.push_back(op);
      c->args.push_back(parse_bitor());
    }
    return c;
  }

  // Left-associative binary levels, loosest first.
  PyExprPtr parse_binary_level(int level) {
    static const std::vector<std::vector<const char *>> kLevels = {
        {"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}};
    if (level == static_cast<int>(kLevels.size())) return parse_unary();
    PyExprPtr e = parse_binary_level(level + 1);
    while (true) {
      const char *found = nullptr;
      for (const char *op : kLevels[level])
        if (peek().is_op(op)) found = op;
      if (!found) return e;
      Pos p = next().pos;
      if (std::string(found) == "@") src_.fail(p, "operator '@' is not supported");
      auto b = make_expr(PyExprKind::BinOp, e->pos);
      b->op = found;
      b->args.push_back(std::move(e));
      b->args.push_back(parse_binary_level(level + 1));
      e = std::move(b);
    }
  }
  PyExprPtr parse_bitor() { return parse_binary_level(0); }

  PyExprPtr parse_unary() {
    if (peek().is_op("-") || peek().is_op("+") || peek().is_op("~")) {
      const Token &t = next();
      DepthGuard g(*this, t.pos);
      auto u = make_expr(PyExprKind::UnaryOp, t.pos);
      u->op = t.text;
      u->args.push_back(parse_unary());
      return u;
    }
    return parse_power();
  }

  // power: primary ['**' unary]  (right-associative, binds tighter than a unary on its left)
  PyExprPtr parse_power() {
    PyExprPtr e = parse_primary();
    if (!peek().is_op("**")) return e;
    next();
    DepthGuard g(*this, e->pos);
    auto b = make_expr(PyExprKind::BinOp, e->pos);
    b->op = "**";
    b->args.push_back(std::move(e));
    b->args.push_back(parse_unary());
    return b;
  }

  PyExprPtr parse_primary() {
    PyExprPtr e = parse_atom();
    int trailers = 0;
    while (true) {
      if (++trailers > kMaxDepth) src_.fail(peek().pos, "expression too long");
      if (peek().is_op(".")) {
        next();
        auto a = make_expr(PyExprKind::Attr, e->pos);
        a->name = expect_name("attribute name after '.'");
        a->base = std::move(e);
        e = std::move(a);
      } else if (peek().is_op("(")) {
        Pos open = next().pos;
        auto c = make_expr(PyExprKind::Call, e->pos);
        c->base = std::move(e);
        parse_call_args(*c, open);
        e = std::move(c);
      } else if (peek().is_op("[")) {
        Pos open = next().pos;
        auto s = make_expr(PyExprKind::Subscript, e->pos);
        s->base = std::move(e);
        parse_subscript(*s, open);
        e = std::move(s);
      } else {
        return e;
      }
    }
  }

  void parse_call_args(PyExpr &c, Pos open) {
    while (!peek().is_op(")")) {
      if (peek().kind == TokKind::Name && peek(1).is_op("=") && !is_keyword(peek().text)) {
        Pos kp = peek().pos;
        std::string key = next().text;
        next();
        for (const auto &kv : c.kwargs)
          if (kv.first == key) src_.fail(kp, "keyword argument " + quote(key) + " repeated");
        c.kwargs.emplace_back(key, parse_expr());
        c.kwarg_pos.push_back(kp);
      } else {
        if (peek().is_op("**")) src_.fail(peek().pos, "keyword argument unpacking (**) is not supported");
        if (!c.kwargs.empty()) src_.fail(peek().pos, "positional argument follows keyword argument");
        if (peek().is_op("*")) {  // T.grid(*A.shape)
          auto star = make_expr(PyExprKind::Starred, next().pos);
          star->args.push_back(parse_expr());
          c.args.push_back(std::move(star));
        } else {
          if (!starts_expr()) expect_close(")", "(", open);
          c.args.push_back(parse_expr());
        }
      }
      if (!accept_op(",")) break;
    }
    expect_close(")", "(", open);
  }

  void parse_subscript(PyExpr &s, Pos open) {
    if (peek().is_op("]")) fail_expected("an index");
    while (!peek().is_op("]")) {
      s.args.push_back(parse_slice());
      if (!accept_op(",")) break;
    }
    expect_close("]", "[", open);
    // A[()] is the element of a 0-d buffer: the empty tuple adds no index.
    if (s.args.size() == 1 && s.args[0]->kind == PyExprKind::Tuple && s.args[0]->args.empty()) s.args.clear();
  }

  PyExprPtr parse_slice() {
    Pos p = peek().pos;
    PyExprPtr lo;
    if (!peek().is_op(":")) lo = parse_expr();
    if (!peek().is_op(":")) return lo;
    auto sl = make_expr(PyExprKind::Slice, p);
    next();
    PyExprPtr hi, step;
    if (!peek().is_op(":") && !peek().is_op(",") && !peek().is_op("]")) hi = parse_expr();
    if (accept_op(":") && !peek().is_op(",") && !peek().is_op("]")) step = parse_expr();
    sl->args.push_back(std::move(lo));
    sl->args.push_back(std::move(hi));
    sl->args.push_back(std::move(step));
    return sl;
  }

  PyExprPtr parse_atom() {
    const Token &t = peek();
    Pos p = t.pos;
    switch (t.kind) {
      case TokKind::Int: {
        auto e = make_expr(PyExprKind::Int, p);
        e->int_value = next().int_value;
        return e;
      }
      case TokKind::Float: {
        auto e = make_expr(PyExprKind::Float, p);
        e->float_value = next().float_value;
        return e;
      }
      case TokKind::String: {
        auto e = make_expr(PyExprKind::Str, p);
        while (peek().kind == TokKind::String) e->name += next().text;  // "a" "b" concatenates
        return e;
      }
      case TokKind::Name: {
        if (t.text == "True" || t.text == "False") {
          auto e = make_expr(PyExprKind::Bool, p);
          e->int_value = next().text == "True";
          return e;
        }
        if (t.text == "None") {
          next();
          return make_expr(PyExprKind::None, p);
        }
        if (is_keyword(t.text)) fail_expected("an expression");
        auto e = make_expr(PyExprKind::Name, p);
        e->name = next().text;
        return e;
      }
      case TokKind::Op: break;
      default: fail_expected("an expression");
    }
    DepthGuard g(*this, p);
    if (t.is_op("(")) {
      next();
      if (peek().is_op(")")) {
        next();
        return make_expr(PyExprKind::Tuple, p);
      }
      PyExprPtr first = parse_expr();
      if (peek().is_op(")")) {
        next();
        return first;
      }
      auto tup = make_expr(PyExprKind::Tuple, p);
      tup->args.push_back(std::move(first));
      while (accept_op(",")) {
        if (peek().is_op(")")) break;
        tup->args.push_back(parse_expr());
      }
      expect_close(")", "(", p);
      return tup;
    }
    if (t.is_op("[")) {
      next();
      auto list = make_expr(PyExprKind::List, p);
      while (!peek().is_op("]")) {
        if (!starts_expr()) expect_close("]", "[", p);
        list->args.push_back(parse_expr());
        if (!accept_op(",")) break;
      }
      expect_close("]", "[", p);
      return list;
    }
    if (t.is_op("{")) {
      next();
      auto dict = make_expr(PyExprKind::Dict, p);
      while (!peek().is_op("}")) {
        if (!starts_expr()) expect_close("}", "{", p);
        dict->args.push_back(parse_expr());
        expect_op(":", "between a dictionary key and its value");
        dict->args.push_back(parse_expr());
        if (!accept_op(",")) break;
      }
      expect_close("}", "{", p);
      return dict;
    }
    fail_expected("an expression");
  }

  const SourceFile &src_;
  std::vector<Token> toks_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

PyBody parse_python(const SourceFile &src) { return SyntaxParser(src, tokenize(src)).parse_file(); }

}  // namespace tessera::script::detail
