//===- StructuralEqual.cpp - Alpha-equivalence, diff and hashing -----------===//
//
// One comparer serves structural_equal and structural_diff: it walks both
// trees in lock step, keeps the path it is at (cheap segments, formatted only
// when a difference is found) and stops at the first difference. Variables
// and buffers are matched through a scoped bijection: a definition maps the
// left node to the right one until its scope ends, and a use must agree with
// the mapping in both directions. Unmapped (free) nodes must be identical.
//
// The hasher walks one tree in the same order and replaces every defined
// variable or buffer by the index of its definition, so names and identities
// never enter the hash.
//
//===----------------------------------------------------------------------===//
#include "tessera/ir/StructuralEqual.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "DiffText.h"

namespace tessera::ir {
namespace {

using detail::expr_text;
using detail::stmt_brief;

bool same_float(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(double)) == 0;
}

//===----------------------------------------------------------------------===//
// Comparer: structural_equal and structural_diff
//===----------------------------------------------------------------------===//

class Comparer {
 public:
  explicit Comparer(bool explain) : explain_(explain) {}

  const std::string &diff() const { return diff_; }

  bool func(const PrimFunc &a, const PrimFunc &b) {
    if (!a.defined() || !b.defined()) {
      if (a.defined() == b.defined()) return true;
      return fail(a.defined() ? a.name() : "(undefined)", b.defined() ? b.name() : "(undefined)");
    }
    {
      Seg s(*this, "name");
      if (a.name() != b.name()) return fail(quote(a.name()), quote(b.name()));
    }
    if (a.params().size() != b.params().size())
      return fail_at("params", std::to_string(a.params().size()) + " parameters",
                     std::to_string(b.params().size()) + " parameters");
    for (size_t i = 0; i < a.params().size(); ++i) {
      Seg s(*this, "params", static_cast<int>(i));
      if (!define_var(a.params()[i], b.params()[i])) return false;
    }
    const auto &ma = a.buffer_map(), &mb = b.buffer_map();
    if (ma.size() != mb.size())
      return fail_at("buffer_map", std::to_string(ma.size()) + " buffers",
                     std::to_string(mb.size()) + " buffers");
    for (size_t i = 0; i < ma.size(); ++i) {
      Seg s(*this, "buffer_map", static_cast<int>(i));
      if (!var_use(ma[i].first, mb[i].first)) return false;
      // Symbolic shape variables are defined by their first occurrence here.
      define_free_ = true;
      bool ok = define_buffer(ma[i].second, mb[i].second);
      define_free_ = false;
      if (!ok) return false;
    }
    {
      Seg s(*this, "attrs");
      if (!annotations(a.attrs(), b.attrs())) return false;
    }
    Seg s(*this, "body");
    return stmt(a.body(), b.body());
  }

  bool module(const Module &a, const Module &b) {
    if (a.funcs.size() != b.funcs.size())
      return fail_at("funcs", std::to_string(a.funcs.size()) + " functions",
                     std::to_string(b.funcs.size()) + " functions");
    for (size_t i = 0; i < a.funcs.size(); ++i) {
      Seg s(*this, "funcs", static_cast<int>(i));
      size_t mark = undo_.size();
      bool ok = func(a.funcs[i], b.funcs[i]);
      pop_to(mark);
      if (!ok) return false;
    }
    return true;
  }

