//===- lib/lower/GuardSingleThreadStores.cpp - One writer outside thread loops ---===//
//
// Code outside a threadIdx-bound loop of an axis the kernel uses runs once
// (per iteration of the thread loops around it) in the serial program but in
// every thread along that axis on the GPU. For registers ("local") that is
// what the program means: each thread keeps its copy. A store to shared or
// global memory, though, would be made by all those threads at once, a race
// even when they agree on the value (TVM emits it; we do not). Such a store
// gets one writer, the thread at index 0 of every axis the kernel uses that
// no loop around it binds, written as thread-bound loops around a guard so
// that later passes see an ordinary thread nest:
//
//   rsqrt_shared[0] = T.rsqrt(s[0])        for tx in T.thread_binding(128, thread="threadIdx.x"):
//                                     ->      if tx == 0:
//                                               rsqrt_shared[0] = T.rsqrt(s[0])
//
// insert_barriers then puts the barrier between it and the threads that read
// it.
//
//===----------------------------------------------------------------------===//
#include <array>

#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Passes.h"
#include "ThreadLoops.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;
using detail::thread_axis;

class SingleThreadStoreGuard : public IRMutator {
 public:
  explicit SingleThreadStoreGuard(const Stmt &body) {
    pre_order_visit(body, nullptr, [&](const Stmt &s) {
      const auto *f = s.as<For>();
      int a = f ? thread_axis(f) : -1;
      if (a >= 0 && !axes_[a] && !is_const_int(f->extent, 1)) axes_[a] = f;
    });
  }

 protected:
  Stmt visit_(const For *op, const Stmt &self) override {
    const int a = thread_axis(op);
    if (a >= 0) ++around_[a];  // under it, each thread of the axis stores its own part
    Stmt out = IRMutator::visit_(op, self);
    if (a >= 0) --around_[a];
    return out;
  }

  Stmt visit_(const Store *op, const Stmt &self) override {
    if (op->buffer.scope().rfind("local", 0) == 0) return self;
    Expr first = const_true();
    std::vector<Var> vars;
    std::array<const For *, 3> missing{};
    for (int a = 0; a < 3; ++a)
      if (around_[a] == 0) missing[a] = axes_[a];
    for (const For *f : missing) {
      if (!f) continue;
      Var v(f->loop_var.name(), f->loop_var.dtype());
      vars.push_back(v);
      first = is_const_int(first, 1) ? eq(v, f->min) : logical_and(first, eq(v, f->min));
    }
    if (vars.empty()) return self;
    Stmt out = IfThenElse::make(first, self);
    size_t i = vars.size();
    for (int a = 2; a >= 0; --a) {
      if (!missing[a]) continue;
      const For *f = missing[a];
      out = For::make(vars[--i], f->min, f->extent, ForKind::ThreadBinding, out, f->thread_tag);
    }
    return out;
  }

 private:
  /// The first loop bound to threadIdx.x/y/z (extent other than 1).
  std::array<const For *, 3> axes_{};
  /// How many loops around the statement being visited bind each axis.
  std::array<int, 3> around_{};
};

}  // namespace

Stmt guard_single_thread_stores(const Stmt &s) { return SingleThreadStoreGuard(s).mutate(s); }

}  // namespace tessera::lower
