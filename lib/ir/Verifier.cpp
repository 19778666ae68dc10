//===- Verifier.cpp - Well-formedness checks -------------------------------===//
//
// One walk over the function with explicit scopes for variables and buffers.
// The walk never throws: every problem becomes one line, prefixed with where
// it was found ("in function 'f', block 'C', loop 'j': ..."). A pre-pass
// records every definition so that an out-of-scope use can say which
// definition it missed instead of only "not defined".
//
//===----------------------------------------------------------------------===//
#include "tessera/ir/Verifier.h"

#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/Functor.h"

namespace tessera::ir {
namespace {

/// What defines a variable, for messages: "loop 'i'", "block 'C'", "let 'x'".
struct Definition {
  enum Kind { Param, ShapeVar, Loop, IterVar, Let } kind;
  std::string owner;  // the loop variable, block or let name
};

std::string describe(const Definition &d) {
  switch (d.kind) {
    case Definition::Param:
      return "parameter '" + d.owner + "'";
    case Definition::ShapeVar:
      return "shape variable '" + d.owner + "'";
    case Definition::Loop:
      return "loop '" + d.owner + "'";
    case Definition::IterVar:
      return "block '" + d.owner + "'";
    case Definition::Let:
      return "let '" + d.owner + "'";
  }
  return "?";
}

class Verifier {
 public:
  explicit Verifier(const PrimFunc &f) : func_(f) {}

  std::vector<std::string> run() {
    collect_definitions();
    // Parameters and the parameter buffers' shape variables are defined for
    // the whole function (and never popped).
    for (const Var &p : func_.params()) define(p, {Definition::Param, p.name()});
    for (const Var &v : func_.shape_vars())
      if (!in_scope(v)) define(v, {Definition::ShapeVar, v.name()});
    for (const auto &[v, b] : func_.buffer_map()) {
      if (!buffers_.insert(b.get()).second) report("buffer '" + b.name() + "' is bound to two parameters");
      ++buffer_scope_[b.get()];
    }
    stmt(func_.body());
    for (const auto &[name, count] : block_names_)
      if (count > 1)
        problems_.push_back("in function '" + func_.name() + "': " + std::to_string(count) +
                            " blocks are named '" + name + "' (block names must be unique)");
    return std::move(problems_);
  }

 private:
  //===------------------------------------------------------------------===//
  // Reporting
  //===------------------------------------------------------------------===//

  void report(const std::string &msg) {
    std::string where = "in function '" + func_.name() + "'";
    if (!blocks_.empty()) where += ", block '" + blocks_.back() + "'";
    if (!loops_.empty()) where += ", loop '" + loops_.back() + "'";
    problems_.push_back(where + ": " + msg);
  }

  //===------------------------------------------------------------------===//
  // Scopes
  //===------------------------------------------------------------------===//

  void collect_definitions() {
    auto note = [&](const Var &v, Definition d) { all_defs_.emplace(v.get(), std::move(d)); };
    pre_order_visit(
        func_.body(),
        [&](const Expr &e) {
          if (const auto *l = e.as<ir::Let>()) note(l->var, {Definition::Let, l->var.name()});
        },
        [&](const Stmt &s) {
          if (const auto *f = s.as<For>()) note(f->loop_var, {Definition::Loop, f->loop_var.name()});
          if (const auto *b = s.as<Block>())
            for (const IterVar &iv : b->iter_vars) note(iv.var, {Definition::IterVar, b->name});
          if (const auto *l = s.as<LetStmt>()) note(l->var, {Definition::Let, l->var.name()});
        });
  }

  bool in_scope(const Var &v) const {
    auto it = var_scope_.find(v.get());
    return it != var_scope_.end() && it->second > 0;
  }

  void define(const Var &v, Definition d) {
    if (!v.defined()) return report("a " + describe(d) + " has an undefined variable");
    auto [it, fresh] = first_def_.emplace(v.get(), d);
    if (!fresh)
      report("variable '" + v.name() + "' is defined twice: by " + describe(it->second) + " and by " +
             describe(d));
    ++var_scope_[v.get()];
  }
  void undefine(const Var &v) {
    if (v.defined()) --var_scope_[v.get()];
  }

