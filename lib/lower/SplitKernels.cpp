//===- lib/lower/SplitKernels.cpp - One kernel per top-level statement ------===//
//
// A kernel cannot allocate global memory and has one launch configuration,
// so a function whose top-level loop nests are bound to different grids, or
// that keeps intermediates in global memory between them (a softmax
// scheduled block by block, the fallback's independent nests), runs as a
// sequence of kernels with host-allocated workspace. Statements outside any
// thread-bound loop (`B[0] = 0` before a scan) get a 1x1 launch.
//
//===----------------------------------------------------------------------===//
#include <unordered_set>

#include "tessera/ir/Functor.h"
#include "tessera/lower/Lower.h"

namespace tessera::lower {

using namespace tessera::ir;

namespace {

bool has_thread_binding(const Stmt &s) {
  bool found = false;
  pre_order_visit(s, nullptr, [&](const Stmt &x) {
    if (const auto *f = x.as<For>(); f && f->for_kind == ForKind::ThreadBinding) found = true;
  });
  return found;
}

/// The buffers `s` loads from or stores to (by identity).
std::unordered_set<const BufferNode *> buffers_used(const Stmt &s) {
  std::unordered_set<const BufferNode *> out;
  pre_order_visit(
      s,
      [&](const Expr &e) {
        if (const auto *l = e.as<Load>()) out.insert(l->buffer.get());
      },
      [&](const Stmt &x) {
        if (const auto *st = x.as<Store>()) out.insert(st->buffer.get());
        if (const auto *b = x.as<Block>()) {
          for (const BufferRegion &r : b->reads) out.insert(r.buffer.get());
          for (const BufferRegion &r : b->writes) out.insert(r.buffer.get());
        }
      });
  return out;
}

/// Wraps `s` in blockIdx.x / threadIdx.x loops of extent 1.
Stmt single_thread(const Stmt &s) {
  Var t("serial_thread"), b("serial_block");
  Stmt inner = For::make(t, i32(0), i32(1), ForKind::ThreadBinding, s, "threadIdx.x");
  return For::make(b, i32(0), i32(1), ForKind::ThreadBinding, inner, "blockIdx.x");
}

}  // namespace

KernelSplit split_kernels(const PrimFunc &f) {
  const Block &root = f.root_block();
  std::vector<Buffer> global, on_chip;
  for (const Buffer &b : root.allocs) (b.scope() == "global" ? global : on_chip).push_back(b);
  std::vector<Stmt> items;
  if (const auto *seq = root.body.as<Seq>()) items = seq->stmts;
  else items = {root.body};

  KernelSplit out;
  if (global.empty()) {
    bool all_bound = true;
    for (const Stmt &s : items) all_bound = all_bound && has_thread_binding(s);
    bool one_launch = all_bound;
    if (one_launch && items.size() > 1) {
      try {
        lower(f);
      } catch (const LowerError &) {
        one_launch = false;  // different grids per nest: split below
      }
    }
    if (one_launch) {
      out.kernels.push_back(f);
      return out;
    }
  }

  // The workspace buffers become parameters of every kernel.
  std::vector<Var> params = f.params();
  std::vector<std::pair<Var, Buffer>> buffer_map = f.buffer_map();
  for (const Buffer &b : global) {
    Var handle(b.name() + "_handle", DataType::handle());
    params.push_back(handle);
    buffer_map.emplace_back(handle, b);
    out.workspace.push_back(b);
  }
  std::vector<int> owner(on_chip.size(), -1);
  for (size_t k = 0; k < items.size(); ++k) {
    std::unordered_set<const BufferNode *> used = buffers_used(items[k]);
    std::vector<Buffer> allocs;
    for (size_t i = 0; i < on_chip.size(); ++i) {
      if (!used.count(on_chip[i].get())) continue;
      if (owner[i] >= 0)
        throw LowerError("function '" + f.name() + "' runs as one kernel per top-level loop nest, but the " +
                         on_chip[i].scope() + " buffer '" + on_chip[i].name() + "' is used by nests " +
                         std::to_string(owner[i]) + " and " + std::to_string(k) +
                         " (such memory does not outlive a kernel; allocate it in global memory)");
      owner[i] = static_cast<int>(k);
      allocs.push_back(on_chip[i]);
    }
    Stmt body = has_thread_binding(items[k]) ? items[k] : single_thread(items[k]);
    Stmt kernel_root = Block::make("root", {}, {}, Expr(), {}, {}, allocs, std::nullopt, body, root.annotations);
    out.kernels.push_back(PrimFunc::make(f.name() + "_" + std::to_string(k), params, buffer_map, kernel_root,
                                         f.attrs()));
  }
  return out;
}

}  // namespace tessera::lower
