//===- lib/analysis/ThreadBindings.cpp - Nested loops on one thread axis ----===//
#include "tessera/analysis/ThreadBindings.h"

#include <map>
#include <unordered_set>
#include <vector>

#include "tessera/ir/Functor.h"

namespace tessera::analysis {

using namespace tessera::ir;

namespace {

bool starts_with(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

/// Each thread has its own copy of a buffer outside global and shared memory.
bool thread_private(const Buffer &b) {
  return b.scope() != "global" && !starts_with(b.scope(), "shared");
}

/// The variables an expression or statement uses, and the buffers it reads
/// and writes (those it allocates itself aside: they are its own).
struct Uses {
  std::unordered_set<const VarNode *> vars;
  std::unordered_set<const BufferNode *> loads, stores;
  Buffer private_buffer;  ///< the first thread-local buffer it touches

  static Uses of(const Stmt &s) {
    Uses u;
    std::vector<Buffer> touched;
    std::unordered_set<const BufferNode *> own;
    pre_order_visit(s, [&](const Expr &e) { u.expr(e, touched); }, [&](const Stmt &st) {
      if (const auto *store = st.as<Store>()) {
        u.stores.insert(store->buffer.get());
        touched.push_back(store->buffer);
      }
      if (const auto *b = st.as<Block>())
        for (const Buffer &a : b->allocs) own.insert(a.get());
    });
    for (const BufferNode *b : own) u.loads.erase(b), u.stores.erase(b);
    for (const Buffer &b : touched)
      if (!own.count(b.get()) && thread_private(b)) {
        u.private_buffer = b;
        break;
      }
    return u;
  }
  static Uses of(const Expr &e) { return of(Evaluate::make(e)); }

 private:
  void expr(const Expr &e, std::vector<Buffer> &touched) {
    if (const auto *v = e.as<VarNode>()) vars.insert(v);
    if (const auto *l = e.as<Load>()) {
      loads.insert(l->buffer.get());
      touched.push_back(l->buffer);
    }
  }
};

class NestChecker : public IRVisitor {
 public:
  std::optional<std::string> refusal;

  void visit(const Stmt &s) override {
    if (!refusal) IRVisitor::visit(s);
  }

 protected:
  void visit_(const For *op) override {
    const bool thread = op->for_kind == ForKind::ThreadBinding && starts_with(op->thread_tag, "threadIdx.");
    const bool block = op->for_kind == ForKind::ThreadBinding && starts_with(op->thread_tag, "blockIdx.");
    if (!thread && !block) return IRVisitor::visit_(op);
    auto it = bound_.find(op->thread_tag);
    if (it != bound_.end()) return check_nest(op, it->second, block);
    bound_[op->thread_tag] = op;
    (thread ? thread_vars_ : block_vars_).insert(op->loop_var.get());
    IRVisitor::visit_(op);
    bound_.erase(op->thread_tag);
  }
  void visit_(const LetStmt *op) override {
    derive(op->var, Uses::of(op->value));
    IRVisitor::visit_(op);
  }
  void visit_(const Block *op) override {
    for (size_t i = 0; i < op->iter_vars.size() && i < op->bindings.size(); ++i)
      derive(op->iter_vars[i].var, Uses::of(op->bindings[i]));
    IRVisitor::visit_(op);
  }

 private:
  /// A variable computed from one that differs between threads (or blocks),
  /// or from a thread-local buffer, differs too.
  void derive(const Var &v, const Uses &u) {
    auto any_of = [&](const std::unordered_set<const VarNode *> &set) {
      for (const VarNode *x : u.vars)
        if (set.count(x)) return true;
      return false;
    };
    if (any_of(thread_vars_) || u.private_buffer.defined()) thread_vars_.insert(v.get());
    if (any_of(block_vars_)) block_vars_.insert(v.get());
  }

  void check_nest(const For *inner, const For *outer, bool block) {
    Uses u = Uses::of(inner->body);
    std::string why;
    for (const VarNode *v : u.vars)
      if (thread_vars_.count(v) || (block && block_vars_.count(v))) {
        why = "it uses '" + v->name + "', which differs between " + (block ? "blocks" : "threads");
        break;
      }
    if (why.empty() && u.private_buffer.defined())
      why = "it uses '" + u.private_buffer.name() + "', a " + u.private_buffer.scope() +
            " buffer (each thread has its own)";
    if (why.empty())
      for (const BufferNode *b : u.stores)
        if (u.loads.count(b)) {
          why = "it reads '" + b->name + "', which it also writes";
          break;
        }
    if (why.empty()) return;
    const char *unit = block ? "block" : "thread";
    refusal = "loop '" + inner->loop_var.name() + "' is bound to " + inner->thread_tag + " inside loop '" +
              outer->loop_var.name() + "', which is bound to it too: on the GPU they are one " + unit + " ('" +
              inner->loop_var.name() + "' = '" + outer->loop_var.name() + "'), but " + why +
              ", so running it as a loop on the CPU, each " + unit +
              " doing the loop's whole work, would not compute what the kernel does. Bind the inner loop to an axis "
              "of its own, or make it serial";
  }

  std::map<std::string, const For *> bound_;
  std::unordered_set<const VarNode *> thread_vars_, block_vars_;
};

}  // namespace

std::optional<std::string> nested_thread_binding_refusal(const PrimFunc &f) {
  NestChecker c;
  c.visit(f.body());
  return c.refusal;
}

}  // namespace tessera::analysis
