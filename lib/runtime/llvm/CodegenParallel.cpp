//===- CodegenParallel.cpp - Loops over several cores ----------------------===//
//
// A loop analysis::cpu_parallel_loops accepts (an outermost loop whose
// iterations are independent) becomes a call
//
//   tessera_jit_parallel_for(body, ctx, extent, st)
//
// where `body(ctx, begin, end, st)` is the loop over [begin, end) outlined
// into a function of its own and `ctx` holds every value it uses from the
// enclosing function (bound variables, buffer addresses, shapes, strides;
// constants are used as they are). The runtime (JitRuntime.cpp) splits the
// range over its workers, each with its own run state, so allocations under
// the loop are private to a worker; the buffers a GPU block owns ("shared",
// "local") allocated outside the loop are allocated again, once per worker
// and call, as each GPU block has its own. An error in any iteration is
// reported as the serial run reports it: the one of the first failing
// iteration (the iterations are independent, so it fails the same way).
//
//===----------------------------------------------------------------------===//
#include "Gen.h"

#include <unordered_set>

namespace tessera::runtime::detail {

void Gen::parallel_loop(const ir::For &f, const analysis::CpuParallelLoop &how) {
  Value *lo = to_i64(expr(f.min), f.min.dtype());
  Value *n = to_i64(expr(f.extent), f.extent.dtype());

  // What the body may use from here: every value bound now that is not a
  // constant, in one context record.
  std::vector<Value *> captured;
  auto capture = [&](Value *v) -> int {
    if (!v || llvm::isa<llvm::Constant>(v)) return -1;
    captured.push_back(v);
    return int(captured.size()) - 1;
  };
  struct VarSlot {
    const ir::VarNode *var;
    Value *value;
    int slot;
  };
  std::vector<VarSlot> var_slots;
  for (const auto &[v, stack] : vars_)
    if (!stack.empty()) var_slots.push_back({v, stack.back(), capture(stack.back())});
  // A buffer's address (and its storage, when strided) comes along; its
  // shape and strides are evaluated again in the body from the variables,
  // so that LLVM sees them equal to the loop extents they come from (and
  // proves the bounds checks as it does in one function).
  struct BufSlots {
    const ir::BufferNode *buffer;
    Buf buf;
    int data, storage;
  };
  std::vector<BufSlots> buf_slots;
  for (const auto &[node, stack] : bufs_)
    if (!stack.empty())
      buf_slots.push_back({node, stack.back(), capture(stack.back().data), capture(stack.back().storage)});
  const int lo_slot = capture(lo), n_slot = capture(n);
  std::vector<Type *> types;
  for (Value *v : captured) types.push_back(v->getType());
  llvm::StructType *ctx_type = llvm::StructType::get(ctx_, types);
  Value *ctx = b_.CreateAlloca(ctx_type, nullptr, "par.ctx");
  for (size_t i = 0; i < captured.size(); ++i) b_.CreateStore(captured[i], b_.CreateStructGEP(ctx_type, ctx, unsigned(i)));

  // The body: int32 body(ptr ctx, i64 begin, i64 end, ptr st).
  auto *body_type = llvm::FunctionType::get(i32_, {ptr_, i64_, i64_, ptr_}, false);
  llvm::Function *body = llvm::Function::Create(body_type, llvm::Function::InternalLinkage,
                                                fn_->getName() + ".parallel" + std::to_string(num_outlined_++), *mod_);
  body->addFnAttr(llvm::Attribute::NoUnwind);
  body->addParamAttr(3, llvm::Attribute::NoAlias);
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(n); c && c->getSExtValue() > 0) {
    // A constant extent: the range of begin and end, for SCEV (which the
    // assumptions below do not reach) to fold the loop variable's casts.
    const int64_t extent = c->getSExtValue();
    body->addParamAttr(1, llvm::Attribute::get(ctx_, llvm::Attribute::Range,
                                               llvm::ConstantRange(llvm::APInt(64, 0), llvm::APInt(64, uint64_t(extent)))));
    body->addParamAttr(2, llvm::Attribute::get(ctx_, llvm::Attribute::Range,
                                               llvm::ConstantRange(llvm::APInt(64, 1), llvm::APInt(64, uint64_t(extent) + 1))));
  }
  auto saved_ip = b_.saveIP();
  llvm::Function *saved_fn = fn_;
  Value *saved_st = st_, *saved_scratch = scratch_;
  BasicBlock *saved_fail = fail_bb_;
  fn_ = body;
  st_ = body->getArg(3);
  begin_function();
  Value *in = body->getArg(0);
  auto reload = [&](int slot, Value *outer) -> Value * {
    if (slot < 0) return outer;
    return b_.CreateLoad(types[size_t(slot)], b_.CreateStructGEP(ctx_type, in, unsigned(slot)));
  };
  for (const VarSlot &v : var_slots) vars_[v.var].push_back(reload(v.slot, v.value));
  std::unordered_set<const ir::BufferNode *> copy;
  for (const ir::Buffer &b : how.private_copies) copy.insert(b.get());
  for (const BufSlots &s : buf_slots) {
    Buf b = s.buf;
    b.data = reload(s.data, s.buf.data);
    b.storage = reload(s.storage, s.buf.storage);
    declared_layout(b, *s.buffer);
    if (copy.count(s.buffer)) {
      Value *elements = b.storage;
      if (!elements) {
        elements = b_.getInt64(1);
        for (Value *x : b.shape) elements = b_.CreateMul(elements, x);
      }
      b.data = allocate_storage(b, elements);
    }
    bufs_[s.buffer].push_back(b);
  }
  // The int64 forms of variables are values of the enclosing function: the
  // body uses the narrow ones it reloaded.
  std::unordered_map<const ir::VarNode *, std::vector<Value *>> outer_wide;
  std::swap(outer_wide, wide_vars_);
  Value *lo_in = reload(lo_slot, lo), *n_in = reload(n_slot, n);
  Value *begin = body->getArg(1), *end = body->getArg(2);
  // 0 <= begin and end <= extent, as the runtime calls it: what lets LLVM
  // prove the bounds checks of the loop variable as it does for the whole loop.
  b_.CreateAssumption(b_.CreateICmpSGE(begin, b_.getInt64(0)));
  b_.CreateAssumption(b_.CreateICmpSLE(end, n_in));
  counted_loop(f, lo_in, begin, end);
  b_.CreateRet(b_.getInt32(0));
  for (const VarSlot &v : var_slots) vars_[v.var].pop_back();
  for (const BufSlots &s : buf_slots) bufs_[s.buffer].pop_back();
  std::swap(outer_wide, wide_vars_);

  // Back in the enclosing function: the call, and its failure.
  fn_ = saved_fn;
  st_ = saved_st, scratch_ = saved_scratch, fail_bb_ = saved_fail;
  b_.restoreIP(saved_ip);
  Value *rc = call("tessera_jit_parallel_for", i32_, {body, ctx, n, st_}, /*pure=*/false);
  BasicBlock *ok = BasicBlock::Create(ctx_, "par.ok", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(rc, b_.getInt32(0)), ok, fail_bb_, llvm::MDBuilder(ctx_).createBranchWeights(1 << 20, 1));
  b_.SetInsertPoint(ok);
}

}  // namespace tessera::runtime::detail
