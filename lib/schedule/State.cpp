//===- lib/schedule/State.cpp - Finding and replacing statements -----------===//
//
// Handles are resolved by walking the function (STYLE.md 3.3: lookup first,
// an sref tree only if profiling asks for one). Functions being scheduled
// hold tens of statements, so a walk per call costs nothing next to the
// checks a primitive makes.
//
//===----------------------------------------------------------------------===//
#include "State.h"

#include <functional>

#include "tessera/ir/Functor.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

/// The statements directly inside `s`, in program order.
std::vector<Stmt> children(const Stmt &s) {
  switch (s.kind()) {
    case NodeKind::For: return {s.as<For>()->body};
    case NodeKind::Block: {
      const Block *b = s.as<Block>();
      if (b->init) return {*b->init, b->body};
      return {b->body};
    }
    case NodeKind::Seq: return s.as<Seq>()->stmts;
    case NodeKind::IfThenElse: {
      const IfThenElse *i = s.as<IfThenElse>();
      if (i->else_case) return {i->then_case, *i->else_case};
      return {i->then_case};
    }
    case NodeKind::LetStmt: return {s.as<LetStmt>()->body};
    default: return {};
  }
}

/// Pre-order search for the first statement satisfying `pred`.
bool search(const Stmt &s, const std::function<bool(const Stmt &)> &pred, std::vector<Stmt> &ancestors,
            StmtPath &out) {
  if (pred(s)) {
    out.ancestors = ancestors;
    out.stmt = s;
    return true;
  }
  ancestors.push_back(s);
  for (const Stmt &c : children(s))
    if (search(c, pred, ancestors, out)) return true;
  ancestors.pop_back();
  return false;
}

std::optional<StmtPath> find_if(const PrimFunc &f, const std::function<bool(const Stmt &)> &pred) {
  std::vector<Stmt> ancestors;
  StmtPath out;
  if (search(f.body(), pred, ancestors, out)) return out;
  return std::nullopt;
}

/// Rebuilds statements only: expressions are never entered.
class Replacer : public IRMutator {
 public:
  explicit Replacer(const std::unordered_map<const StmtNode *, Stmt> &map) : map_(map) {}
  Stmt mutate(const Stmt &s) override {
    if (auto it = map_.find(s.get()); it != map_.end()) return it->second;
    return IRMutator::mutate(s);
  }
  Expr mutate(const Expr &e) override { return e; }

 private:
  const std::unordered_map<const StmtNode *, Stmt> &map_;
};

/// Renames a loop whose name was already seen (pre-order: the outer or first keeps it).
class LoopRenamer : public IRMutator {
 public:
  explicit LoopRenamer(std::set<std::string> all) : all_(std::move(all)) {}
  using IRMutator::mutate;

 protected:
  Stmt visit_(const For *op, const Stmt &self) override {
    Var v = op->loop_var;
    Stmt body = op->body;
    if (!seen_.insert(v.name()).second) {
      v = Var(fresh_name(all_, v.name()), v.dtype());
      body = substitute(body, {{op->loop_var, v}});
    }
    Stmt new_body = mutate(body);
    if (v.same_as(op->loop_var) && new_body.same_as(op->body)) return self;
    return For::make(v, op->min, op->extent, op->for_kind, new_body, op->thread_tag, op->annotations);
  }

 private:
  std::set<std::string> all_, seen_;
};

void collect_blocks(const Stmt &s, bool nested, std::vector<Stmt> &out) {
  for (const Stmt &c : children(s)) {
    if (c.is<Block>()) {
      out.push_back(c);
      if (!nested) continue;
    }
    collect_blocks(c, nested, out);
  }
}

}  // namespace

Stmt StmtPath::scope() const {
  for (auto it = ancestors.rbegin(); it != ancestors.rend(); ++it)
    if (it->is<Block>()) return *it;
  return stmt;  // the root block itself
}

StmtPath find_block(const State &st, const BlockRef &ref, std::string_view primitive) {
  auto p = find_if(st.func, [&](const Stmt &s) {
    const Block *b = s.as<Block>();
    return b && b->name == ref.name;
  });
  if (!p)
    throw StaleHandleError(std::string(primitive), "block " + quoted(ref.name) + " no longer exists in function " +
                                                       quoted(st.func.name()));
  return *p;
}

StmtPath find_loop(const State &st, const LoopRef &ref, std::string_view primitive) {
  auto p = ref.var.defined() ? find_if(st.func,
                                       [&](const Stmt &s) {
                                         const For *f = s.as<For>();
                                         return f && f->loop_var.same_as(ref.var);
                                       })
                             : std::nullopt;
  if (!p)
    throw StaleHandleError(std::string(primitive),
                           "loop " + quoted(ref.var.defined() ? ref.name() : "<undefined>") +
                               " no longer exists in function " + quoted(st.func.name()) +
                               " (split and fuse replace the loops they transform)");
  return *p;
}

