//===- BuildThreads.cpp - Thread launches and attributes of lowered TIR ----===//
//
// Lowered TIR launches GPU threads with statements instead of thread-bound
// loops; each becomes the loop tessera's IR has for it:
//   tx = T.env_thread("threadIdx.x")
//   T.launch_thread(tx, 32)                        (over the rest of the body)
//   with T.launch_thread("threadIdx.x", 32) as tx:
//   bx = T.launch_thread("blockIdx.x", 16)
//   T.attr(T.iter_var(tx, T.Range(0, 32), "ThreadIndex", "threadIdx.x"), "thread_extent", 32)
// all read as `for tx in T.thread_binding(32, thread="threadIdx.x")` around
// their scope. Other T.attr keys (pragmas, storage hints) are not modelled:
// their body is kept and a warning says so.
//
//===----------------------------------------------------------------------===//
#include "Builder.h"
#include "tessera/ir/Op.h"

namespace tessera::script::detail {

using namespace tessera::ir;

namespace {

std::function<Stmt(Stmt)> thread_loop(const Var &var, const Expr &extent, const std::string &tag) {
  return [var, extent, tag](Stmt body) {
    return For::make(var, make_int(var.dtype(), 0), extent, ForKind::ThreadBinding, std::move(body), tag);
  };
}

}  // namespace

void Builder::build_env_thread(const std::string &name, const PyExpr &call) {
  reject_kwargs(call, "T.env_thread");
  expect_args(call, 1, 1, "T.env_thread");
  std::string tag = expect_string(*call.args[0], "the thread tag of T.env_thread");
  Var v(name, DataType::int32());
  bind_scalar(name, v);
  env_threads_[v.get()] = tag;
}

std::function<Stmt(Stmt)> Builder::build_launch(const PyExpr &call, const std::string &name) {
  const std::string fn = "T.launch_thread";
  reject_kwargs(call, fn);
  expect_args(call, 2, 2, fn);
  const PyExpr &thread = *call.args[0];
  Var var;
  std::string tag;
  if (thread.kind == PyExprKind::Str) {
    // T.launch_thread("threadIdx.x", 32): a new variable, named by `as`/the assignment.
    tag = thread.name;
    std::string v = name;
    if (v.empty()) {
      v = tag;
      for (char &c : v)
        if (c == '.') c = '_';
    }
    var = Var(v, DataType::int32());
    bind_scalar(v, var);
  } else {
    if (thread.kind != PyExprKind::Name) src_.fail(thread.pos, fn + " takes a T.env_thread variable or a thread tag");
    const Binding *b = lookup(thread.name);
    const auto *v = b && b->kind == Binding::Kind::Scalar ? b->expr.as<VarNode>() : nullptr;
    auto it = v ? env_threads_.find(v) : env_threads_.end();
    if (it == env_threads_.end())
      src_.fail(thread.pos, quote(thread.name) + " is not a thread variable: declare it with T.env_thread(\"threadIdx.x\")");
    var = Var::from(b->expr);
    tag = it->second;
    if (!name.empty()) bind_scalar(name, var);
  }
  Expr extent = build_int(*call.args[1], "the extent of " + fn);
  if (extent.dtype() != var.dtype()) extent = cast(var.dtype(), extent);
  return thread_loop(var, extent, tag);
}

std::function<Stmt(Stmt)> Builder::build_attr(const PyExpr &call) {
  const std::string fn = "T.attr";
  reject_kwargs(call, fn);
  expect_args(call, 3, 3, fn);
  std::string key = expect_string(*call.args[1], "the key of T.attr");
  const PyExpr &node = *call.args[0];
  if (key == "thread_extent" || key == "virtual_thread") {
    // The node is T.iter_var(v, T.Range(0, n), "ThreadIndex", "threadIdx.x") or a T.env_thread variable.
    Var var;
    std::string tag;
    if (node.kind == PyExprKind::Call && dotted_name(*node.base) == "T.iter_var" && node.args.size() == 4 &&
        node.args[0]->kind == PyExprKind::Name) {
      tag = expect_string(*node.args[3], "the thread tag of T.iter_var");
      const Binding *b = lookup(node.args[0]->name);
      if (b && b->kind == Binding::Kind::Scalar && b->expr.is<VarNode>()) {
        var = Var::from(b->expr);
      } else {
        var = Var(node.args[0]->name, DataType::int32());
        bind_scalar(node.args[0]->name, var);
      }
    } else if (node.kind == PyExprKind::Name) {
      const Binding *b = lookup(node.name);
      if (!b) fail_undefined(node.pos, node.name);
      const auto *v = b && b->kind == Binding::Kind::Scalar ? b->expr.as<VarNode>() : nullptr;
      auto it = v ? env_threads_.find(v) : env_threads_.end();
      if (it == env_threads_.end())
        src_.fail(node.pos, quote(node.name) + " is not a thread variable (T.env_thread or T.iter_var)");
      var = Var::from(b->expr);
      tag = it->second;
    } else {
      src_.fail(node.pos, fn + " \"" + key + "\" takes a thread: T.iter_var(tx, T.Range(0, n), \"ThreadIndex\", "
                                                 "\"threadIdx.x\") or a T.env_thread variable");
    }
    Expr extent = build_int(*call.args[2], "the thread extent");
    if (extent.dtype() != var.dtype()) extent = cast(var.dtype(), extent);
    return thread_loop(var, extent, tag);
  }
  warn(call.pos, "T.attr " + quote(key) + " is not modelled by tessera: its body is kept without it");
  return [](Stmt body) { return body; };
}

}  // namespace tessera::script::detail
