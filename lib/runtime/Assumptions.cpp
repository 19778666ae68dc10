//===- lib/runtime/Assumptions.cpp - Random inputs that keep T.assume true --===//
//
// A program may state what it assumes of its inputs, and TVM's programs do:
//
//   for i in T.serial(16):
//       T.evaluate(T.assume(i < 14 or A[i] == 0))
//
// Random inputs break such an assumption, and the interpreter stops there
// ("T.assume does not hold"), so the program could never be run or
// verified. satisfy_assumptions makes the inputs keep it: for an assumption
// with a clause `B[indices] == value` (B a parameter buffer; the indices and
// the value free of loads), the loops, conditions and lets around it are
// rebuilt around
//
//   if not (the other clauses): B[indices] = value
//
// and that program runs first, in the interpreter, on the inputs; an
// assumption `n == value` at the top of the function sets the scalar
// parameter n. Others are left as they are (the run reports them).
//
//===----------------------------------------------------------------------===//
#include <functional>

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/runtime/Interpreter.h"

namespace tessera::runtime {

namespace {

using namespace ir;

/// The clauses of `e` joined by `or`.
void disjuncts(const Expr &e, std::vector<Expr> &out) {
  if (const auto *b = e.as<Binary>(); b && b->op == BinaryOp::Or) {
    disjuncts(b->a, out);
    disjuncts(b->b, out);
    return;
  }
  out.push_back(e);
}

bool has_load(const Expr &e) {
  bool found = false;
  pre_order_visit(Evaluate::make(e), [&](const Expr &x) { found = found || x.as<Load>() || x.as<BufferPtr>(); },
                  nullptr);
  return found;
}

/// Collects the assumptions with the statements around them that
/// a rebuilt program needs (loops, conditions, lets), outermost first.
class AssumptionFinder {
 public:
  struct Found {
    Expr cond;
    std::vector<Stmt> around;  ///< For, IfThenElse or LetStmt nodes
  };
  std::vector<Found> found;

  void visit(const Stmt &s) {
    if (const auto *e = s.as<Evaluate>()) {
      if (const auto *c = e->value.as<Call>(); c && c->op == Intrinsic::Assume) found.push_back({c->args[0], path_});
    } else if (const auto *seq = s.as<Seq>()) {
      for (const Stmt &x : seq->stmts) visit(x);
    } else if (const auto *f = s.as<For>()) {
      nested(s, f->body);
    } else if (const auto *i = s.as<IfThenElse>()) {
      nested(s, i->then_case);  // the else branch: not under the condition, left alone
    } else if (const auto *l = s.as<LetStmt>()) {
      nested(s, l->body);
    } else if (const auto *b = s.as<Block>()) {
      // Into blocks without iter vars (the root) only: block iter vars would
      // need the block rebuilt too.
      if (b->iter_vars.empty() && !b->init) visit(b->body);
    }
  }

 private:
  void nested(const Stmt &wrapper, const Stmt &body) {
    path_.push_back(wrapper);
    visit(body);
    path_.pop_back();
  }
  std::vector<Stmt> path_;
};

/// `body` inside the statements `around` (outermost first).
Stmt wrap(Stmt body, const std::vector<Stmt> &around) {
  for (auto it = around.rbegin(); it != around.rend(); ++it) {
    if (const auto *f = it->as<For>())
      body = For::make(f->loop_var, f->min, f->extent, ForKind::Serial, body);
    else if (const auto *i = it->as<IfThenElse>())
      body = IfThenElse::make(i->cond, body);
    else if (const auto *l = it->as<LetStmt>())
      body = LetStmt::make(l->var, l->value, body);
  }
  return body;
}

}  // namespace

void satisfy_assumptions(const ir::PrimFunc &f, std::vector<NDArray> &args) {
  if (args.size() != f.params().size()) return;
  AssumptionFinder finder;
  finder.visit(f.body());
  for (const AssumptionFinder::Found &a : finder.found) {
    std::vector<Expr> clauses;
    disjuncts(a.cond, clauses);
    bool kept = false;
    for (size_t c = 0; c < clauses.size() && !kept; ++c) {
      const auto *eq = clauses[c].as<Binary>();
      if (!eq || eq->op != BinaryOp::EQ) continue;
      std::vector<Expr> others;
      for (size_t o = 0; o < clauses.size(); ++o)
        if (o != c) others.push_back(clauses[o]);
      // `n == value`, at the top: the scalar parameter itself.
      for (auto [lhs, rhs] : {std::pair{eq->a, eq->b}, {eq->b, eq->a}}) {
        const auto *v = lhs.as<VarNode>();
        auto value = as_const_int(rhs);
        if (!v || !value || !a.around.empty() || !others.empty()) continue;
        for (size_t p = 0; p < f.params().size(); ++p)
          if (f.params()[p].get() == v && !f.buffer_of(f.params()[p]).defined() && v->dtype.is_integer() &&
              args[p].shape().empty())
            args[p].set_int(0, *value), kept = true;
      }
      // `B[indices] == value`: store it where the other clauses fail.
      for (auto [lhs, rhs] : {std::pair{eq->a, eq->b}, {eq->b, eq->a}}) {
        const auto *load = lhs.as<Load>();
        if (!load || has_load(rhs)) continue;
        bool is_param = false;
        for (const auto &[var, buffer] : f.buffer_map()) is_param = is_param || buffer.same_as(load->buffer);
        bool plain_indices = true;
        for (const Expr &i : load->indices) plain_indices = plain_indices && !has_load(i);
        if (!is_param || !plain_indices) continue;
        Stmt set = Store::make(load->buffer, cast(load->buffer.dtype(), rhs), load->indices);
        Expr any_other;
        for (const Expr &o : others) any_other = any_other.defined() ? logical_or(any_other, o) : o;
        if (any_other.defined()) set = IfThenElse::make(logical_not(any_other), set);
        std::vector<std::pair<Var, Buffer>> buffer_map = f.buffer_map();
        PrimFunc g = PrimFunc::make(f.name() + "_assumptions", f.params(), buffer_map, wrap(set, a.around));
        try {
          interpret(g, args);
        } catch (const UserError &) {
          // Not an assumption this can keep (its loops read what it sets,
          // say): the run of the function itself says where it fails.
        }
        kept = true;
        break;
      }
    }
  }
}

}  // namespace tessera::runtime
