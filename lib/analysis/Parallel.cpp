//===- lib/analysis/Parallel.cpp - May a loop's iterations run at once? -----===//
#include "tessera/analysis/Parallel.h"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"

namespace tessera::analysis {

using namespace tessera::ir;

namespace {

struct Access {
  std::vector<Expr> indices;  // bindings substituted
  bool is_write;
};

/// Collects every access under the loop with block iter vars replaced by
/// their bindings, the variables bound under the loop, and the buffers
/// allocated under it.
class Collector {
 public:
  std::map<const BufferNode *, std::pair<Buffer, std::vector<Access>>> accesses;
  std::unordered_set<const VarNode *> inner_vars;
  std::unordered_set<const BufferNode *> private_buffers;

  void stmt(const Stmt &s) {
    if (const auto *f = s.as<For>()) {
      inner_vars.insert(f->loop_var.get());
      expr(f->min);
      expr(f->extent);
      return stmt(f->body);
    }
    if (const auto *b = s.as<Block>()) {
      for (size_t i = 0; i < b->iter_vars.size(); ++i) {
        Expr bound = substitute(b->bindings[i], subst_);
        expr(b->bindings[i]);
        subst_.emplace_back(b->iter_vars[i].var, bound);
      }
      for (const Buffer &a : b->allocs) private_buffers.insert(a.get());
      expr(b->predicate);
      if (b->init) stmt(*b->init);
      return stmt(b->body);
    }
    if (const auto *st = s.as<Store>()) {
      expr(st->value);
      for (const Expr &i : st->indices) expr(i);
      return record(st->buffer, st->indices, true);
    }
    if (const auto *seq = s.as<Seq>()) {
      for (const Stmt &x : seq->stmts) stmt(x);
      return;
    }
    if (const auto *ite = s.as<IfThenElse>()) {
      expr(ite->cond);
      stmt(ite->then_case);
      if (ite->else_case) stmt(*ite->else_case);
      return;
    }
    if (const auto *let = s.as<LetStmt>()) {
      inner_vars.insert(let->var.get());
      expr(let->value);
      return stmt(let->body);
    }
    if (const auto *ev = s.as<Evaluate>()) return expr(ev->value);
  }

 private:
  void expr(const Expr &e) {
    struct Loads : IRVisitor {
      Collector *self;
      void visit_(const Load *op) override {
        self->record(op->buffer, op->indices, false);
        IRVisitor::visit_(op);
      }
      void visit_(const Let *op) override {
        self->inner_vars.insert(op->var.get());
        IRVisitor::visit_(op);
      }
    } loads;
    loads.self = this;
    loads.visit(e);
  }
  void record(const Buffer &b, const std::vector<Expr> &indices, bool is_write) {
    std::vector<Expr> idx;
    for (const Expr &i : indices) idx.push_back(substitute(i, subst_));
    auto &entry = accesses[b.get()];
    entry.first = b;
    entry.second.push_back({std::move(idx), is_write});
  }