  bool expr(const Expr &a, const Expr &b) {
    if (!a.defined() || !b.defined()) {
      if (a.defined() == b.defined()) return true;
      return fail(expr_text(a), expr_text(b));
    }
    if (a.kind() != b.kind() || a.dtype() != b.dtype()) {
      if (a.dtype() == b.dtype()) return fail(expr_text(a), expr_text(b));
      return fail(expr_text(a) + " (" + a.dtype().str() + ")", expr_text(b) + " (" + b.dtype().str() + ")");
    }
    switch (a.kind()) {
      case NodeKind::IntImm:
        if (a.as<IntImm>()->value != b.as<IntImm>()->value) return fail(expr_text(a), expr_text(b));
        return true;
      case NodeKind::FloatImm:
        if (!same_float(a.as<FloatImm>()->value, b.as<FloatImm>()->value))
          return fail(expr_text(a), expr_text(b));
        return true;
      case NodeKind::Var:
        return var_use(Var::from(a), Var::from(b));
      case NodeKind::Binary: {
        const auto *x = a.as<Binary>(), *y = b.as<Binary>();
        if (x->op != y->op) return fail(expr_text(a), expr_text(b));
        return field("a", x->a, y->a) && field("b", x->b, y->b);
      }
      case NodeKind::Unary: {
        const auto *x = a.as<Unary>(), *y = b.as<Unary>();
        if (x->op != y->op) return fail(expr_text(a), expr_text(b));
        return field("a", x->a, y->a);
      }
      case NodeKind::Select: {
        const auto *x = a.as<Select>(), *y = b.as<Select>();
        return field("cond", x->cond, y->cond) && field("true_value", x->true_value, y->true_value) &&
               field("false_value", x->false_value, y->false_value);
      }
      case NodeKind::Cast:
        return field("value", a.as<Cast>()->value, b.as<Cast>()->value);
      case NodeKind::Load: {
        const auto *x = a.as<Load>(), *y = b.as<Load>();
        Seg s(*this, "Load", &x->buffer.name());
        if (!buffer_use(x->buffer, y->buffer)) return false;
        return expr_list("indices", x->indices, y->indices);
      }
      case NodeKind::Call: {
        const auto *x = a.as<Call>(), *y = b.as<Call>();
        if (x->op != y->op) return fail(expr_text(a), expr_text(b));
        return expr_list("args", x->args, y->args);
      }
      case NodeKind::StringImm:
        if (a.as<StringImm>()->value != b.as<StringImm>()->value) return fail(expr_text(a), expr_text(b));
        return true;
      case NodeKind::BufferPtr:
        return buffer_use(a.as<BufferPtr>()->buffer, b.as<BufferPtr>()->buffer);
      case NodeKind::OpaqueCall: {
        const auto *x = a.as<OpaqueCall>(), *y = b.as<OpaqueCall>();
        if (x->callee != y->callee) return fail(expr_text(a), expr_text(b));
        return expr_list("args", x->args, y->args);
      }
      case NodeKind::Let: {
        const auto *x = a.as<Let>(), *y = b.as<Let>();
        Seg s(*this, "Let", &x->var.name());
        if (!field("value", x->value, y->value)) return false;
        size_t mark = undo_.size();
        bool ok = define_var(x->var, y->var) && field("body", x->body, y->body);
        pop_to(mark);
        return ok;
      }
      default:
        return fail(expr_text(a), expr_text(b));
    }
  }

  bool stmt(const Stmt &a, const Stmt &b) {
    if (!a.defined() || !b.defined()) {
      if (a.defined() == b.defined()) return true;
      return fail(stmt_brief(a), stmt_brief(b));
    }
    if (a.kind() != b.kind()) return fail(stmt_brief(a), stmt_brief(b));
    switch (a.kind()) {
      case NodeKind::For:
        return for_(a.as<For>(), b.as<For>());
      case NodeKind::Block:
        return block(a.as<Block>(), b.as<Block>());
      case NodeKind::Store: {
        const auto *x = a.as<Store>(), *y = b.as<Store>();
        Seg s(*this, "Store", &x->buffer.name());
        return buffer_use(x->buffer, y->buffer) && field("value", x->value, y->value) &&
               expr_list("indices", x->indices, y->indices);
      }
      case NodeKind::Seq: {
        const auto &xs = a.as<Seq>()->stmts, &ys = b.as<Seq>()->stmts;
        size_t n = std::min(xs.size(), ys.size());
        for (size_t i = 0; i < n; ++i) {
          Seg s(*this, "Seq", static_cast<int>(i));
          if (!stmt(xs[i], ys[i])) return false;
        }
        if (xs.size() == ys.size()) return true;
        Seg s(*this, "Seq", static_cast<int>(n));
        return fail(n < xs.size() ? stmt_brief(xs[n]) : "(nothing)",
                    n < ys.size() ? stmt_brief(ys[n]) : "(nothing)");
      }
      case NodeKind::IfThenElse: {
        const auto *x = a.as<IfThenElse>(), *y = b.as<IfThenElse>();
        Seg s(*this, "IfThenElse");
        if (!field("cond", x->cond, y->cond)) return false;
        {
          Seg t(*this, "then");
          if (!stmt(x->then_case, y->then_case)) return false;
        }
        Seg e(*this, "else");
        if (x->else_case.has_value() != y->else_case.has_value())
          return fail(x->else_case ? stmt_brief(*x->else_case) : "(nothing)",
                      y->else_case ? stmt_brief(*y->else_case) : "(nothing)");
        return !x->else_case || stmt(*x->else_case, *y->else_case);
      }
      case NodeKind::LetStmt: {
        const auto *x = a.as<LetStmt>(), *y = b.as<LetStmt>();
        Seg s(*this, "LetStmt", &x->var.name());
        if (!field("value", x->value, y->value)) return false;
        size_t mark = undo_.size();
        bool ok = define_var(x->var, y->var) && stmt(x->body, y->body);
        pop_to(mark);
        return ok;
      }
      case NodeKind::Evaluate: {
        Seg s(*this, "Evaluate");
        return field("value", a.as<Evaluate>()->value, b.as<Evaluate>()->value);
      }
      default:
        return fail(stmt_brief(a), stmt_brief(b));
    }
  }