  void var_use(const VarNode *v) {
    auto it = var_scope_.find(v);
    if (it != var_scope_.end() && it->second > 0) return;
    if (header_vars_.count(v))
      return report("variable '" + v->name + "' is used in " + header_what_ + ", which defines it");
    auto def = all_defs_.find(v);
    if (def == all_defs_.end()) return report("variable '" + v->name + "' is not defined");
    const Definition &d = def->second;
    switch (d.kind) {
      case Definition::Loop:
        return report("variable '" + v->name + "' is used outside the loop that defines it");
      case Definition::IterVar:
        return report("iter var '" + v->name + "' is used outside block '" + d.owner + "' that defines it");
      default:
        return report("variable '" + v->name + "' is used outside the " + describe(d) + " that defines it");
    }
  }

  void buffer_use(const Buffer &b, const char *how) {
    if (!b.defined()) return report(std::string("an undefined buffer is ") + how);
    auto it = buffer_scope_.find(b.get());
    if (it != buffer_scope_.end() && it->second > 0) return;
    report("buffer '" + b.name() + "' is " + how +
           " but is neither a parameter buffer nor allocated by an enclosing block");
  }

  //===------------------------------------------------------------------===//
  // Expressions
  //===------------------------------------------------------------------===//

  void expr(const Expr &e, const char *what = "expression") {
    if (!e.defined()) return report(std::string("missing ") + what);
    switch (e.kind()) {
      case NodeKind::IntImm:
      case NodeKind::FloatImm:
        return;
      case NodeKind::Var:
        return var_use(e.as<VarNode>());
      case NodeKind::Binary:
        expr(e.as<Binary>()->a);
        return expr(e.as<Binary>()->b);
      case NodeKind::Unary:
        return expr(e.as<Unary>()->a);
      case NodeKind::Select: {
        const auto *s = e.as<Select>();
        expr(s->cond);
        expr(s->true_value);
        return expr(s->false_value);
      }
      case NodeKind::Cast:
        return expr(e.as<Cast>()->value);
      case NodeKind::Load: {
        const auto *l = e.as<Load>();
        buffer_use(l->buffer, "loaded");
        if (l->buffer.defined() && static_cast<int>(l->indices.size()) != l->buffer.ndim())
          report("load from '" + l->buffer.name() + "' has " + std::to_string(l->indices.size()) +
                 " indices but the buffer has " + std::to_string(l->buffer.ndim()) + " dimensions");
        for (const Expr &i : l->indices) expr(i, "index");
        return;
      }
      case NodeKind::Call:
        for (const Expr &a : e.as<Call>()->args) expr(a, "argument");
        return;
      case NodeKind::StringImm: return;
      case NodeKind::BufferPtr: return buffer_use(e.as<BufferPtr>()->buffer, "referenced");
      case NodeKind::OpaqueCall:
        for (const Expr &a : e.as<OpaqueCall>()->args) expr(a, "argument");
        return;
      case NodeKind::Let: {
        const auto *l = e.as<ir::Let>();
        expr(l->value, "let value");
        define(l->var, {Definition::Let, l->var.defined() ? l->var.name() : "?"});
        expr(l->body, "let body");
        return undefine(l->var);
      }
      default:
        return report(std::string("a ") + node_kind_name(e.kind()) + " node is used as an expression");
    }
  }

  /// Checks an expression evaluated in the header of a construct that defines
  /// `defs` (a loop's bounds, a block's bindings): a use of one of them gets a
  /// precise message.
  template <typename Defs>
  void header_expr(const Expr &e, const Defs &defs, std::string what) {
    header_vars_.clear();
    for (const Var &v : defs) header_vars_.insert(v.get());
    header_what_ = std::move(what);
    expr(e, header_what_.c_str());
    header_vars_.clear();
  }

  //===------------------------------------------------------------------===//
  // Statements
  //===------------------------------------------------------------------===//

