//===- WarpOperands.h - Operands of the warp-level statements (private) ---===//
//
// What the interpreter's warp-level and asynchronous statements
// (CompileWarp.cpp; the mbarrier and TMA ones in CompileTma.cpp) share: an
// address operand and the checks on constants and lanes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "ExprNodes.h"

#include "tessera/ir/Op.h"

namespace tessera::runtime::detail {

using ir::DataType;
using ir::Intrinsic;

/// An address operand: the buffer element an instruction starts at.
struct Address {
  Indexer ix;
  DataType dtype;
  int last = 0;  ///< the innermost dimension
  std::string name;

  Address(Compiler &cc, const ir::Load &l, bool store)
      : ix(cc, l.buffer, cc.buffer_slot(l.buffer, store ? "store to" : "load from"), l.indices, store),
        dtype(l.buffer.dtype()),
        last(static_cast<int>(l.indices.size()) - 1),
        name(l.buffer.name()) {}

  uint8_t *base(Frame &f) const { return f.bufs[ix.buf].data; }
  int bytes() const { return dtype.bytes(); }

  /// The flat offset of the operand, checking that `n` elements from it stay
  /// inside the innermost dimension (an instruction's row never wraps).
  int64_t offset(Frame &f, int64_t n, const char *what) const {
    int64_t off = ix.offset(f);
    const BufState &b = f.bufs[ix.buf];
    int64_t at = ix.index(f, last);
    if (at + n > b.shape[last] || (b.ndim > 0 && b.strides[last] != 1))
      throw InterpretError(std::string(what) + " of " + std::to_string(n) + " elements at index " +
                           std::to_string(at) + " of the last dimension of '" + name + "' (extent " +
                           std::to_string(b.shape[last]) + ") in block '" + ix.ctx->block +
                           "' runs past it or is not contiguous");
    return off;
  }
};

inline Address address_operand(Compiler &cc, const ir::Call &c, int i, bool store) {
  const auto *l = c.args[i].as<ir::Load>();
  if (!l)
    throw InterpretError(std::string("argument ") + std::to_string(i) + " of T." + ir::intrinsic_name(c.op) +
                         " in block '" + cc.block() + "' is not a buffer element");
  return Address(cc, *l, store);
}

/// Whether `b` lives in shared memory (static or dynamic).
inline bool in_shared_memory(const ir::Buffer &b) { return b.scope() == "shared" || b.scope() == "shared.dyn"; }

inline int lane_slot(Compiler &cc, const ir::Call &c, int i) {
  int slot = cc.int_var_slot(c.args[i]);
  if (slot < 0)
    throw InterpretError(std::string("the lane operand of T.") + ir::intrinsic_name(c.op) + " in block '" +
                         cc.block() + "' is not a variable in scope (the loop over the warp's 32 lanes)");
  return slot;
}

inline int64_t const_arg(Compiler &cc, const ir::Call &c, int i, const char *what) {
  auto v = ir::as_const_int(c.args[i]);
  if (!v)
    throw InterpretError(std::string(what) + " of T." + ir::intrinsic_name(c.op) + " in block '" + cc.block() +
                         "' must be a constant");
  return *v;
}

/// The current lane (0..31) or an error naming the instruction.
inline int64_t current_lane(const Frame &f, int slot, const char *what, const ErrCtx *ctx) {
  int64_t l = f.iv[slot];
  if (l < 0 || l >= 32)
    throw InterpretError(std::string(what) + " in block '" + ctx->block + "' runs at lane " + std::to_string(l) +
                         "; a warp has lanes 0..31");
  return l;
}

/// Evaluates `fn()` with the lane variable set to `lane`, then restores it.
template <typename Fn>
auto as_lane(Frame &f, int slot, int64_t lane, Fn &&fn) {
  int64_t saved = f.iv[slot];
  f.iv[slot] = lane;
  struct Restore {
    Frame &f;
    int slot;
    int64_t v;
    ~Restore() { f.iv[slot] = v; }
  } restore{f, slot, saved};
  return fn();
}

/// The mbarrier and TMA statements (T.mbarrier_*, T.tma_load, T.tma_store,
/// T.tma_store_wait) and T.syncwarp (CompileTma.cpp); null for another.
StmtPtr compile_tma_statement(Compiler &cc, const ir::Call &c);

}  // namespace tessera::runtime::detail
