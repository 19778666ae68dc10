//===- Stmt.cpp - Statement node factories ---------------------------------===//
#include "tessera/ir/Stmt.h"

#include "tessera/support/Error.h"

namespace tessera::ir {

const char *for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unroll";
    case ForKind::ThreadBinding: return "thread_binding";
  }
  return "?";
}

char iter_kind_char(IterKind k) {
  switch (k) {
    case IterKind::Spatial: return 'S';
    case IterKind::Reduce: return 'R';
    case IterKind::Opaque: return 'O';
  }
  return '?';
}

Stmt For::make(Var loop_var, Expr min, Expr extent, ForKind kind, Stmt body, std::string thread_tag,
               Annotations annotations) {
  TESSERA_ICHECK(loop_var.defined() && min.defined() && extent.defined() && body.defined())
      << "For with an undefined part";
  TESSERA_ICHECK(loop_var.dtype().is_integer()) << "loop variable '" << loop_var.name() << "' must be an integer";
  TESSERA_ICHECK(min.dtype() == loop_var.dtype() && extent.dtype() == loop_var.dtype())
      << "loop '" << loop_var.name() << "': min/extent types (" << min.dtype().str() << ", "
      << extent.dtype().str() << ") differ from the loop variable's " << loop_var.dtype().str();
  TESSERA_ICHECK((kind == ForKind::ThreadBinding) == !thread_tag.empty())
      << "loop '" << loop_var.name() << "': a thread tag goes with, and only with, a thread binding";
  auto n = std::make_shared<For>();
  n->loop_var = std::move(loop_var);
  n->min = std::move(min);
  n->extent = std::move(extent);
  n->for_kind = kind;
  n->thread_tag = std::move(thread_tag);
  n->annotations = std::move(annotations);
  n->body = std::move(body);
  return Stmt(std::move(n));
}

Stmt For::with_body(Stmt b) const {
  TESSERA_ICHECK(b.defined()) << "For::with_body(undefined)";
  if (b.same_as(body)) return Stmt(std::static_pointer_cast<const StmtNode>(shared_from_this()));
  return make(loop_var, min, extent, for_kind, std::move(b), thread_tag, annotations);
}

Stmt Block::make(std::string name, std::vector<IterVar> iter_vars, std::vector<Expr> bindings,
                 Expr predicate, std::vector<BufferRegion> reads, std::vector<BufferRegion> writes,
                 std::vector<Buffer> allocs, std::optional<Stmt> init, Stmt body,
                 Annotations annotations) {
  TESSERA_ICHECK(body.defined()) << "block '" << name << "' without a body";
  TESSERA_ICHECK(iter_vars.size() == bindings.size())
      << "block '" << name << "' has " << iter_vars.size() << " iter vars but " << bindings.size()
      << " bindings";
  for (size_t i = 0; i < iter_vars.size(); ++i) {
    TESSERA_ICHECK(iter_vars[i].var.defined() && bindings[i].defined())
        << "block '" << name << "': undefined iter var or binding " << i;
    TESSERA_ICHECK(iter_vars[i].var.dtype() == bindings[i].dtype())
        << "block '" << name << "': iter var '" << iter_vars[i].var.name() << "' is "
        << iter_vars[i].var.dtype().str() << " but its binding is " << bindings[i].dtype().str();
  }
  if (!predicate.defined()) predicate = const_true();
  TESSERA_ICHECK(predicate.dtype().is_bool()) << "block '" << name << "': predicate must be bool";
  auto n = std::make_shared<Block>();
  n->name = std::move(name);
  n->iter_vars = std::move(iter_vars);
  n->bindings = std::move(bindings);
  n->predicate = std::move(predicate);
  n->reads = std::move(reads);
  n->writes = std::move(writes);
  n->allocs = std::move(allocs);
  n->init = std::move(init);
  n->body = std::move(body);
  n->annotations = std::move(annotations);
  return Stmt(std::move(n));
}

Stmt Block::with_body(Stmt b) const {
  if (b.same_as(body)) return Stmt(std::static_pointer_cast<const StmtNode>(shared_from_this()));
  return make(name, iter_vars, bindings, predicate, reads, writes, allocs, init, std::move(b), annotations);
}

Stmt Store::make(Buffer buffer, Expr value, std::vector<Expr> indices) {
  TESSERA_ICHECK(buffer.defined() && value.defined()) << "Store with an undefined part";
  TESSERA_ICHECK(value.dtype() == buffer.dtype())
      << "store of " << value.dtype().str() << " into '" << buffer.name() << "' of type " << buffer.dtype().str();
  TESSERA_ICHECK(static_cast<int>(indices.size()) == buffer.ndim())
      << "store to '" << buffer.name() << "' has " << indices.size() << " indices but the buffer has "
      << buffer.ndim() << " dimensions";
  for (const Expr &i : indices)
    TESSERA_ICHECK(i.defined() && i.dtype().is_integer()) << "store to '" << buffer.name() << "': indices must be integers";
  return Stmt(std::make_shared<Store>(std::move(buffer), std::move(value), std::move(indices)));
}

Stmt Seq::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (Stmt &s : stmts) {
    TESSERA_ICHECK(s.defined()) << "Seq with an undefined statement";
    if (const auto *seq = s.as<Seq>())
      flat.insert(flat.end(), seq->stmts.begin(), seq->stmts.end());
    else
      flat.push_back(std::move(s));
  }
  TESSERA_ICHECK(!flat.empty()) << "empty Seq";
  if (flat.size() == 1) return flat[0];
  return Stmt(std::make_shared<Seq>(std::move(flat)));
}

Stmt IfThenElse::make(Expr cond, Stmt then_case, std::optional<Stmt> else_case) {
  TESSERA_ICHECK(cond.defined() && then_case.defined()) << "IfThenElse with an undefined part";
  TESSERA_ICHECK(cond.dtype().is_bool()) << "if condition must be bool, got " << cond.dtype().str();
  return Stmt(std::make_shared<IfThenElse>(std::move(cond), std::move(then_case), std::move(else_case)));
}

Stmt LetStmt::make(Var var, Expr value, Stmt body) {
  TESSERA_ICHECK(var.defined() && value.defined() && body.defined()) << "LetStmt with an undefined part";
  TESSERA_ICHECK(var.dtype() == value.dtype())
      << "let '" << var.name() << "' has type " << var.dtype().str() << " but its value is " << value.dtype().str();
  return Stmt(std::make_shared<LetStmt>(std::move(var), std::move(value), std::move(body)));
}

Stmt Evaluate::make(Expr value) {
  TESSERA_ICHECK(value.defined()) << "Evaluate of an undefined value";
  return Stmt(std::make_shared<Evaluate>(std::move(value)));
}

}  // namespace tessera::ir