 private:
  /// One step of the path: "label", "label(name)" or "label[index]".
  struct PathStep {
    const char *label;
    const std::string *name;
    int index;
  };
  /// Pushes a path step for the lifetime of the object.
  struct Seg {
    Seg(Comparer &c, const char *label, const std::string *name = nullptr) : c(c) {
      c.path_.push_back({label, name, -1});
    }
    Seg(Comparer &c, const char *label, int index) : c(c) { c.path_.push_back({label, nullptr, index}); }
    ~Seg() { c.path_.pop_back(); }
    Comparer &c;
  };

  static std::string quote(const std::string &s) { return "\"" + s + "\""; }

  std::string path_text() const {
    std::string out;
    for (const PathStep &p : path_) {
      // An indexed step ("Seq[1]", "indices[0]") glues to nothing before it.
      if (!out.empty()) out += '.';
      out += p.label;
      if (p.name) out += "(" + *p.name + ")";
      if (p.index >= 0) out += "[" + std::to_string(p.index) + "]";
    }
    return out.empty() ? "(top)" : out;
  }

  bool fail(const std::string &a, const std::string &b, const std::string &note = "") {
    if (explain_ && diff_.empty()) diff_ = path_text() + ": " + a + " vs " + b + note;
    return false;
  }
  bool fail_at(const char *label, const std::string &a, const std::string &b) {
    Seg s(*this, label);
    return fail(a, b);
  }

  bool field(const char *label, const Expr &a, const Expr &b) {
    Seg s(*this, label);
    return expr(a, b);
  }

  bool expr_list(const char *label, const std::vector<Expr> &a, const std::vector<Expr> &b) {
    if (a.size() != b.size())
      return fail_at(label, std::to_string(a.size()) + " items", std::to_string(b.size()) + " items");
    for (size_t i = 0; i < a.size(); ++i) {
      Seg s(*this, label, static_cast<int>(i));
      if (!expr(a[i], b[i])) return false;
    }
    return true;
  }

  bool annotations(const Annotations &a, const Annotations &b) {
    auto x = a.begin(), y = b.begin();
    for (; x != a.end() && y != b.end(); ++x, ++y) {
      if (x->first != y->first) {
        // The smaller key is present on one side only.
        if (x->first < y->first) return fail(quote(x->first) + ": " + x->second.str(), "(absent)");
        return fail("(absent)", quote(y->first) + ": " + y->second.str());
      }
      if (x->second != y->second) {
        Seg s(*this, x->first.c_str());
        return fail(x->second.str(), y->second.str());
      }
    }
    if (x != a.end()) return fail(quote(x->first) + ": " + x->second.str(), "(absent)");
    if (y != b.end()) return fail("(absent)", quote(y->first) + ": " + y->second.str());
    return true;
  }

