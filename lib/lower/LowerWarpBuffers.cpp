//===- lib/lower/LowerWarpBuffers.cpp - `warp` buffers become registers ----===//
//
// A buffer in scope "warp" holds the fragments of the tensor-core
// instructions: its leading dimensions are numbered by thread-bound loop
// variables (the warp within the block, the lane within the warp) and its
// last dimension is what one lane holds. The interpreter sees the whole
// array, so that a lane can read another lane's fragment as mma.sync does;
// on the GPU each thread keeps only its own row, in registers:
//
//   A_frag = T.alloc_buffer((4, 32, 16), "float16", scope="warp")
//   T.ldmatrix(0, 4, A_frag[ty, tx, 8], A_shared[...], tx)
//   ->  A_frag = (16,) "local":  T.ldmatrix(0, 4, A_frag[8], A_shared[...], tx)
//
// Every access must index the leading dimensions with variables of
// enclosing thread-bound loops ("threadIdx.*"); anything else (a constant
// lane, a serial loop) would reach another thread's registers and is a
// LowerError naming the buffer and the index.
//
//===----------------------------------------------------------------------===//
#include <unordered_map>
#include <unordered_set>

#include "tessera/ir/Functor.h"
#include "tessera/lower/Passes.h"
#include "tessera/script/Printer.h"

namespace tessera::lower {

namespace {

using namespace tessera::ir;

class WarpBufferLowerer : public IRMutator {
 public:
  explicit WarpBufferLowerer(const std::vector<Buffer> &allocs) {
    for (const Buffer &b : allocs) {
      if (b.scope() != "warp") continue;
      if (b.ndim() < 2)
        throw LowerError("warp buffer '" + b.name() +
                         "' needs the lane dimensions before the per-lane one; it has " + std::to_string(b.ndim()) +
                         " dimension(s)");
      local_.emplace(b.get(), Buffer::make(b.name(), b.dtype(), {b.shape().back()}, "local"));
    }
  }

  Buffer replacement(const Buffer &b) const {
    auto it = local_.find(b.get());
    return it == local_.end() ? b : it->second;
  }

 protected:
  Stmt visit_(const For *op, const Stmt &self) override {
    bool thread = op->for_kind == ForKind::ThreadBinding && op->thread_tag.rfind("threadIdx.", 0) == 0;
    if (thread) threads_.insert(op->loop_var.get());
    Stmt s = IRMutator::visit_(op, self);
    if (thread) threads_.erase(op->loop_var.get());
    return s;
  }

  Expr visit_(const Load *op, const Expr &self) override {
    if (!local_.count(op->buffer.get())) return IRMutator::visit_(op, self);
    return Load::make(replacement(op->buffer), {lane_index(op->buffer, op->indices)});
  }

  Stmt visit_(const Store *op, const Stmt &self) override {
    if (!local_.count(op->buffer.get())) return IRMutator::visit_(op, self);
    return Store::make(replacement(op->buffer), mutate(op->value), {lane_index(op->buffer, op->indices)});
  }

 private:
  /// The per-lane index, after checking the leading ones are thread variables.
  Expr lane_index(const Buffer &b, const std::vector<Expr> &indices) {
    for (size_t d = 0; d + 1 < indices.size(); ++d) {
      const auto *v = indices[d].as<VarNode>();
      if (!v || !threads_.count(v))
        throw LowerError("warp buffer '" + b.name() + "' is indexed by " + script::print(indices[d]) +
                         " in dimension " + std::to_string(d) +
                         "; the leading dimensions of a warp buffer must be threadIdx-bound loop variables "
                         "(each thread keeps only its own fragment)");
    }
    return mutate(indices.back());
  }

  std::unordered_map<const BufferNode *, Buffer> local_;
  std::unordered_set<const VarNode *> threads_;
};

}  // namespace

LoweredFunc lower_warp_buffers(const LoweredFunc &f) {
  WarpBufferLowerer w(f.allocs);
  LoweredFunc out = f;
  out.body = w.mutate(f.body);
  for (Buffer &b : out.allocs) b = w.replacement(b);
  return out;
}

}  // namespace tessera::lower
