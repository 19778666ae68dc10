//===- analysis/AffineBinding.cpp - Affine bindings, simplified bindings ---===//
//
// Two services the loop primitives share:
//
//  - The "affine binding" precondition (TVM's): a block's bindings must be a
//    surjective affine map of the loops between the block and its scope, as
//    arith::detect_iter_map decides at the Surjective level. This is stricter
//    than "built from +, *, //, %": `vi = i, vj = i` (a loop used twice) and
//    `vi = i * 2` (values not contiguous) are rejected, because reordering or
//    tiling around them would not tile an iteration space.
//
//  - Binding simplification: split and fuse substitute loop variables by
//    index expressions; the arith::Analyzer, knowing every loop's range,
//    folds what the substitution leaves behind (`f // 16 * 16 + f % 16` back
//    to `f`, `(f0 * 64 + f1) // 64` to `f0`), so bindings stay readable and
//    their ranges provable.
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

#include "tessera/arith/IterMap.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

/// Binds every loop of `stmts` (ancestors) to its range.
void bind_loops(arith::Analyzer &ana, const std::vector<Stmt> &stmts) {
  for (const Stmt &s : stmts)
    if (const For *f = s.as<For>()) ana.bind(f->loop_var, Range{f->min, f->extent});
}

/// Rewrites the bindings and predicates of every block under a statement in
/// the simplest form the analyzer finds, with the loops it passes bound.
class BindingSimplifier : public IRMutator {
 public:
  BindingSimplifier(arith::Analyzer ana, const std::vector<Var> &only) : ana_(std::move(ana)), only_(only) {}

  Stmt visit_(const For *op, const Stmt &self) override {
    arith::Analyzer::Scope scope(ana_);
    ana_.bind(op->loop_var, Range{op->min, op->extent});
    return IRMutator::visit_(op, self);
  }

  Stmt visit_(const Block *op, const Stmt &self) override {
    std::vector<Expr> bindings;
    bool changed = false;
    for (const Expr &e : op->bindings) {
      bindings.push_back(simplify(e));
      changed |= !bindings.back().same_as(e);
    }
    Expr pred = simplify(op->predicate);
    changed |= !pred.same_as(op->predicate);
    // Inside the block its iter vars range over their domains (nested blocks).
    Stmt inner;
    {
      arith::Analyzer::Scope scope(ana_);
      for (const IterVar &iv : op->iter_vars) ana_.bind(iv.var, iv.dom);
      inner = IRMutator::visit_(op, self);
    }
    if (!changed) return inner;
    const Block &b = *inner.as<Block>();
    return Block::make(b.name, b.iter_vars, std::move(bindings), std::move(pred), b.reads, b.writes, b.allocs,
                       b.init, b.body, b.annotations);
  }

 private:
  /// `e` simplified when it mentions one of `only_` (all when empty).
  Expr simplify(const Expr &e) const {
    bool wanted = only_.empty();
    for (const Var &v : only_) wanted = wanted || uses_var(e, v);
    return wanted ? ana_.simplify(e) : e;
  }

  arith::Analyzer ana_;
  const std::vector<Var> &only_;
};

/// The loops between `block` and its scope, outermost first.
std::vector<const For *> loops_in_scope(const StmtPath &block) {
  std::vector<const For *> loops;
  for (auto it = block.ancestors.rbegin(); it != block.ancestors.rend() && !it->is<Block>(); ++it)
    if (const For *f = it->as<For>()) loops.insert(loops.begin(), f);
  return loops;
}

}  // namespace

arith::Analyzer analyzer_at(const StmtPath &p) {
  arith::Analyzer ana;
  bind_loops(ana, p.ancestors);
  return ana;
}

Stmt simplify_bindings(const Stmt &s, const arith::Analyzer &ana, const std::vector<Var> &only) {
  return BindingSimplifier(ana, only).mutate(s);
}

std::unordered_set<const VarNode *> loop_vars_of(const PrimFunc &f) {
  std::unordered_set<const VarNode *> vars;
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const For *l = s.as<For>()) vars.insert(l->loop_var.get());
  });
  return vars;
}

std::string why_not_affine_binding(const StmtPath &block) {
  const Block &b = *block.block();
  // detect_iter_map wants loops that start at 0: a loop [min, min + extent)
  // is seen as v' in [0, extent) with v = v' + min (same variable node).
  std::vector<std::pair<Var, Range>> loops;
  std::vector<std::pair<Var, Expr>> shift;
  for (const For *f : loops_in_scope(block)) {
    loops.emplace_back(f->loop_var, Range::from_extent(f->extent));
    if (!is_const_int(f->min, 0)) shift.emplace_back(f->loop_var, add(f->loop_var, f->min));
  }
  std::vector<Expr> bindings;
  std::vector<std::string> names;
  for (size_t i = 0; i < b.bindings.size(); ++i) {
    bindings.push_back(shift.empty() ? b.bindings[i] : substitute(b.bindings[i], shift));
    names.push_back(b.iter_vars[i].var.name());
  }
  Expr pred = shift.empty() ? b.predicate : substitute(b.predicate, shift);
  // Loops outside the scope are free symbols with known ranges.
  arith::Analyzer ana;
  bool in_scope = true;
  for (auto it = block.ancestors.rbegin(); it != block.ancestors.rend(); ++it) {
    if (it->is<Block>()) in_scope = false;
    if (in_scope) continue;
    if (const For *f = it->as<For>()) ana.bind(f->loop_var, Range{f->min, f->extent});
  }
  return arith::detect_iter_map(bindings, loops, pred, arith::IterMapLevel::Surjective, ana, names).why_not;
}

bool is_affine_binding(const StmtPath &block) {
  return why_not_affine_binding(block).empty();
}

void check_affine_binding(std::string_view primitive, const StmtPath &block) {
  std::string why = why_not_affine_binding(block);
  if (why.empty()) return;
  const Block &b = *block.block();
  std::string bindings;
  for (size_t i = 0; i < b.bindings.size(); ++i)
    bindings += (i ? ", " : "") + b.iter_vars[i].var.name() + " = " + script::print(b.bindings[i]);
  throw NonAffineBindingError(
      std::string(primitive),
      "the bindings of block " + quoted(b.name) + " (" + bindings +
          ") are not an affine map of its loops: " + why,
      "the bindings of block {0} (" + bindings + ") are not an affine map of its loops: " + why,
      {block.stmt});
}

}  // namespace tessera::schedule::detail