  void stmt(const Stmt &s) {
    if (!s.defined()) return report("missing statement");
    switch (s.kind()) {
      case NodeKind::For:
        return for_(s.as<For>());
      case NodeKind::Block:
        return block(s.as<Block>());
      case NodeKind::Store: {
        const auto *st = s.as<Store>();
        buffer_use(st->buffer, "stored to");
        if (st->buffer.defined()) {
          if (static_cast<int>(st->indices.size()) != st->buffer.ndim())
            report("store to '" + st->buffer.name() + "' has " + std::to_string(st->indices.size()) +
                   " indices but the buffer has " + std::to_string(st->buffer.ndim()) + " dimensions");
          if (st->value.defined() && st->value.dtype() != st->buffer.dtype())
            report("store of " + st->value.dtype().str() + " into '" + st->buffer.name() + "' of type " +
                   st->buffer.dtype().str());
        }
        expr(st->value, "stored value");
        for (const Expr &i : st->indices) expr(i, "index");
        return;
      }
      case NodeKind::Seq:
        for (const Stmt &c : s.as<Seq>()->stmts) stmt(c);
        return;
      case NodeKind::IfThenElse: {
        const auto *i = s.as<IfThenElse>();
        expr(i->cond, "if condition");
        stmt(i->then_case);
        if (i->else_case) stmt(*i->else_case);
        return;
      }
      case NodeKind::LetStmt: {
        const auto *l = s.as<LetStmt>();
        expr(l->value, "let value");
        define(l->var, {Definition::Let, l->var.defined() ? l->var.name() : "?"});
        stmt(l->body);
        return undefine(l->var);
      }
      case NodeKind::Evaluate:
        return expr(s.as<Evaluate>()->value);
      default:
        return report(std::string("a ") + node_kind_name(s.kind()) + " node is used as a statement");
    }
  }

  void for_(const For *f) {
    if (!f->loop_var.defined()) return report("a loop has no loop variable");
    const std::string &name = f->loop_var.name();
    if (!f->loop_var.dtype().is_integer())
      report("loop variable '" + name + "' has non-integer type " + f->loop_var.dtype().str());
    const Var self[] = {f->loop_var};
    header_expr(f->min, self, "the min of loop '" + name + "'");
    header_expr(f->extent, self, "the extent of loop '" + name + "'");
    if (f->min.defined() && !f->min.dtype().is_integer())
      report("loop '" + name + "' has a non-integer min of type " + f->min.dtype().str());
    if (f->extent.defined() && !f->extent.dtype().is_integer())
      report("loop '" + name + "' has a non-integer extent of type " + f->extent.dtype().str());
    if (f->for_kind == ForKind::ThreadBinding && f->thread_tag.empty())
      report("loop '" + name + "' is bound to a thread but has no thread tag");
    if (f->for_kind != ForKind::ThreadBinding && !f->thread_tag.empty())
      report("loop '" + name + "' has thread tag '" + f->thread_tag + "' but is " +
             for_kind_name(f->for_kind) + ", not thread-bound");
    define(f->loop_var, {Definition::Loop, name});
    loops_.push_back(name);
    stmt(f->body);
    loops_.pop_back();
    undefine(f->loop_var);
  }

  void region(const BufferRegion &r, const std::string &block, const char *how) {
    buffer_use(r.buffer, how);
    if (r.buffer.defined() && static_cast<int>(r.region.size()) != r.buffer.ndim())
      report("the " + std::string(how == std::string("read") ? "reads" : "writes") + " region of '" +
             r.buffer.name() + "' in block '" + block + "' has " + std::to_string(r.region.size()) +
             " dimensions but the buffer has " + std::to_string(r.buffer.ndim()));
    for (const Range &rg : r.region) {
      expr(rg.min, "region min");
      expr(rg.extent, "region extent");
    }
  }