  bool for_(const For *x, const For *y) {
    Seg s(*this, "For", &x->loop_var.name());
    if (x->for_kind != y->for_kind)
      return fail_at("kind", for_kind_name(x->for_kind), for_kind_name(y->for_kind));
    if (x->thread_tag != y->thread_tag)
      return fail_at("thread_tag", quote(x->thread_tag), quote(y->thread_tag));
    {
      Seg a(*this, "annotations");
      if (!annotations(x->annotations, y->annotations)) return false;
    }
    if (!field("min", x->min, y->min) || !field("extent", x->extent, y->extent)) return false;
    size_t mark = undo_.size();
    bool ok = define_var(x->loop_var, y->loop_var) && stmt(x->body, y->body);
    pop_to(mark);
    return ok;
  }

  bool region(const char *label, const std::vector<BufferRegion> &a, const std::vector<BufferRegion> &b) {
    if (a.size() != b.size())
      return fail_at(label, std::to_string(a.size()) + " regions", std::to_string(b.size()) + " regions");
    for (size_t i = 0; i < a.size(); ++i) {
      Seg s(*this, label, static_cast<int>(i));
      if (!buffer_use(a[i].buffer, b[i].buffer)) return false;
      const auto &ra = a[i].region, &rb = b[i].region;
      if (ra.size() != rb.size())
        return fail(std::to_string(ra.size()) + " dimensions", std::to_string(rb.size()) + " dimensions");
      for (size_t d = 0; d < ra.size(); ++d) {
        Seg r(*this, "region", static_cast<int>(d));
        if (!field("min", ra[d].min, rb[d].min) || !field("extent", ra[d].extent, rb[d].extent)) return false;
      }
    }
    return true;
  }

  bool block(const Block *x, const Block *y) {
    Seg s(*this, "Block", &x->name);
    if (x->name != y->name) return fail_at("name", quote(x->name), quote(y->name));
    if (x->iter_vars.size() != y->iter_vars.size())
      return fail_at("iter_vars", std::to_string(x->iter_vars.size()) + " iter vars",
                     std::to_string(y->iter_vars.size()) + " iter vars");
    // Domains, bindings and the predicate are outside the block's scope.
    for (size_t i = 0; i < x->iter_vars.size(); ++i) {
      const IterVar &p = x->iter_vars[i], &q = y->iter_vars[i];
      Seg v(*this, "iter_vars", static_cast<int>(i));
      if (p.kind != q.kind)
        return fail_at("kind", std::string(1, iter_kind_char(p.kind)),
                       std::string(1, iter_kind_char(q.kind)));
      if (!field("dom.min", p.dom.min, q.dom.min) || !field("dom.extent", p.dom.extent, q.dom.extent))
        return false;
    }
    if (!expr_list("bindings", x->bindings, y->bindings)) return false;
    if (!field("predicate", x->predicate, y->predicate)) return false;
    {
      Seg a(*this, "annotations");
      if (!annotations(x->annotations, y->annotations)) return false;
    }
    size_t mark = undo_.size();
    bool ok = block_scope(x, y);
    pop_to(mark);
    return ok;
  }

  bool block_scope(const Block *x, const Block *y) {
    for (size_t i = 0; i < x->iter_vars.size(); ++i) {
      Seg v(*this, "iter_vars", static_cast<int>(i));
      if (!define_var(x->iter_vars[i].var, y->iter_vars[i].var)) return false;
    }
    if (x->allocs.size() != y->allocs.size())
      return fail_at("allocs", std::to_string(x->allocs.size()) + " buffers",
                     std::to_string(y->allocs.size()) + " buffers");
    for (size_t i = 0; i < x->allocs.size(); ++i) {
      Seg a(*this, "allocs", static_cast<int>(i));
      if (!define_buffer(x->allocs[i], y->allocs[i])) return false;
    }
    if (!region("reads", x->reads, y->reads) || !region("writes", x->writes, y->writes)) return false;
    {
      Seg i(*this, "init");
      if (x->init.has_value() != y->init.has_value())
        return fail(x->init ? stmt_brief(*x->init) : "(none)", y->init ? stmt_brief(*y->init) : "(none)");
      if (x->init && !stmt(*x->init, *y->init)) return false;
    }
    return stmt(x->body, y->body);
  }

