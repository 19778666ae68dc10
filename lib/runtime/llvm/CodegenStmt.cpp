//===- CodegenStmt.cpp - Statements to LLVM IR ----------------------------===//
//
// Gen's statements (Gen.h): stores, loops, blocks with their iter vars,
// predicates and inits, allocations.
//
//===----------------------------------------------------------------------===//
#include <algorithm>

#include "Gen.h"

namespace tessera::runtime::detail {

void Gen::stmt(const ir::Stmt &s) {
  switch (s.kind()) {
    case ir::NodeKind::Store: {
      const auto *st = s.as<ir::Store>();
      DataType t = st->buffer.dtype();
      Value *v = expr(st->value);  // the value first, then the index (the interpreter's order)
      Value *addr = address(st->buffer, st->indices, true);
      if (t.is_bool())
        v = b_.CreateZExt(to_bool(v), i8_);
      else if (t.is_float16())
        v = float_to_half(v);
      else if (t.is_bfloat16())
        v = float_to_bf16(v);
      else if (t.is_float() && v->getType() != ltype(t))
        v = float_kind(t) == FK::F64 ? b_.CreateFPExt(v, f64_) : b_.CreateFPTrunc(v, f32_);
      else if (!t.is_float())
        v = cast_int(v, st->value.dtype(), t);
      note_access(b_.CreateStore(v, addr), st->buffer);
      return;
    }
    case ir::NodeKind::For: return loop(*s.as<ir::For>());
    case ir::NodeKind::Seq:
      for (const ir::Stmt &c : s.as<ir::Seq>()->stmts) stmt(c);
      return;
    case ir::NodeKind::IfThenElse: {
      const auto *i = s.as<ir::IfThenElse>();
      Value *c = to_bool(expr(i->cond));
      BasicBlock *tb = BasicBlock::Create(ctx_, "if.then", fn_), *join = BasicBlock::Create(ctx_, "if.end", fn_);
      BasicBlock *eb = i->else_case ? BasicBlock::Create(ctx_, "if.else", fn_) : join;
      b_.CreateCondBr(c, tb, eb);
      b_.SetInsertPoint(tb);
      stmt(i->then_case);
      b_.CreateBr(join);
      if (i->else_case) {
        b_.SetInsertPoint(eb);
        stmt(*i->else_case);
        b_.CreateBr(join);
      }
      b_.SetInsertPoint(join);
      return;
    }
    case ir::NodeKind::LetStmt: {
      const auto *l = s.as<ir::LetStmt>();
      arith::Analyzer::Scope facts(ana_);
      const bool index_like = l->var.dtype() == l->value.dtype() && fits(l->value);
      bind_wide(l->var, index_like ? wide(l->value) : nullptr);
      bind(l->var, expr(l->value));
      if (index_like) ana_.bind_value(l->var, l->value);
      stmt(l->body);
      unbind(l->var);
      unbind_wide(l->var);
      return;
    }
    case ir::NodeKind::Evaluate: {
      const auto *e = s.as<ir::Evaluate>();
      if (const auto *c = e->value.as<ir::Call>(); c && ir::is_async_or_warp_statement(c->op))
        return warp_statement(*c);
      (void)expr(e->value);
      return;
    }
    case ir::NodeKind::Block: return block(*s.as<ir::Block>());
    default: break;
  }
  unsupported(std::string("statement ") + ir::node_kind_name(s.kind()));
}

namespace {

/// A serial innermost loop that accumulates into elements it does not move
/// along while it reads another buffer across rows: a plain matmul's k loop,
/// C[i, j] += A[i, k] * B[k, j]. With ordered reductions allowed (LlvmJit.cpp,
/// for a softmax's sum of exponentials), LLVM's vectorizer takes such a loop
/// as an in-order reduction over gathered columns of B. That is slower than
/// the unroll-and-jam it preempts (a 256^3 matmul ran 14.8 ms against 3.9).
bool strided_reduction_loop(const ir::For &f) {
  if (f.for_kind != ir::ForKind::Serial) return false;
  // The loop's variable and the block iters bound to it.
  std::vector<ir::Var> along{f.loop_var};
  bool nested = false;
  ir::pre_order_visit(f.body, nullptr, [&](const ir::Stmt &s) {
    if (s.as<ir::For>()) nested = true;
    if (const auto *b = s.as<ir::Block>())
      for (size_t i = 0; i < b->iter_vars.size(); ++i)
        if (ir::uses_var(b->bindings[i], f.loop_var)) along.push_back(b->iter_vars[i].var);
  });
  if (nested) return false;
  auto moves = [&](const ir::Expr &e) {
    return std::any_of(along.begin(), along.end(), [&](const ir::Var &v) { return ir::uses_var(e, v); });
  };
  bool across_rows = false, accumulates = false;
  ir::pre_order_visit(
      f.body,
      [&](const ir::Expr &e) {
        if (const auto *l = e.as<ir::Load>())
          for (size_t d = 0; d + 1 < l->indices.size(); ++d) across_rows = across_rows || moves(l->indices[d]);
      },
      [&](const ir::Stmt &s) {
        if (const auto *st = s.as<ir::Store>(); st && st->value.dtype().is_float())
          accumulates = accumulates || std::none_of(st->indices.begin(), st->indices.end(), moves);
      });
  return across_rows && accumulates;
}

}  // namespace

/// for (v = min; v < min + extent; ++v), counted in int64 as the interpreter does.
void Gen::loop(const ir::For &f) {
  if (auto it = parallel_.find(&f); it != parallel_.end()) return parallel_loop(f, it->second);
  if (transposed_tile(f)) return;
  counted_loop(f, to_i64(expr(f.min), f.min.dtype()), b_.getInt64(0), to_i64(expr(f.extent), f.extent.dtype()));
}

bool Gen::counter_fits(const ir::For &f) const {
  const DataType t = f.loop_var.dtype();
  const auto lo_bound = computed_bound(f.min), n_bound = computed_bound(f.extent);
  const arith::IntBound type = arith::IntBound::of_dtype(t);
  return t.is_int() && lo_bound && n_bound && lo_bound->min >= type.min &&
         __int128(lo_bound->max) + __int128(n_bound->max) - 1 <= __int128(type.max);
}

void Gen::counted_loop(const ir::For &f, Value *lo, Value *begin, Value *end) {
  BasicBlock *pre = b_.GetInsertBlock();
  BasicBlock *body = BasicBlock::Create(ctx_, "for." + f.loop_var.name(), fn_);
  BasicBlock *exit = BasicBlock::Create(ctx_, "for.end", fn_);
  b_.CreateCondBr(b_.CreateICmpSLT(begin, end), body, exit);
  b_.SetInsertPoint(body);
  llvm::PHINode *i = b_.CreatePHI(i64_, 2, "i");
  i->addIncoming(begin, pre);
  arith::Analyzer::Scope facts(ana_);
  // The counter in int64 is the variable's value when its range fits its
  // type; else the variable wraps around, and may take any value of it.
  const DataType t = f.loop_var.dtype();
  const arith::IntBound type = arith::IntBound::of_dtype(t);
  const bool fits_type = counter_fits(f);
  if (fits_type)
    ana_.bind(f.loop_var, ir::Range{f.min, f.extent});
  else if (t.is_int())
    ana_.bind(f.loop_var, type.min, type.max);
  Value *counter = b_.CreateAdd(lo, i, "", false, /*HasNSW=*/fits_type);
  bind(f.loop_var, cast_int(counter, DataType::int64(), f.loop_var.dtype()));
  bind_wide(f.loop_var, fits_type ? counter : nullptr);
  stmt(f.body);
  unbind(f.loop_var);
  unbind_wide(f.loop_var);
  Value *next = b_.CreateAdd(i, b_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst *latch = b_.CreateCondBr(b_.CreateICmpSLT(next, end), body, exit);
  // The schedule's loop kinds as LLVM loop hints: an unrolled loop unrolled
  // fully, a vectorized one vectorized (LLVM's own cost model decides the
  // rest; the semantics are the serial loop's either way).
  std::vector<llvm::Metadata *> hints;
  if (f.for_kind == ir::ForKind::Unrolled)
    hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.full")}));
  if (strided_reduction_loop(f))
    hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                                             llvm::ConstantAsMetadata::get(b_.getFalse())}));
  if (f.for_kind == ir::ForKind::Vectorized) {
    hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                                             llvm::ConstantAsMetadata::get(b_.getTrue())}));
    // A constant extent of up to 64 lanes, a power of two: vectors of that
    // many lanes, as the schedule says. Left to itself, the cost model took
    // 4 lanes (unrolled 4 times) for an int4 gemv's 16-lane loop of int
    // and float16 conversions: 2.5x slower than 16.
    if (std::optional<int64_t> lanes = ir::as_const_int(f.extent); lanes && *lanes >= 2 && *lanes <= 64 &&
                                                                    (*lanes & (*lanes - 1)) == 0)
      hints.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
                                               llvm::ConstantAsMetadata::get(b_.getInt32(uint32_t(*lanes)))}));
  }
  if (!hints.empty()) {
    hints.insert(hints.begin(), nullptr);  // the loop's own node, first
    llvm::MDNode *loop_md = llvm::MDNode::getDistinct(ctx_, hints);
    loop_md->replaceOperandWith(0, loop_md);
    latch->setMetadata(llvm::LLVMContext::MD_loop, loop_md);
  }
  b_.SetInsertPoint(exit);
}

