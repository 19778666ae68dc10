//===- analysis/AffineBinding.cpp - Are a block's bindings affine? ---------===//
//
// A structural check standing in for full iter-map detection: a binding is
// quasi-affine in the loop variables when it is built from loop variables,
// loop-free terms (constants, symbolic shape variables), +, -, * where at
// most one side mentions a loop, and floordiv/floormod by a loop-free divisor.
// This accepts everything split, fuse and reorder produce from affine input.
// It does not prove bijectivity (arith::detect_iter_map will).
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

#include "tessera/ir/Functor.h"
#include "tessera/script/Printer.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

/// nullopt: not affine; else whether `e` mentions a loop variable.
std::optional<bool> affine(const Expr &e, const std::unordered_set<const VarNode *> &loops) {
  switch (e.kind()) {
    case NodeKind::IntImm: return false;
    case NodeKind::Var: return loops.count(static_cast<const VarNode *>(e.get())) > 0;
    case NodeKind::Cast: return affine(e.as<Cast>()->value, loops);
    case NodeKind::Binary: {
      const Binary *b = e.as<Binary>();
      auto x = affine(b->a, loops), y = affine(b->b, loops);
      if (!x || !y) return std::nullopt;
      switch (b->op) {
        case BinaryOp::Add:
        case BinaryOp::Sub: return *x || *y;
        case BinaryOp::Mul:
          if (*x && *y) return std::nullopt;
          return *x || *y;
        case BinaryOp::FloorDiv:
        case BinaryOp::FloorMod:
          if (*y) return std::nullopt;
          return *x;
        default: break;
      }
      if (!*x && !*y) return false;
      return std::nullopt;
    }
    default: break;
  }
  // Anything else is affine only when it mentions no loop (a loop-free term).
  bool has_loop = false;
  pre_order_visit(Evaluate::make(e), [&](const Expr &x) {
    if (const auto *v = x.as<VarNode>()) has_loop |= loops.count(v) > 0;
  }, nullptr);
  if (has_loop) return std::nullopt;
  return false;
}

}  // namespace

std::unordered_set<const VarNode *> loop_vars_of(const PrimFunc &f) {
  std::unordered_set<const VarNode *> vars;
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const For *l = s.as<For>()) vars.insert(l->loop_var.get());
  });
  return vars;
}

bool is_affine_binding(const Block &b, const std::unordered_set<const VarNode *> &loop_vars) {
  for (const Expr &e : b.bindings)
    if (!affine(e, loop_vars)) return false;
  return true;
}

void check_affine_binding(std::string_view primitive, const Stmt &block,
                          const std::unordered_set<const VarNode *> &loop_vars) {
  const Block &b = *block.as<Block>();
  for (size_t i = 0; i < b.bindings.size(); ++i) {
    if (affine(b.bindings[i], loop_vars)) continue;
    std::string what = "the binding of " + quoted(b.iter_vars[i].var.name()) + " in block " + quoted(b.name) +
                       " is not affine in the loops: " + script::print(b.bindings[i]);
    throw NonAffineBindingError(std::string(primitive), what,
                                "block {0}: the binding of " + quoted(b.iter_vars[i].var.name()) +
                                    " is not affine in the loops: " + script::print(b.bindings[i]),
                                {block});
  }
}

}  // namespace tessera::schedule::detail
