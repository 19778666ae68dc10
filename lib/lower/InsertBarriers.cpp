//===- lib/lower/InsertBarriers.cpp - __syncthreads() between thread nests --===//
//
// Shared memory is how the threads of a block talk: one thread-bound loop
// nest writes a tile, a later one reads it. Between the two every thread must
// wait for the others (RAW); a nest that overwrites a tile others may still be
// reading must wait too (WAR), which inside a serial loop (the k loop of a
// tiled matmul) also happens across iterations:
//
//   for k_0 in range(64):            for k_0 in range(64):
//     <threads write A_shared>         <threads write A_shared>
//     <threads read A_shared>    ->    T.evaluate(T.syncthreads())
//                                      <threads read A_shared>
//                                      T.evaluate(T.syncthreads())
//
// Thread-bound loops are transparent (after lowering every thread runs their
// body), so a barrier may land inside one, as in TVM; but never under an `if`
// or in a loop whose condition or extent depends on threadIdx (divergent).
// For each statement we track which shared buffers it touches before its
// first barrier (head) and after its last one (tail); a barrier goes in front
// of a statement whose head reads what is pending-written or writes what is
// pending-read since the last barrier, and nowhere else. The check is per
// buffer, not per element: conservative, like TVM's storage sync. Barriers
// already present (those of cross-thread reductions) count as such.
//
//===----------------------------------------------------------------------===//
#include <set>

#include "tessera/ir/Functor.h"
#include "tessera/lower/Passes.h"
#include "VarUses.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

struct Access {
  std::set<const BufferNode *> reads, writes;
  void add(const Access &o) {
    reads.insert(o.reads.begin(), o.reads.end());
    writes.insert(o.writes.begin(), o.writes.end());
  }
  /// True when running `next` after this, without a barrier, may race
  /// (read after write, write after read).
  bool conflicts_with(const Access &next) const {
    for (const BufferNode *b : next.reads)
      if (writes.count(b)) return true;
    for (const BufferNode *b : next.writes)
      if (reads.count(b)) return true;
    return false;
  }
};

bool is_shared(const Buffer &b) { return b.scope() == "shared" || b.scope() == "shared.dyn"; }

class SharedAccessCollector : public IRVisitor {
 public:
  Access acc;

 protected:
  void visit_(const Load *op) override {
    if (is_shared(op->buffer)) acc.reads.insert(op->buffer.get());
    IRVisitor::visit_(op);
  }
  void visit_(const Store *op) override {
    if (is_shared(op->buffer)) acc.writes.insert(op->buffer.get());
    IRVisitor::visit_(op);
  }
};

Access accesses_of(const Stmt &s) {
  SharedAccessCollector c;
  c.visit(s);
  return c.acc;
}

Stmt barrier() { return Evaluate::make(Call::make(DataType::int32(), Intrinsic::SyncThreads, {})); }

/// A barrier already in the program (lower_cross_thread_reduction places its own).
bool is_barrier(const Stmt &s) {
  const auto *e = s.as<Evaluate>();
  const auto *c = e ? e->value.as<Call>() : nullptr;
  return c && c->op == Intrinsic::SyncThreads;
}

bool is_thread_loop(const For *f) {
  return f->for_kind == ForKind::ThreadBinding && f->thread_tag.rfind("threadIdx", 0) == 0;
}

/// A statement after barrier insertion, with its shared accesses before its
/// first barrier (head) and after its last one (tail).
struct Synced {
  Stmt stmt;
  Access head, tail;
  bool has_barrier = false;
};

class BarrierInserter {
 public:
  Synced visit(const Stmt &s) {
    if (is_barrier(s)) return {s, {}, {}, true};
    if (const auto *seq = s.as<Seq>()) return visit_list(seq->stmts, /*loop_carried=*/false);
    if (const auto *f = s.as<For>(); f && !depends_on_thread(f->min) && !depends_on_thread(f->extent)) {
      bool carried = f->for_kind != ForKind::ThreadBinding && !is_const_int(f->extent, 1);
      std::vector<Stmt> body = {f->body};
      if (const auto *seq = f->body.as<Seq>()) body = seq->stmts;
      if (is_thread_loop(f)) thread_vars_.insert(f->loop_var.get());
      Synced r = visit_list(body, carried);
      thread_vars_.erase(f->loop_var.get());
      if (!r.stmt.same_as(f->body))
        r.stmt = For::make(f->loop_var, f->min, f->extent, f->for_kind, r.stmt, f->thread_tag, f->annotations);
      else
        r.stmt = s;
      return r;
    }
    if (const auto *i = s.as<IfThenElse>(); i && !depends_on_thread(i->cond)) {
      Synced t = visit(i->then_case);
      Synced e = i->else_case ? visit(*i->else_case) : Synced{};
      Synced r{IfThenElse::make(i->cond, t.stmt, i->else_case ? std::optional<Stmt>(e.stmt) : std::nullopt), t.head,
               t.tail, t.has_barrier || e.has_barrier};
      r.head.add(e.head);
      r.tail.add(e.tail);
      return r;
    }
    if (const auto *l = s.as<LetStmt>()) {
      // A value computed from threadIdx makes conditions on it divergent too.
      if (depends_on_thread(l->value)) thread_vars_.insert(l->var.get());
      Synced r = visit(l->body);
      r.stmt = LetStmt::make(l->var, l->value, r.stmt);
      return r;
    }
    Access a = accesses_of(s);
    return {s, a, a, false};
  }

 private:
  bool depends_on_thread(const Expr &e) const { return detail::depends_on(e, thread_vars_); }

  Synced visit_list(const std::vector<Stmt> &stmts, bool loop_carried) {
    Synced r;
    std::vector<Stmt> out;
    Access pending;
    for (const Stmt &s : stmts) {
      Synced x = visit(s);
      if (pending.conflicts_with(x.head)) {
        out.push_back(barrier());
        pending = {};
        r.has_barrier = true;
      }
      if (!r.has_barrier) r.head.add(x.head);
      if (x.has_barrier) {
        // Everything before x's first barrier is covered by it.
        r.has_barrier = true;
        pending = x.tail;
      } else {
        pending.add(x.tail);
      }
      out.push_back(x.stmt);
    }
    // The next iteration's head runs after this iteration's tail.
    if (loop_carried && pending.conflicts_with(r.head)) {
      out.push_back(barrier());
      pending = {};
      r.has_barrier = true;
    }
    r.tail = pending;
    r.stmt = Seq::make(out);
    return r;
  }

  /// threadIdx-bound loop variables in scope; blockIdx is uniform.
  std::set<const VarNode *> thread_vars_;
};

}  // namespace

Stmt insert_barriers(const Stmt &s) {
  Synced r = BarrierInserter().visit(s);
  return r.stmt;
}

}  // namespace tessera::lower