  //===--------------------------------------------------------------------===//
  // The scoped bijection between left and right variables and buffers
  //===--------------------------------------------------------------------===//

  struct Undo {
    const void *a, *b;
    const void *old_a_to, *old_b_to;  // previous mappings, or nullptr
  };

  static const void *lookup(const std::unordered_map<const void *, const void *> &m, const void *k) {
    auto it = m.find(k);
    return it == m.end() ? nullptr : it->second;
  }

  void bind(const void *a, const void *b) {
    undo_.push_back({a, b, lookup(lhs_, a), lookup(rhs_, b)});
    lhs_[a] = b;
    rhs_[b] = a;
  }

  void pop_to(size_t mark) {
    while (undo_.size() > mark) {
      const Undo u = undo_.back();
      undo_.pop_back();
      if (u.old_a_to)
        lhs_[u.a] = u.old_a_to;
      else
        lhs_.erase(u.a);
      if (u.old_b_to)
        rhs_[u.b] = u.old_b_to;
      else
        rhs_.erase(u.b);
    }
  }

  bool define_var(const Var &a, const Var &b) {
    if (a.dtype() != b.dtype())
      return fail(a.name() + " (" + a.dtype().str() + ")", b.name() + " (" + b.dtype().str() + ")");
    bind(a.get(), b.get());
    return true;
  }

  bool var_use(const Var &a, const Var &b) {
    const void *a_to = lookup(lhs_, a.get()), *b_to = lookup(rhs_, b.get());
    if (!a_to && !b_to) {
      if (define_free_ && a.dtype() == b.dtype()) {
        bind(a.get(), b.get());
        return true;
      }
      if (a.same_as(b)) return true;
      return fail(a.name(), b.name(), " (different free variables)");
    }
    if (a_to == b.get() && b_to == a.get()) return true;
    if (a.dtype() != b.dtype())
      return fail(a.name() + " (" + a.dtype().str() + ")", b.name() + " (" + b.dtype().str() + ")");
    return fail(a.name(), b.name(), " (they refer to different definitions)");
  }

  bool define_buffer(const Buffer &a, const Buffer &b) {
    if (a.dtype() != b.dtype()) return fail_at("dtype", a.dtype().str(), b.dtype().str());
    if (a.scope() != b.scope()) return fail_at("scope", quote(a.scope()), quote(b.scope()));
    if (a.ndim() != b.ndim())
      return fail_at("shape", std::to_string(a.ndim()) + " dimensions",
                     std::to_string(b.ndim()) + " dimensions");
    if (!expr_list("shape", a.shape(), b.shape()) || !expr_list("strides", a->strides, b->strides))
      return false;
    bind(a.get(), b.get());
    return true;
  }

  bool buffer_use(const Buffer &a, const Buffer &b) {
    Seg s(*this, "buffer");
    if (!a.defined() || !b.defined()) {
      if (a.defined() == b.defined()) return true;
      return fail(a.defined() ? a.name() : "(undefined)", b.defined() ? b.name() : "(undefined)");
    }
    const void *a_to = lookup(lhs_, a.get()), *b_to = lookup(rhs_, b.get());
    if (!a_to && !b_to) {
      if (a.same_as(b)) return true;
      return fail(a.name(), b.name(), " (different free buffers)");
    }
    if (a_to == b.get() && b_to == a.get()) return true;
    return fail(a.name(), b.name(), " (they refer to different definitions)");
  }

  bool explain_;
  bool define_free_ = false;
  std::string diff_;
  std::vector<PathStep> path_;
  std::unordered_map<const void *, const void *> lhs_, rhs_;
  std::vector<Undo> undo_;
};

//===----------------------------------------------------------------------===//
// Hasher: the same walk over one tree
//===----------------------------------------------------------------------===//

class Hasher {
 public:
  size_t result() const { return h_; }

  void func(const PrimFunc &f) {
    if (!f.defined()) return mix(0x51);
    mix_str(f.name());
    mix(f.params().size());
    for (const Var &p : f.params()) define(p.get(), p.dtype());
    mix(f.buffer_map().size());
    for (const auto &[v, b] : f.buffer_map()) {
      var_use(v);
      define_free_ = true;
      define_buffer(b);
      define_free_ = false;
    }
    annotations(f.attrs());
    stmt(f.body());
  }

