//===- lib/lower/CollectAllocations.cpp - Kernel-wide buffer allocations ---===//
//
// A CUDA kernel declares its shared arrays once for the thread block and its
// local arrays once per thread, so every block-level `T.alloc_buffer` becomes
// a kernel-wide allocation. Names stay unique because codegen uniquifies them.
//
//===----------------------------------------------------------------------===//
#include "tessera/ir/Functor.h"
#include "tessera/lower/Passes.h"

namespace tessera::lower {

namespace {

bool is_kernel_scope(const std::string &scope) {
  return scope == "shared" || scope == "shared.dyn" || scope == "local" || scope == "warp";
}

class AllocationCollector : public ir::IRVisitor {
 public:
  std::vector<ir::Buffer> allocs;

 protected:
  void visit_(const ir::Block *op) override {
    for (const ir::Buffer &b : op->allocs) {
      if (!is_kernel_scope(b.scope()))
        throw LowerError("buffer '" + b.name() + "' allocated in block '" + op->name + "' has scope '" + b.scope() +
                         "'; a kernel can allocate only \"shared\", \"local\" or \"warp\" buffers");
      allocs.push_back(b);
    }
    ir::IRVisitor::visit_(op);
  }
};

}  // namespace

std::vector<ir::Buffer> collect_allocations(const ir::Stmt &s) {
  AllocationCollector c;
  c.visit(s);
  return c.allocs;
}

}  // namespace tessera::lower
