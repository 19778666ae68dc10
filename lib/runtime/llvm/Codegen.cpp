//===- Codegen.cpp - A PrimFunc to LLVM IR ---------------------------------===//
//
// One LLVM function per PrimFunc, serial semantics. Values keep their IR
// type's width (iN for intN/uintN, i1 for bool), so integer wrap-around is
// LLVM's own; float16/bfloat16/float32 values are `float`, always holding a
// value exact in their type (every operation is rounded to the type, inline,
// exactly as support/Half.h rounds), float64 `double`. Every check the interpreter
// makes at run time (bounds, division by zero, shift amounts, iter var
// domains, T.assume, negative allocation sizes) is a compare and a branch to
// a cold block that records the error (tessera_jit_fail) and returns 1; LLVM
// removes the ones it proves (constant shapes against constant loop bounds).
// Conditional operators (Select, if_then_else, and, or) branch, so a guarded
// load is never performed.
//
// NaN payloads are not part of the contract: a NaN comes out where the
// interpreter's does, but its payload and signalling bit may differ (the
// interpreter holds values as doubles, which quiets signalling NaNs on every
// load, and LLVM may commute the operands of an addition of two NaNs).
//
// Parameter buffers are assumed not to overlap (scoped alias metadata, one
// scope per buffer): LlvmJit::run checks it and interprets the rare call
// whose arrays overlap.
//
//===----------------------------------------------------------------------===//
#include "Gen.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace tessera::runtime::detail {

void Gen::begin_function() {
  BasicBlock *entry = BasicBlock::Create(ctx_, "entry", fn_);
  fail_bb_ = BasicBlock::Create(ctx_, "fail", fn_);
  b_.SetInsertPoint(fail_bb_);
  b_.CreateRet(b_.getInt32(1));
  b_.SetInsertPoint(entry);
  scratch_ = b_.CreateAlloca(i64_, b_.getInt32(2 * kMaxDims + 2), "scratch");
}

GeneratedModule Gen::run() {
  begin_function();

  // Scalar parameters and shape variables from their slots.
  // What the analyzer knows of them (CodegenIndex.cpp): an integer holds a
  // value of its type, a shape variable a size.
  for (const ScalarParam &sp : p_.scalars) {
    bind(sp.var, load_slot(sp.var.dtype(), sp.slot, sp.is_float));
    if (sp.var.dtype().is_int()) {
      const arith::IntBound t = arith::IntBound::of_dtype(sp.var.dtype());
      ana_.bind(sp.var, t.min, t.max);
    }
  }
  for (const auto &[v, slot] : p_.shape_var_slots) {
    bind(v, load_slot(v.dtype(), slot, false));
    if (v.dtype().is_int()) ana_.bind(v, 0, arith::IntBound::of_dtype(v.dtype()).max);
  }
  // Parameter buffers: data (and storage) from their BufState, shapes and
  // strides from the declarations, which binding checked against the arrays.
  for (const ParamBuffer &pb : p_.buffers) {
    Value *base = b_.CreateConstGEP1_64(i8_, bufs_arg_, int64_t(pb.slot) * int64_t(sizeof(BufState)));
    Buf buf;
    buf.dtype = pb.buffer.dtype();
    buf.data = b_.CreateLoad(ptr_, b_.CreateConstGEP1_64(i8_, base, offsetof(BufState, data)), "data");
    declared_layout(buf, *pb.buffer.get());
    if (!pb.buffer->strides.empty())
      buf.storage = b_.CreateLoad(i64_, b_.CreateConstGEP1_64(i8_, base, offsetof(BufState, storage)));
    buf.scope = new_scope(pb.buffer.name());
    bufs_[pb.buffer.get()].push_back(buf);
  }
  stmt(p_.func.body());
  b_.CreateRet(b_.getInt32(0));
  finish_alias_metadata();

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyFunction(*fn_, &os))
    throw InternalError("the LLVM JIT generated invalid IR for '" + p_.func.name() + "': " + os.str());
  return {std::move(mod_), std::move(sites_), num_allocs_, std::move(warp_)};
}

GeneratedModule generate_module(const Program &p, llvm::LLVMContext &ctx, const std::string &name,
                                const CodegenOptions &options) {
  return Gen(p, ctx, name, options).run();
}

}  // namespace tessera::runtime::detail