  void expr(const Expr &e) {
    if (!e.defined()) return mix(0xdead);
    mix(static_cast<size_t>(e.kind()));
    mix_dtype(e.dtype());
    switch (e.kind()) {
      case NodeKind::IntImm:
        return mix(static_cast<size_t>(e.as<IntImm>()->value));
      case NodeKind::FloatImm: {
        double v = e.as<FloatImm>()->value;
        if (std::isnan(v)) return mix(0x7ff8);
        uint64_t bits;
        std::memcpy(&bits, &v, sizeof(bits));
        return mix(static_cast<size_t>(bits));
      }
      case NodeKind::Var:
        return var_use(Var::from(e));
      case NodeKind::Binary: {
        const auto *x = e.as<Binary>();
        mix(static_cast<size_t>(x->op));
        expr(x->a);
        return expr(x->b);
      }
      case NodeKind::Unary:
        mix(static_cast<size_t>(e.as<Unary>()->op));
        return expr(e.as<Unary>()->a);
      case NodeKind::Select: {
        const auto *x = e.as<Select>();
        expr(x->cond);
        expr(x->true_value);
        return expr(x->false_value);
      }
      case NodeKind::Cast:
        return expr(e.as<Cast>()->value);
      case NodeKind::Load:
        buffer_use(e.as<Load>()->buffer);
        return exprs(e.as<Load>()->indices);
      case NodeKind::Call:
        mix(static_cast<size_t>(e.as<Call>()->op));
        return exprs(e.as<Call>()->args);
      case NodeKind::StringImm:
        mix(std::hash<std::string>()(e.as<StringImm>()->value));
        return;
      case NodeKind::BufferPtr:
        buffer_use(e.as<BufferPtr>()->buffer);
        return;
      case NodeKind::OpaqueCall:
        mix(std::hash<std::string>()(e.as<OpaqueCall>()->callee));
        return exprs(e.as<OpaqueCall>()->args);
      case NodeKind::Let: {
        const auto *x = e.as<Let>();
        expr(x->value);
        size_t mark = undo_.size();
        define(x->var.get(), x->var.dtype());
        expr(x->body);
        return pop_to(mark);
      }
      default:
        return;
    }
  }

  void stmt(const Stmt &s) {
    if (!s.defined()) return mix(0xbeef);
    mix(static_cast<size_t>(s.kind()) + 0x100);
    switch (s.kind()) {
      case NodeKind::For: {
        const auto *x = s.as<For>();
        mix(static_cast<size_t>(x->for_kind));
        mix_str(x->thread_tag);
        annotations(x->annotations);
        expr(x->min);
        expr(x->extent);
        size_t mark = undo_.size();
        define(x->loop_var.get(), x->loop_var.dtype());
        stmt(x->body);
        return pop_to(mark);
      }
      case NodeKind::Block:
        return block(s.as<Block>());
      case NodeKind::Store: {
        const auto *x = s.as<Store>();
        buffer_use(x->buffer);
        expr(x->value);
        return exprs(x->indices);
      }
      case NodeKind::Seq:
        mix(s.as<Seq>()->stmts.size());
        for (const Stmt &c : s.as<Seq>()->stmts) stmt(c);
        return;
      case NodeKind::IfThenElse: {
        const auto *x = s.as<IfThenElse>();
        expr(x->cond);
        stmt(x->then_case);
        mix(x->else_case.has_value());
        if (x->else_case) stmt(*x->else_case);
        return;
      }
      case NodeKind::LetStmt: {
        const auto *x = s.as<LetStmt>();
        expr(x->value);
        size_t mark = undo_.size();
        define(x->var.get(), x->var.dtype());
        stmt(x->body);
        return pop_to(mark);
      }
      case NodeKind::Evaluate:
        return expr(s.as<Evaluate>()->value);
      default:
        return;
    }
  }

