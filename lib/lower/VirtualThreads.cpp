//===- lib/lower/VirtualThreads.cpp - Virtual threads as unrolled loops -----===//
//
//   for ax in T.thread_binding(4, thread="vthread.x"):     for ax in T.unroll(4):
//     C_local[ax * 4 + i] = ...                        ->     C_local[ax * 4 + i] = ...
//
// A virtual thread is a software thread TVM interleaves into a real one; the
// code under it has no barrier (TVM refuses one there too), so running the
// virtual threads one after the other in each real thread is the same program.
//
//===----------------------------------------------------------------------===//
#include "tessera/ir/Functor.h"
#include "tessera/lower/Passes.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

bool is_virtual_thread(const std::string &tag) { return tag == "vthread" || tag.rfind("vthread.", 0) == 0; }

class VirtualThreadLowerer : public IRMutator {
 protected:
  Stmt visit_(const For *op, const Stmt &self) override {
    Stmt s = IRMutator::visit_(op, self);
    const auto *f = s.as<For>();
    if (!f || f->for_kind != ForKind::ThreadBinding || !is_virtual_thread(f->thread_tag)) return s;
    return For::make(f->loop_var, f->min, f->extent, ForKind::Unrolled, f->body, "", f->annotations);
  }
};

}  // namespace

Stmt lower_virtual_threads(const Stmt &s) { return VirtualThreadLowerer().mutate(s); }

}  // namespace tessera::lower