void Gen::block(const ir::Block &blk) {
  std::string outer = block_;
  block_ = blk.name;
  // Bindings refer to the enclosing scope.
  std::vector<Value *> values, wide_values;
  for (size_t k = 0; k < blk.iter_vars.size(); ++k) {
    const Expr &binding = blk.bindings[k];
    const DataType t = blk.iter_vars[k].var.dtype();
    // A binding that fits the iter var's type has the same value in int64.
    const auto bound = computed_bound(binding);
    const arith::IntBound type = arith::IntBound::of_dtype(t);
    if (t.is_int() && bound && bound->min >= type.min && bound->max <= type.max) {
      wide_values.push_back(wide(binding));
      values.push_back(cast_int(wide_values.back(), DataType::int64(), t));
    } else {
      wide_values.push_back(nullptr);
      values.push_back(cast_int(expr(binding), binding.dtype(), t));
    }
  }
  // The facts of the block: its predicate inside it, then each iter var over
  // its domain once its check passed (or was proven).
  arith::Analyzer::Scope facts(ana_);
  for (size_t k = 0; k < blk.iter_vars.size(); ++k) {
    bind(blk.iter_vars[k].var, values[k]);
    bind_wide(blk.iter_vars[k].var, wide_values[k]);
  }
  BasicBlock *end = nullptr;
  if (blk.predicate.defined() && !ir::is_const_int(blk.predicate, 1)) {
    Value *c = to_bool(expr(blk.predicate));
    BasicBlock *run = BasicBlock::Create(ctx_, "block." + blk.name, fn_);
    end = BasicBlock::Create(ctx_, "block.end", fn_);
    b_.CreateCondBr(c, run, end);
    b_.SetInsertPoint(run);
    ana_.assume(blk.predicate);
  }
  Value *first = b_.getTrue();
  std::vector<bool> domain_proven;
  for (size_t k = 0; k < blk.iter_vars.size(); ++k) {
    const ir::IterVar &iv = blk.iter_vars[k];
    Value *v = to_i64(values[k], iv.var.dtype());
    Value *lo = to_i64(expr(iv.dom.min), iv.dom.min.dtype());
    domain_proven.push_back(proven_within(blk.bindings[k], iv.dom.min, iv.dom.extent));
    if (!domain_proven.back()) {
      Value *n = to_i64(expr(iv.dom.extent), iv.dom.extent.dtype());
      JitSite s;
      s.kind = JitSite::Kind::Domain;
      s.what = iv.var.name();
      check(b_.CreateAnd(b_.CreateICmpSGE(v, lo), b_.CreateICmpSLT(v, b_.CreateAdd(lo, n))), site(std::move(s)),
            {v, lo, n});
    }
    if (iv.kind == ir::IterKind::Reduce) first = b_.CreateAnd(first, b_.CreateICmpEQ(v, lo));
  }
  // An iter var is its binding when that is index arithmetic of the
  // enclosing loops (simplify then rewrites its uses in their terms), else
  // somewhere in its domain.
  for (size_t k = 0; k < blk.iter_vars.size(); ++k) {
    const ir::IterVar &iv = blk.iter_vars[k];
    if (wide_values[k] && iv.var.dtype() == blk.bindings[k].dtype() && domain_proven[k])
      ana_.bind_value(iv.var, blk.bindings[k]);
    else
      ana_.bind(iv.var, iv.dom);
  }
  for (const ir::Buffer &buf : blk.allocs) allocate(buf);
  if (blk.init) {
    BasicBlock *ib = BasicBlock::Create(ctx_, "init", fn_), *after = BasicBlock::Create(ctx_, "init.end", fn_);
    b_.CreateCondBr(first, ib, after);
    b_.SetInsertPoint(ib);
    stmt(*blk.init);
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }
  stmt(blk.body);
  for (const ir::Buffer &buf : blk.allocs) bufs_[buf.get()].pop_back();
  for (const ir::IterVar &iv : blk.iter_vars) unbind(iv.var), unbind_wide(iv.var);
  if (end) {
    b_.CreateBr(end);
    b_.SetInsertPoint(end);
  }
  block_ = outer;
}