 private:
  void mix(size_t x) { h_ ^= x + 0x9e3779b97f4a7c15ull + (h_ << 6) + (h_ >> 2); }
  void mix_str(const std::string &s) { mix(std::hash<std::string>()(s)); }
  void mix_dtype(DataType t) {
    mix((static_cast<size_t>(t.code()) << 24) | (static_cast<size_t>(t.bits()) << 16) |
        static_cast<size_t>(t.lanes()));
  }
  void exprs(const std::vector<Expr> &xs) {
    mix(xs.size());
    for (const Expr &x : xs) expr(x);
  }
  void annotations(const Annotations &a) {
    mix(a.size());
    for (const auto &[k, v] : a) {
      mix_str(k);
      mix(v.hash());
    }
  }

  void block(const Block *x) {
    mix_str(x->name);
    mix(x->iter_vars.size());
    for (const IterVar &iv : x->iter_vars) {
      mix(static_cast<size_t>(iv.kind));
      expr(iv.dom.min);
      expr(iv.dom.extent);
    }
    exprs(x->bindings);
    expr(x->predicate);
    annotations(x->annotations);
    size_t mark = undo_.size();
    for (const IterVar &iv : x->iter_vars) define(iv.var.get(), iv.var.dtype());
    mix(x->allocs.size());
    for (const Buffer &b : x->allocs) define_buffer(b);
    for (const auto *regions : {&x->reads, &x->writes}) {
      mix(regions->size());
      for (const BufferRegion &r : *regions) {
        buffer_use(r.buffer);
        mix(r.region.size());
        for (const Range &rg : r.region) {
          expr(rg.min);
          expr(rg.extent);
        }
      }
    }
    mix(x->init.has_value());
    if (x->init) stmt(*x->init);
    stmt(x->body);
    pop_to(mark);
  }

  // A definition hashes its position; uses hash the position they refer to.
  void define(const void *node, DataType t) {
    mix_dtype(t);
    auto it = index_.find(node);
    undo_.push_back({node, it == index_.end() ? kNone : it->second});
    index_[node] = next_++;
  }
  void pop_to(size_t mark) {
    while (undo_.size() > mark) {
      auto [node, old] = undo_.back();
      undo_.pop_back();
      if (old == kNone)
        index_.erase(node);
      else
        index_[node] = old;
    }
  }
  void var_use(const Var &v) {
    auto it = index_.find(v.get());
    if (it != index_.end()) return mix(it->second * 31 + 7);
    if (define_free_) return define(v.get(), v.dtype());
    mix_dtype(v.dtype());  // a free variable: identity must not enter the hash
  }
  void define_buffer(const Buffer &b) {
    mix_dtype(b.dtype());
    mix_str(b.scope());
    exprs(b.shape());
    exprs(b->strides);
    define(b.get(), b.dtype());
  }
  void buffer_use(const Buffer &b) {
    if (!b.defined()) return mix(0xb0f);
    auto it = index_.find(b.get());
    if (it != index_.end()) return mix(it->second * 31 + 11);
    mix_dtype(b.dtype());
    mix(b.shape().size());
  }

  static constexpr size_t kNone = ~size_t{0};
  size_t h_ = 0x12345;
  bool define_free_ = false;
  size_t next_ = 0;
  std::unordered_map<const void *, size_t> index_;
  std::vector<std::pair<const void *, size_t>> undo_;
};

}  // namespace

bool structural_equal(const PrimFunc &a, const PrimFunc &b) {
  return Comparer(false).func(a, b);
}
bool structural_equal(const Module &a, const Module &b) {
  return Comparer(false).module(a, b);
}
bool structural_equal(const Stmt &a, const Stmt &b) {
  return Comparer(false).stmt(a, b);
}
bool structural_equal(const Expr &a, const Expr &b) {
  return Comparer(false).expr(a, b);
}

std::string structural_diff(const PrimFunc &a, const PrimFunc &b) {
  Comparer c(true);
  if (c.func(a, b)) return "";
  return c.diff();
}

size_t structural_hash(const PrimFunc &f) {
  Hasher h;
  h.func(f);
  return h.result();
}
size_t structural_hash(const Stmt &s) {
  Hasher h;
  h.stmt(s);
  return h.result();
}
size_t structural_hash(const Expr &e) {
  Hasher h;
  h.expr(e);
  return h.result();
}

}  // namespace tessera::ir