StmtPath find(const State &st, const BlockOrLoop &ref, std::string_view primitive) {
  if (const auto *b = std::get_if<BlockRef>(&ref)) return find_block(st, *b, primitive);
  return find_loop(st, std::get<LoopRef>(ref), primitive);
}

void replace(State &st, const std::unordered_map<const StmtNode *, Stmt> &map) {
  Replacer r(map);
  st.func = st.func.with_body(r.mutate(st.func.body()));
}

Stmt replace_in(const Stmt &root, const std::unordered_map<const StmtNode *, Stmt> &map) {
  Replacer r(map);
  return r.mutate(root);
}

Stmt block_with_predicate(const Block &b, Expr predicate) {
  return Block::make(b.name, b.iter_vars, b.bindings, std::move(predicate), b.reads, b.writes, b.allocs, b.init,
                     b.body, b.annotations);
}

Stmt block_with_annotations(const Block &b, Annotations annotations) {
  return Block::make(b.name, b.iter_vars, b.bindings, b.predicate, b.reads, b.writes, b.allocs, b.init, b.body,
                     std::move(annotations));
}

Stmt loop_with_kind(const For &f, ForKind kind, std::string thread_tag) {
  return For::make(f.loop_var, f.min, f.extent, kind, f.body, std::move(thread_tag), f.annotations);
}

Stmt loop_with_annotations(const For &f, Annotations annotations) {
  return For::make(f.loop_var, f.min, f.extent, f.for_kind, f.body, f.thread_tag, std::move(annotations));
}

void replace(State &st, const Stmt &old_stmt, const Stmt &new_stmt) {
  replace(st, std::unordered_map<const StmtNode *, Stmt>{{old_stmt.get(), new_stmt}});
}

std::set<std::string> loop_names(const PrimFunc &f) {
  std::set<std::string> names;
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const For *l = s.as<For>()) names.insert(l->loop_var.name());
  });
  return names;
}

std::string fresh_name(std::set<std::string> &taken, const std::string &hint) {
  std::string name = hint.empty() ? "v" : hint;
  for (int i = 1; taken.count(name); ++i) name = hint + "_" + std::to_string(i);
  taken.insert(name);
  return name;
}

PrimFunc uniquify_loop_names(const PrimFunc &f) {
  LoopRenamer r(loop_names(f));
  return f.with_body(r.mutate(f.body()));
}

namespace {

class BlockRenamer : public IRMutator {
 public:
  /// `kept`: names whose first holder is not among the blocks renamed (the
  /// root block's), so every block under it of that name gets a fresh one.
  BlockRenamer(std::set<std::string> taken, const std::set<std::string> &repeated, std::set<std::string> kept)
      : taken_(std::move(taken)), first_(std::move(kept)), repeated_(repeated) {}
  std::map<std::string, std::vector<std::string>> given;

  Stmt visit_(const Block *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const Block *b = s.as<Block>();
    std::string name = b->name;
    if (name.empty()) name = fresh_name(taken_, "block");
    else if (repeated_.count(name)) name = first_.insert(name).second ? name : fresh_name(taken_, name);
    if (name == b->name) return s;
    if (!b->name.empty()) given[b->name].push_back(name);
    return Block::make(name, b->iter_vars, b->bindings, b->predicate, b->reads, b->writes, b->allocs, b->init,
                       b->body, b->annotations);
  }

 private:
  std::set<std::string> taken_, first_;
  const std::set<std::string> &repeated_;
};

}  // namespace

PrimFunc uniquify_block_names(const PrimFunc &f, std::map<std::string, std::vector<std::string>> &ambiguous) {
  std::set<std::string> taken, repeated, kept;
  // The root block keeps its name ("root", as TVM names it): a block under it
  // of the same name (TVM prints such functions) is renamed like a repeat.
  const Block *root = f.body().as<Block>();
  if (root) taken.insert(root->name), kept.insert(root->name);
  std::vector<Stmt> blocks = blocks_under(f.body());
  bool any = false;
  for (const Stmt &s : blocks) {
    const std::string &n = s.as<Block>()->name;
    any |= n.empty();
    if (!taken.insert(n).second) repeated.insert(n), any = true;
  }
  if (!any) return f;
  BlockRenamer r(taken, repeated, kept);
  Stmt body = root ? root->with_body(r.mutate(root->body)) : r.mutate(f.body());
  for (auto &[name, names] : r.given) {
    names.insert(names.begin(), name);
    ambiguous[name] = names;
  }
  return f.with_body(body);
}

std::vector<Stmt> child_blocks(const Stmt &s) {
  std::vector<Stmt> out;
  collect_blocks(s, /*nested=*/false, out);
  return out;
}

std::vector<Stmt> blocks_under(const Stmt &s) {
  std::vector<Stmt> out;
  collect_blocks(s, /*nested=*/true, out);
  return out;
}

std::string quoted(const std::string &name) { return "'" + name + "'"; }

}  // namespace tessera::schedule::detail