void Gen::allocate(const ir::Buffer &buf) {
  Buf a;
  a.dtype = buf.dtype();
  for (size_t d = 0; d < buf.shape().size(); ++d) {
    const Expr &e = buf.shape()[d];
    Value *n = to_i64(expr(e), e.dtype());
    JitSite s;
    s.kind = JitSite::Kind::NegativeDim;
    s.what = buf.name();
    check(b_.CreateICmpSGE(n, b_.getInt64(0)), site(std::move(s)), {b_.getInt64(int64_t(d)), n});
    a.shape.push_back(n);
  }
  Value *numel = b_.getInt64(1);
  for (Value *n : a.shape) numel = b_.CreateMul(numel, n);
  Value *storage;
  if (buf->strides.empty()) {
    row_major(a);
    storage = numel;
  } else {
    Value *last = b_.getInt64(0);
    for (size_t d = 0; d < a.shape.size(); ++d) {
      const Expr &e = buf->strides[d];
      a.strides.push_back(to_i64(expr(e), e.dtype()));
      Value *span = b_.CreateMul(b_.CreateSub(a.shape[d], b_.getInt64(1)), a.strides[d]);
      last = b_.CreateAdd(last, b_.CreateSelect(b_.CreateICmpSGT(a.shape[d], b_.getInt64(0)), span, b_.getInt64(0)));
    }
    storage = b_.CreateSelect(b_.CreateICmpEQ(numel, b_.getInt64(0)), b_.getInt64(0), b_.CreateAdd(last, b_.getInt64(1)));
    a.storage = storage;
  }
  a.data = allocate_storage(a, storage);
  a.scope = new_scope(buf.name());
  bufs_[buf.get()].push_back(a);
}

Value *Gen::allocate_storage(const Buf &buf, Value *elements) {
  PoisonKind poison = PoisonKind::Int;
  if (buf.dtype.is_float()) {
    switch (float_kind(buf.dtype)) {
      case FK::F16: poison = PoisonKind::F16; break;
      case FK::BF16: poison = PoisonKind::BF16; break;
      case FK::F32: poison = PoisonKind::F32; break;
      default: poison = PoisonKind::F64;
    }
  }
  Value *bytes = b_.CreateMul(elements, b_.getInt64(buf.dtype.bytes()));
  return call("tessera_jit_alloc", ptr_, {st_, b_.getInt32(num_allocs_++), bytes, b_.getInt32(int32_t(poison))},
              /*pure=*/false);
}

}  // namespace tessera::runtime::detail