  void block(const Block *b) {
    const std::string &name = b->name;
    ++block_names_[name];
    // Step 1. The header, evaluated in the enclosing scope.
    if (b->iter_vars.size() != b->bindings.size())
      report("block '" + name + "' has " + std::to_string(b->iter_vars.size()) + " iter vars but " +
             std::to_string(b->bindings.size()) + " bindings");
    std::vector<Var> ivs;
    bool has_reduce = false;
    for (const IterVar &iv : b->iter_vars) {
      ivs.push_back(iv.var);
      has_reduce |= iv.kind == IterKind::Reduce;
    }
    for (const IterVar &iv : b->iter_vars) {
      std::string iv_name = iv.var.defined() ? iv.var.name() : "?";
      if (iv.var.defined() && !iv.var.dtype().is_integer())
        report("iter var '" + iv_name + "' of block '" + name + "' has non-integer type " +
               iv.var.dtype().str());
      for (const Expr *e : {&iv.dom.min, &iv.dom.extent}) {
        if (!e->defined() || e->dtype().is_integer()) continue;
        report("iter var '" + iv_name + "' of block '" + name + "' has a non-integer domain (" +
               e->dtype().str() + ")");
        break;
      }
      header_expr(iv.dom.min, ivs, "the domain of iter var '" + iv_name + "' of block '" + name + "'");
      header_expr(iv.dom.extent, ivs, "the domain of iter var '" + iv_name + "' of block '" + name + "'");
    }
    for (size_t i = 0; i < b->bindings.size(); ++i)
      header_expr(b->bindings[i], ivs, "the bindings of block '" + name + "'");
    header_expr(b->predicate, ivs, "the predicate of block '" + name + "'");
    if (b->predicate.defined() && !b->predicate.dtype().is_bool())
      report("block '" + name + "' has a predicate of type " + b->predicate.dtype().str() + ", not bool");
    if (b->init && !has_reduce)
      report("block '" + name + "' has an init statement but no reduction iter var");

    // Step 2. The block's own scope: iter vars, allocations, regions, body.
    std::vector<std::string> saved_loops;
    saved_loops.swap(loops_);
    blocks_.push_back(name);
    for (const IterVar &iv : b->iter_vars) define(iv.var, {Definition::IterVar, name});
    for (const Buffer &a : b->allocs) {
      if (!a.defined()) {
        report("block '" + name + "' allocates an undefined buffer");
        continue;
      }
      if (!buffers_.insert(a.get()).second) report("buffer '" + a.name() + "' is allocated twice");
      for (const Expr &e : a.shape()) expr(e, "buffer shape");
      ++buffer_scope_[a.get()];
    }
    for (const BufferRegion &r : b->reads) region(r, name, "read");
    for (const BufferRegion &r : b->writes) region(r, name, "written");
    if (b->init) stmt(*b->init);
    stmt(b->body);
    for (const Buffer &a : b->allocs)
      if (a.defined()) --buffer_scope_[a.get()];
    for (const IterVar &iv : b->iter_vars) undefine(iv.var);
    blocks_.pop_back();
    loops_.swap(saved_loops);
  }

  const PrimFunc &func_;
  std::vector<std::string> problems_;
  /// Enclosing block names, and the loop variables inside the innermost block.
  std::vector<std::string> blocks_, loops_;
  std::unordered_map<const void *, Definition> all_defs_, first_def_;
  std::unordered_map<const void *, int> var_scope_, buffer_scope_;
  std::unordered_set<const void *> buffers_;
  std::map<std::string, int> block_names_;
  std::unordered_set<const void *> header_vars_;
  std::string header_what_;
};

}  // namespace

std::vector<std::string> verify(const PrimFunc &f) {
  if (!f.defined()) return {"undefined function"};
  return Verifier(f).run();
}

void check_well_formed(const PrimFunc &f) {
  std::vector<std::string> problems = verify(f);
  if (problems.empty()) return;
  std::ostringstream os;
  os << "function '" << f.name() << "' is ill formed (" << problems.size() << " problem"
     << (problems.size() == 1 ? "" : "s") << "):";
  for (const std::string &p : problems) os << "\n  " << p;
  throw IllFormedError(os.str(), std::move(problems));
}

}  // namespace tessera::ir