  std::vector<std::pair<Var, Expr>> subst_;
};

bool uses_any(const Expr &e, const std::unordered_set<const VarNode *> &vars) {
  struct Finder : IRVisitor {
    const std::unordered_set<const VarNode *> *vars;
    bool found = false;
    void visit_(const VarNode *op) override { found = found || vars->count(op); }
  } f;
  f.vars = &vars;
  f.visit(e);
  return f.found;
}

/// e(v + 1) - e(v) simplifies to a non-zero constant.
bool advances_with(const Expr &e, const Var &v) {
  Expr next = substitute(e, {{v, v + make_int(v.dtype(), 1)}});
  auto step = as_const_int(arith::simplify(next - e));
  return step && *step != 0;
}

}  // namespace

std::string why_not_parallel(const Stmt &loop) {
  const auto *f = loop.as<For>();
  TESSERA_ICHECK(f) << "why_not_parallel expects a For";
  Collector c;
  c.stmt(f->body);
  const Var &v = f->loop_var;
  for (const auto &[node, entry] : c.accesses) {
    const auto &[buffer, accs] = entry;
    bool written = std::any_of(accs.begin(), accs.end(), [](const Access &a) { return a.is_write; });
    if (!written || c.private_buffers.count(node)) continue;
    bool separated = false;
    for (int d = 0; d < buffer.ndim() && !separated; ++d) {
      const Expr &e = accs[0].indices[d];
      if (uses_any(e, c.inner_vars) || !advances_with(e, v)) continue;
      separated = std::all_of(accs.begin(), accs.end(),
                              [&](const Access &a) { return structural_equal(a.indices[d], e); });
    }
    if (separated) continue;
    std::string list;
    for (const Access &a : accs) {
      std::string idx;
      for (const Expr &i : a.indices) idx += (idx.empty() ? "" : ", ") + script::print(i);
      list += std::string(list.empty() ? "" : ", ") + (a.is_write ? "writes " : "reads ") + buffer.name() + "[" +
              idx + "]";
    }
    return "loop '" + v.name() + "' is not parallel: its iterations may share elements of '" + buffer.name() +
           "' (" + list + ")";
  }
  return "";
}


namespace {

void collect_outermost_loops(const Stmt &s, std::vector<Stmt> &out) {
  if (!s.defined()) return;
  if (s.as<For>()) return out.push_back(s);
  if (const auto *b = s.as<Block>()) return collect_outermost_loops(b->body, out);
  if (const auto *seq = s.as<Seq>()) {
    for (const Stmt &x : seq->stmts) collect_outermost_loops(x, out);
    return;
  }
  if (const auto *ite = s.as<IfThenElse>()) {
    collect_outermost_loops(ite->then_case, out);
    if (ite->else_case) collect_outermost_loops(*ite->else_case, out);
    return;
  }
  if (const auto *let = s.as<LetStmt>()) return collect_outermost_loops(let->body, out);
}

/// Scopes whose memory each GPU block ("shared", "shared.dyn") or thread
/// ("local", "warp", "wmma.*" fragments) has its own of. Every other scope
/// ("global", and TVM's "global.texture", "global.vtcm", ...) is one memory
/// all blocks see.
bool owned_by_a_block_or_thread(const std::string &scope) {
  for (const char *prefix : {"shared", "local", "warp", "wmma", "m16n8k8"})
    if (scope.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

std::vector<CpuParallelLoop> cpu_parallel_loops(const PrimFunc &f) {
  std::vector<Stmt> outermost;
  collect_outermost_loops(f.body(), outermost);
  // Only what the function allocates is copied: a parameter (whatever scope
  // TVM printed on it, "warp" in its tensor-intrinsic descriptions) is the
  // caller's memory.
  std::unordered_set<const BufferNode *> allocated;
  pre_order_visit(f.body(), nullptr, [&](const Stmt &s) {
    if (const auto *b = s.as<Block>())
      for (const Buffer &a : b->allocs) allocated.insert(a.get());
  });
  std::vector<CpuParallelLoop> out;
  for (const Stmt &s : outermost) {
    const For *loop = s.as<For>();
    // A parallel loop is the CPU's: independent by the program's word, its
    // buffers shared as written.
    if (loop->for_kind == ForKind::Parallel) {
      out.push_back({loop, {}});
      continue;
    }
    // Other loops but blockIdx's must pass the dependence test (threadIdx
    // never: the threads of a block synchronise).
    const bool gpu_blocks = loop->for_kind == ForKind::ThreadBinding && loop->thread_tag.rfind("blockIdx.", 0) == 0;
    if (!gpu_blocks) {
      if (loop->for_kind != ForKind::ThreadBinding && why_not_parallel(s).empty()) out.push_back({loop, {}});
      continue;
    }
    // GPU blocks, each with its own shared and local memory.
    CpuParallelLoop p{loop, {}};
    Collector c;
    c.stmt(loop->body);
    for (const auto &[node, entry] : c.accesses) {
      const auto &[buffer, accs] = entry;
      bool written = std::any_of(accs.begin(), accs.end(), [](const Access &a) { return a.is_write; });
      if (written && !c.private_buffers.count(node) && allocated.count(node) &&
          owned_by_a_block_or_thread(buffer.scope()))
        p.private_copies.push_back(buffer);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tessera::analysis
