//===- Gen.h - The PrimFunc-to-LLVM-IR generator (private) ----------------===//
//
// Private to lib/runtime/llvm: the class generate_module (Codegen.h) runs.
// Its small helpers (types and conversions, scopes, alias metadata, run-time
// checks) are here; run() is in Codegen.cpp, the expressions in
// CodegenExpr.cpp, the statements in CodegenStmt.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <limits>
#include <unordered_map>

#include "../Scalar.h"
#include "Codegen.h"
#include "tessera/analysis/Parallel.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/MmaFragments.h"
#include "tessera/runtime/LlvmJit.h"

namespace tessera::runtime::detail {

using ir::DataType;
using ir::Expr;
using llvm::BasicBlock;
using llvm::Type;
using llvm::Value;

class Gen {
 public:
  Gen(const Program &p, llvm::LLVMContext &ctx, const std::string &name, const CodegenOptions &options)
      : p_(p), ctx_(ctx), mod_(std::make_unique<llvm::Module>(name, ctx)), b_(ctx),
        fuse_multiply_add_(options.fuse_multiply_add) {
    i1_ = b_.getInt1Ty();
    i8_ = b_.getInt8Ty();
    i16_ = b_.getInt16Ty();
    i32_ = b_.getInt32Ty();
    i64_ = b_.getInt64Ty();
    f32_ = b_.getFloatTy();
    f64_ = b_.getDoubleTy();
    ptr_ = b_.getPtrTy();
    auto *fty = llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_, ptr_}, false);
    fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, *mod_);
    for (unsigned i = 0; i < 4; ++i) fn_->addParamAttr(i, llvm::Attribute::NoAlias);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    iv_ = fn_->getArg(0);
    fv_ = fn_->getArg(1);
    bufs_arg_ = fn_->getArg(2);
    st_ = fn_->getArg(3);
    alias_domain_ = llvm::MDBuilder(ctx_).createAnonymousAliasScopeDomain("tessera");
    if (options.parallel)
      for (analysis::CpuParallelLoop &l : analysis::cpu_parallel_loops(p.func)) parallel_.emplace(l.loop, std::move(l));
  }

  GeneratedModule run();


 private:
  struct Buf {
    Value *data = nullptr;
    std::vector<Value *> shape, strides;
    Value *storage = nullptr;  // set when strides are explicit: the offset is checked against it
    DataType dtype;
    llvm::MDNode *scope = nullptr;
  };

  // ---- types and conversions ------------------------------------------------

  Type *ltype(DataType t) {
    if (t.is_bool()) return i1_;
    if (t.is_float()) return float_kind(t) == FK::F64 ? f64_ : f32_;
    return b_.getIntNTy(unsigned(t.bits()));
  }
  /// The int64_t the interpreter holds for an integer value.
  Value *to_i64(Value *v, DataType t) {
    if (v->getType() == i64_) return v;
    return t.is_int() ? b_.CreateSExt(v, i64_) : b_.CreateZExt(v, i64_);
  }
  Value *to_bool(Value *v) {
    if (v->getType() == i1_) return v;
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  /// Integer (or bool) cast with the interpreter's wrap-around.
  Value *cast_int(Value *v, DataType from, DataType to) {
    if (to.is_bool()) return to_bool(v);
    Type *t = ltype(to);
    if (v->getType() == t) return v;
    unsigned fb = v->getType()->getIntegerBitWidth(), tb = t->getIntegerBitWidth();
    if (tb < fb) return b_.CreateTrunc(v, t);
    return from.is_int() ? b_.CreateSExt(v, t) : b_.CreateZExt(v, t);
  }
  /// Rounds a float computed in `float` to float16/bfloat16 (no-op otherwise).
  Value *fin(Value *v, DataType t) {
    switch (float_kind(t)) {
      case FK::F16: return half_to_float(float_to_half(v));
      case FK::BF16: return bf16_to_float(float_to_bf16(v));
      default: return v;
    }
  }

  // float16 / bfloat16 conversions, inline and bit for bit support/Half.h's
  // for every value but NaN: LLVM's fptrunc/fpext to half round to nearest
  // even like float_to_half_bits and are exact the other way. A NaN stays a
  // NaN of its sign, its payload left open (Codegen.cpp). Only the bits a
  // program can read as an integer (T.reinterpret: float_bits) are Half.h's
  // canonical quiet NaN; the payload fix-ups everywhere cost a third of an
  // int4 gemv's time.
  Value *float_to_half(Value *v) {  // float -> i16 bits
    return b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getHalfTy()), i16_);
  }
  /// float_to_half with Half.h's NaN: the canonical quiet NaN of its sign.
  Value *float_to_half_canonical(Value *v) {
    Value *sign = b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, i32_), 16), i16_);
    Value *nan = b_.CreateOr(b_.CreateAnd(sign, b_.getInt16(0x8000)), b_.getInt16(0x7e00));
    return b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, float_to_half(v));
  }
  Value *half_to_float(Value *h) {  // i16 bits -> float
    return b_.CreateFPExt(b_.CreateBitCast(h, b_.getHalfTy()), f32_);
  }
  Value *float_to_bf16(Value *v) {  // float -> i16 bits: float_to_bfloat16_bits
    Value *x = b_.CreateBitCast(v, i32_);
    Value *is_nan = b_.CreateICmpUGT(b_.CreateAnd(x, b_.getInt32(0x7fffffff)), b_.getInt32(0x7f800000));
    Value *lsb = b_.CreateAnd(b_.CreateLShr(x, 16), b_.getInt32(1));
    Value *rounded = b_.CreateLShr(b_.CreateAdd(x, b_.CreateAdd(b_.getInt32(0x7fff), lsb)), 16);
    Value *nan = b_.CreateOr(b_.CreateLShr(x, 16), b_.getInt32(0x40));
    return b_.CreateTrunc(b_.CreateSelect(is_nan, nan, rounded), i16_);
  }
  Value *bf16_to_float(Value *h) { return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(h, i32_), 16), f32_); }

  Value *load_slot(DataType t, int slot, bool is_float) {
    if (is_float) {
      Value *d = b_.CreateLoad(f64_, b_.CreateConstGEP1_64(f64_, fv_, slot));
      return float_kind(t) == FK::F64 ? d : b_.CreateFPTrunc(d, f32_);  // exact: already rounded
    }
    Value *x = b_.CreateLoad(i64_, b_.CreateConstGEP1_64(i64_, iv_, slot));
    return t.is_bool() ? to_bool(x) : cast_int(x, DataType::int64(), t);
  }

  /// A call to a helper (JitRuntime.cpp); pure ones are marked so, so LLVM may
  /// hoist and eliminate them.
  Value *call(const std::string &name, Type *ret, std::vector<Value *> args, bool pure = true) {
    llvm::Function *f = mod_->getFunction(name);
    if (!f) {
      std::vector<Type *> types;
      for (Value *a : args) types.push_back(a->getType());
      f = llvm::Function::Create(llvm::FunctionType::get(ret, types, false), llvm::Function::ExternalLinkage, name,
                                 *mod_);
      f->addFnAttr(llvm::Attribute::NoUnwind);
      if (pure) {
        f->setDoesNotAccessMemory();
        f->addFnAttr(llvm::Attribute::WillReturn);
      }
    }
    return b_.CreateCall(f, args);
  }
  Value *intrinsic(llvm::Intrinsic::ID id, Value *x) { return b_.CreateUnaryIntrinsic(id, x); }

  // ---- scopes -----------------------------------------------------------------

  void bind(const ir::Var &v, Value *x) { vars_[v.get()].push_back(x); }
  void unbind(const ir::Var &v) { vars_[v.get()].pop_back(); }
  Value *var(const ir::VarNode *v) {
    auto it = vars_.find(v);
    if (it == vars_.end() || it->second.empty())
      throw InternalError("LLVM JIT: variable '" + v->name + "' unbound in block '" + block_ + "'");
    return it->second.back();
  }
  Buf &buffer(const ir::Buffer &b) {
    auto it = bufs_.find(b.get());
    if (it == bufs_.end() || it->second.empty())
      throw InternalError("LLVM JIT: buffer '" + b.name() + "' unbound in block '" + block_ + "'");
    return it->second.back();
  }
  /// buf's shape and strides evaluated from its declaration (row-major when
  /// it declares no strides).
  void declared_layout(Buf &buf, const ir::BufferNode &decl) {
    buf.shape.clear(), buf.strides.clear();
    for (const Expr &e : decl.shape) buf.shape.push_back(to_i64(expr(e), e.dtype()));
    if (decl.strides.empty()) return row_major(buf);
    for (const Expr &e : decl.strides) buf.strides.push_back(to_i64(expr(e), e.dtype()));
  }
  void row_major(Buf &buf) {
    buf.strides.assign(buf.shape.size(), nullptr);
    Value *s = b_.getInt64(1);
    for (size_t d = buf.shape.size(); d-- > 0;) {
      buf.strides[d] = s;
      s = b_.CreateMul(s, buf.shape[d]);
    }
  }

  // ---- alias metadata ------------------------------------------------------------

  llvm::MDNode *new_scope(const std::string &name) {
    llvm::MDNode *s = llvm::MDBuilder(ctx_).createAnonymousAliasScope(alias_domain_, name);
    scopes_.push_back(s);
    return s;
  }
  /// Accesses get their metadata at the end, when every scope is known.
  void finish_alias_metadata() {
    for (auto &[inst, scope] : accesses_) {
      std::vector<llvm::Metadata *> others;
      for (llvm::MDNode *s : scopes_)
        if (s != scope) others.push_back(s);
      inst->setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(ctx_, {scope}));
      if (!others.empty()) inst->setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(ctx_, others));
    }
  }

  // ---- run-time checks -----------------------------------------------------------

  int site(JitSite s) {
    s.block = block_;
    sites_.push_back(std::move(s));
    return int(sites_.size()) - 1;
  }
  /// Continues when `ok`; else records `site` with `vals` and returns 1.
  void check(Value *ok, int site_id, const std::vector<Value *> &vals) {
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(ok); c && c->isOne()) {
      // Folded away: the site is not kept (TESSERA_DUMP_LLVM lists the checks that remain).
      if (site_id + 1 == int(sites_.size())) sites_.pop_back();
      return;
    }
    BasicBlock *good = BasicBlock::Create(ctx_, "ok", fn_), *bad = BasicBlock::Create(ctx_, "bad", fn_);
    b_.CreateCondBr(ok, good, bad, llvm::MDBuilder(ctx_).createBranchWeights(1 << 20, 1));
    b_.SetInsertPoint(bad);
    for (size_t i = 0; i < vals.size(); ++i) b_.CreateStore(vals[i], b_.CreateConstGEP1_64(i64_, scratch_, i));
    llvm::Function *f = mod_->getFunction("tessera_jit_fail");
    if (!f) {
      f = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), {ptr_, i32_, ptr_}, false),
                                 llvm::Function::ExternalLinkage, "tessera_jit_fail", *mod_);
      f->addFnAttr(llvm::Attribute::Cold);
      f->addFnAttr(llvm::Attribute::NoUnwind);
    }
    b_.CreateCall(f, {st_, b_.getInt32(site_id), scratch_});
    b_.CreateBr(fail_bb_);
    b_.SetInsertPoint(good);
  }

  /// The address of an element, every index checked (the interpreter's
  /// Indexer) unless the analyzer proves it within the buffer's shape
  /// (CodegenIndex.cpp).
  Value *address(const ir::Buffer &b, const std::vector<Expr> &indices, bool store) {
    Buf &buf = buffer(b);
    std::vector<Value *> idx;
    for (const Expr &e : indices) idx.push_back(index_value(e));
    Value *ok = b_.getTrue(), *off = b_.getInt64(0);
    bool proven = true;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (!proven_within(indices[d], ir::make_int(indices[d].dtype(), 0), b.shape()[d])) {
        proven = false;
        ok = b_.CreateAnd(ok, b_.CreateICmpULT(idx[d], buf.shape[d]));
      }
      off = b_.CreateAdd(off, b_.CreateMul(idx[d], buf.strides[d]));
    }
    if (buf.storage) ok = b_.CreateAnd(ok, b_.CreateICmpULT(off, buf.storage));
    if (!proven || buf.storage) {
      JitSite s;
      s.kind = JitSite::Kind::OutOfBounds;
      s.store = store;
      s.what = b.name();
      s.ndim = int(idx.size());
      std::vector<Value *> vals = idx;
      vals.insert(vals.end(), buf.shape.begin(), buf.shape.end());
      check(ok, site(std::move(s)), vals);
    }
    return b_.CreateGEP(storage_type(b.dtype()), buf.data, off);
  }
  Type *storage_type(DataType t) {
    if (t.is_bool()) return i8_;
    if (t.is_float() && t.bits() == 16) return i16_;
    return ltype(t);
  }
  void note_access(llvm::Instruction *inst, const ir::Buffer &b) { accesses_.emplace_back(inst, buffer(b).scope); }

  // ---- index arithmetic (CodegenIndex.cpp) ----------------------------------------
  /// The values the integer `e` takes as computed, when no sub-expression
  /// can leave its dtype (under the facts of ana_); nullopt otherwise.
  std::optional<arith::IntBound> computed_bound(const Expr &e) const;
  bool fits(const Expr &e) const { return computed_bound(e).has_value(); }
  /// `e` computed in int64 with no-wrap flags; only for fits(e).
  Value *wide(const Expr &e);
  /// An index as int64: wide() when it fits, else the expression's value.
  Value *index_value(const Expr &e);
  /// The analyzer proves lo <= e < lo + extent (and fits(e)).
  bool proven_within(const Expr &e, const Expr &lo, const Expr &extent) const;
  /// Binds `v` for wide(): its int64 value (nullptr: none, use the narrow one).
  void bind_wide(const ir::Var &v, Value *x) { wide_vars_[v.get()].push_back(x); }
  void unbind_wide(const ir::Var &v) { wide_vars_[v.get()].pop_back(); }
  // ---- expressions ------------------------------------------------------------------

  [[noreturn]] void unsupported(const std::string &what);

  /// Evaluates one of two expressions by `cond`, lazily.
  Value *lazy(Value *cond, const std::function<Value *()> &then_v, const std::function<Value *()> &else_v);
  Value *expr(const Expr &e);
  Value *binary(const ir::Binary &b);
  Value *divide(ir::BinaryOp op, DataType t, Value *x, Value *y);
  Value *float_binary(const ir::Binary &b);
  /// `op` (a float add, subtract or multiply on `t`) marked contractible
  /// when fuse_multiply_add_ is set and `t` is float32 or float64.
  Value *contractible(Value *op, DataType t);
  Value *math1(const std::string &name, DataType t, Value *x);
  /// T.exp of a float32 or float64 value, inline (Exp.h).
  Value *exp_inline(DataType t, Value *x);
  Value *math2(const std::string &name, DataType t, Value *x, Value *y);
  Value *cast(const ir::Cast &c);
  /// The values of the float16/bfloat16 `e` when it is an integer that type
  /// holds exactly at every step (a cast of a bounded integer, integral
  /// constants, and their sums, differences and products): rounding it
  /// changes nothing. nullopt otherwise.
  std::optional<arith::IntBound> exact_integer(const Expr &e) const;
  /// The same for the cast of the integer `value` to `to`, and for `a op b`.
  std::optional<arith::IntBound> exact_integer_cast(DataType to, const Expr &value) const;
  std::optional<arith::IntBound> exact_integer_binary(ir::BinaryOp op, const Expr &a, const Expr &b) const;

  /// The bit pattern of a float value of type t, as an integer of t's width.
  Value *float_bits(Value *x, DataType t);
  Value *bits_float(Value *u64, DataType t);
  Value *intrinsic_call(const ir::Call &c);

  // ---- statements --------------------------------------------------------------------

  void stmt(const ir::Stmt &s);

  /// for (v = min; v < min + extent; ++v), counted in int64 as the interpreter does.
  void loop(const ir::For &f);
  /// Every value of the loop's variable lies within its type (min .. min +
  /// extent - 1 for all the mins and extents possible): it never wraps.
  bool counter_fits(const ir::For &f) const;
  /// The loop's body for i in [begin, end) (int64), its variable lo + i.
  void counted_loop(const ir::For &f, Value *lo, Value *begin, Value *end);
  /// Starts fn_: its entry block (the insert point), its fail block
  /// (returns 1) and the scratch the run-time checks record values in.
  void begin_function();
  /// The same loop over several cores (CodegenParallel.cpp): its body
  /// outlined into a function of an iteration range, called through
  /// tessera_jit_parallel_for.
  void parallel_loop(const ir::For &f, const analysis::CpuParallelLoop &how);
  /// Fresh storage for `buf` (its dtype's poison), allocation `id` of the run
  /// state st_.
  Value *allocate_storage(const Buf &buf, Value *elements);
  void block(const ir::Block &blk);
  /// Emits `f` as a transpose of a V x V tile in registers when it is one
  /// (CodegenTranspose.cpp: the loop pair, the run-time test, the plain loops
  /// as the other path); false, nothing emitted, when it is not.
  bool transposed_tile(const ir::For &f);
  // ---- warp-level statements (CodegenWarp.cpp) ------------------------------------
  /// A warp-level or asynchronous statement: mma.sync compiled, every one
  /// also the interpreter's code for it, called with the slots it reads
  /// (JitRuntime.h, WarpStatement) where the compiled code cannot decide.
  void warp_statement(const ir::Call &c);
  /// This lane's ldmatrix; any check that fails branches to `slow`.
  void ldmatrix(const ir::Call &c, BasicBlock *slow);
  /// This lane's mma.sync (w.mma); any check that fails branches to `slow`.
  void mma_sync(const ir::Call &c, const WarpStatement &w, BasicBlock *slow);
  /// The flat offset of the fragment of `n` elements at `l` (the
  /// interpreter's Address::offset), `ok` and-ed with its checks.
  Value *fragment_offset(const ir::Load &l, int64_t n, Value *&ok);
  /// The same with the lane variable set to `lane` (an int64 value), as the
  /// interpreter evaluates another lane's operand.
  Value *fragment_offset_of_lane(const ir::Load &l, int64_t n, const ir::Var &lane_var, Value *lane, Value *&ok);
  /// The current value of the lane variable as an int64, clamped to 0 when
  /// outside 0..31; `ok` set to whether it was inside.
  Value *lane_value(const ir::Var &lane_var, Value *&ok);
  /// A private constant i8 array, and its entry [row][column] (rows of
  /// `width`) as an int64.
  Value *constant_table(const std::string &name, const std::vector<int8_t> &values);
  Value *table_entry(Value *table, size_t size, Value *row, int64_t width, int64_t column);
  void allocate(const ir::Buffer &buf);

  const Program &p_;
  llvm::LLVMContext &ctx_;
  std::unique_ptr<llvm::Module> mod_;
  llvm::IRBuilder<> b_;
  Type *i1_, *i8_, *i16_, *i32_, *i64_, *f32_, *f64_, *ptr_;
  llvm::Function *fn_;
  Value *iv_, *fv_, *bufs_arg_, *st_;
  Value *scratch_ = nullptr;
  BasicBlock *fail_bb_ = nullptr;
  llvm::MDNode *alias_domain_;
  std::vector<llvm::MDNode *> scopes_;
  std::vector<std::pair<llvm::Instruction *, llvm::MDNode *>> accesses_;
  std::vector<JitSite> sites_;
  std::vector<std::unique_ptr<WarpStatement>> warp_;
  int num_allocs_ = 0;
  std::string block_ = "root";
  std::unordered_map<const ir::VarNode *, std::vector<Value *>> vars_;
  /// Integer variables' int64 values where they are known to fit (loop
  /// counters, iter vars), for wide().
  std::unordered_map<const ir::VarNode *, std::vector<Value *>> wide_vars_;
  /// The ranges of the enclosing loops and iter vars, the predicates of the
  /// enclosing blocks.
  arith::Analyzer ana_;
  std::unordered_map<const ir::BufferNode *, std::vector<Buf>> bufs_;
  /// The loops run over several cores (analysis::cpu_parallel_loops).
  std::unordered_map<const ir::For *, analysis::CpuParallelLoop> parallel_;
  /// CodegenOptions::fuse_multiply_add.
  bool fuse_multiply_add_ = false;
  int num_outlined_ = 0;
};

}  // namespace tessera::runtime::detail
