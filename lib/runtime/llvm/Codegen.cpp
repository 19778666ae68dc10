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
#include "Codegen.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <cstddef>
#include <functional>
#include <limits>
#include <unordered_map>

#include "../Scalar.h"
#include "tessera/runtime/LlvmJit.h"

namespace tessera::runtime::detail {
namespace {

using ir::DataType;
using ir::Expr;
using llvm::BasicBlock;
using llvm::Type;
using llvm::Value;

class Gen {
 public:
  Gen(const Program &p, llvm::LLVMContext &ctx, const std::string &name)
      : p_(p), ctx_(ctx), mod_(std::make_unique<llvm::Module>(name, ctx)), b_(ctx) {
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
  }

  GeneratedModule run() {
    BasicBlock *entry = BasicBlock::Create(ctx_, "entry", fn_);
    fail_bb_ = BasicBlock::Create(ctx_, "fail", fn_);
    b_.SetInsertPoint(fail_bb_);
    b_.CreateRet(b_.getInt32(1));
    b_.SetInsertPoint(entry);
    scratch_ = b_.CreateAlloca(i64_, b_.getInt32(2 * kMaxDims + 2), "scratch");

    // Scalar parameters and shape variables from their slots.
    for (const ScalarParam &sp : p_.scalars) bind(sp.var, load_slot(sp.var.dtype(), sp.slot, sp.is_float));
    for (const auto &[v, slot] : p_.shape_var_slots) bind(v, load_slot(v.dtype(), slot, false));
    // Parameter buffers: data (and storage) from their BufState, shapes and
    // strides from the declarations, which binding checked against the arrays.
    for (const ParamBuffer &pb : p_.buffers) {
      Value *base = b_.CreateConstGEP1_64(i8_, bufs_arg_, int64_t(pb.slot) * int64_t(sizeof(BufState)));
      Buf buf;
      buf.dtype = pb.buffer.dtype();
      buf.data = b_.CreateLoad(ptr_, b_.CreateConstGEP1_64(i8_, base, offsetof(BufState, data)), "data");
      for (const Expr &e : pb.buffer.shape()) buf.shape.push_back(to_i64(expr(e), e.dtype()));
      if (pb.buffer->strides.empty()) {
        row_major(buf);
      } else {
        for (const Expr &e : pb.buffer->strides) buf.strides.push_back(to_i64(expr(e), e.dtype()));
        buf.storage = b_.CreateLoad(i64_, b_.CreateConstGEP1_64(i8_, base, offsetof(BufState, storage)));
      }
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
    return {std::move(mod_), std::move(sites_), num_allocs_};
  }

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

  // float16 / bfloat16 conversions, inline and bit for bit support/Half.h's:
  // LLVM's fptrunc/fpext to half round to nearest even like float_to_half_bits
  // and are exact the other way; only NaNs differ (Half.h makes every NaN the
  // canonical quiet NaN of its sign on the way to float16, and keeps the
  // payload on the way back), so NaNs are selected apart.
  Value *float_to_half(Value *v) {  // float -> i16 bits
    Value *h = b_.CreateBitCast(b_.CreateFPTrunc(v, b_.getHalfTy()), i16_);
    Value *sign = b_.CreateTrunc(b_.CreateLShr(b_.CreateBitCast(v, i32_), 16), i16_);
    Value *nan = b_.CreateOr(b_.CreateAnd(sign, b_.getInt16(0x8000)), b_.getInt16(0x7e00));
    return b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, h);
  }
  Value *half_to_float(Value *h) {  // i16 bits -> float
    Value *f = b_.CreateFPExt(b_.CreateBitCast(h, b_.getHalfTy()), f32_);
    Value *x = b_.CreateZExt(h, i32_);
    Value *is_nan = b_.CreateICmpUGT(b_.CreateAnd(x, b_.getInt32(0x7fff)), b_.getInt32(0x7c00));
    Value *bits = b_.CreateOr(b_.CreateOr(b_.CreateShl(b_.CreateAnd(x, b_.getInt32(0x8000)), 16), b_.getInt32(0x7f800000)),
                              b_.CreateShl(b_.CreateAnd(x, b_.getInt32(0x3ff)), 13));
    return b_.CreateSelect(is_nan, b_.CreateBitCast(bits, f32_), f);
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
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(ok); c && c->isOne()) return;
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

  /// The address of an element, every index checked (the interpreter's Indexer).
  Value *address(const ir::Buffer &b, const std::vector<Expr> &indices, bool store) {
    Buf &buf = buffer(b);
    std::vector<Value *> idx;
    for (const Expr &e : indices) idx.push_back(to_i64(expr(e), e.dtype()));
    Value *ok = b_.getTrue(), *off = b_.getInt64(0);
    for (size_t d = 0; d < idx.size(); ++d) {
      ok = b_.CreateAnd(ok, b_.CreateICmpULT(idx[d], buf.shape[d]));
      off = b_.CreateAdd(off, b_.CreateMul(idx[d], buf.strides[d]));
    }
    if (buf.storage) ok = b_.CreateAnd(ok, b_.CreateICmpULT(off, buf.storage));
    JitSite s;
    s.kind = JitSite::Kind::OutOfBounds;
    s.store = store;
    s.what = b.name();
    s.ndim = int(idx.size());
    std::vector<Value *> vals = idx;
    vals.insert(vals.end(), buf.shape.begin(), buf.shape.end());
    check(ok, site(std::move(s)), vals);
    return b_.CreateGEP(storage_type(b.dtype()), buf.data, off);
  }
  Type *storage_type(DataType t) {
    if (t.is_bool()) return i8_;
    if (t.is_float() && t.bits() == 16) return i16_;
    return ltype(t);
  }
  void note_access(llvm::Instruction *inst, const ir::Buffer &b) { accesses_.emplace_back(inst, buffer(b).scope); }

  // ---- expressions ------------------------------------------------------------------

  [[noreturn]] void unsupported(const std::string &what) {
    throw JitUnsupportedError("the LLVM JIT cannot compile " + what + " in block '" + block_ + "' of function '" +
                              p_.func.name() + "' (the interpreter can run it)");
  }

  /// Evaluates one of two expressions by `cond`, lazily.
  Value *lazy(Value *cond, const std::function<Value *()> &then_v, const std::function<Value *()> &else_v) {
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(cond)) return c->isOne() ? then_v() : else_v();
    BasicBlock *tb = BasicBlock::Create(ctx_, "then", fn_), *eb = BasicBlock::Create(ctx_, "else", fn_),
               *join = BasicBlock::Create(ctx_, "join", fn_);
    b_.CreateCondBr(cond, tb, eb);
    b_.SetInsertPoint(tb);
    Value *tv = then_v();
    BasicBlock *tend = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(eb);
    Value *ev = else_v();
    BasicBlock *eend = b_.GetInsertBlock();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    llvm::PHINode *phi = b_.CreatePHI(tv->getType(), 2);
    phi->addIncoming(tv, tend);
    phi->addIncoming(ev, eend);
    return phi;
  }

  Value *expr(const Expr &e) {
    DataType t = e.dtype();
    if (t.lanes() != 1) unsupported("the vector type " + t.str());
    switch (e.kind()) {
      case ir::NodeKind::IntImm: return llvm::ConstantInt::get(ltype(t), uint64_t(e.as<ir::IntImm>()->value), t.is_int());
      case ir::NodeKind::FloatImm: return llvm::ConstantFP::get(ltype(t), round_float(t, e.as<ir::FloatImm>()->value));
      case ir::NodeKind::Var: return var(e.as<ir::VarNode>());
      case ir::NodeKind::Binary: return binary(*e.as<ir::Binary>());
      case ir::NodeKind::Unary: {
        const auto *u = e.as<ir::Unary>();
        Value *x = expr(u->a);
        if (t.is_float()) return fin(b_.CreateFNeg(x), t);
        switch (u->op) {
          case ir::UnaryOp::Not: return b_.CreateICmpEQ(x, llvm::ConstantInt::get(x->getType(), 0));
          case ir::UnaryOp::BitNot: return cast_int(b_.CreateNot(x), u->a.dtype(), t);
          case ir::UnaryOp::Neg: return cast_int(b_.CreateNeg(x), u->a.dtype(), t);
        }
        break;
      }
      case ir::NodeKind::Select: {
        const auto *s = e.as<ir::Select>();
        return lazy(to_bool(expr(s->cond)), [&] { return expr(s->true_value); }, [&] { return expr(s->false_value); });
      }
      case ir::NodeKind::Cast: return cast(*e.as<ir::Cast>());
      case ir::NodeKind::Load: {
        const auto *l = e.as<ir::Load>();
        Value *addr = address(l->buffer, l->indices, false);
        auto *ld = b_.CreateLoad(storage_type(t), addr);
        note_access(ld, l->buffer);
        if (t.is_bool()) return to_bool(ld);
        if (t.is_float16()) return half_to_float(ld);
        if (t.is_bfloat16()) return bf16_to_float(ld);
        return ld;
      }
      case ir::NodeKind::Call: return intrinsic_call(*e.as<ir::Call>());
      case ir::NodeKind::Let: {
        const auto *l = e.as<ir::Let>();
        bind(l->var, expr(l->value));
        Value *r = expr(l->body);
        unbind(l->var);
        return r;
      }
      default: break;
    }
    unsupported(std::string(ir::node_kind_name(e.kind())) + " of type " + t.str());
  }

  Value *binary(const ir::Binary &b) {
    using ir::BinaryOp;
    DataType t = b.dtype, ot = b.a.dtype();
    if (ot.is_float()) return float_binary(b);
    if (b.op == BinaryOp::And || b.op == BinaryOp::Or) {
      Value *x = to_bool(expr(b.a));
      if (b.op == BinaryOp::And) return lazy(x, [&] { return to_bool(expr(b.b)); }, [&] { return b_.getFalse(); });
      return lazy(x, [&] { return b_.getTrue(); }, [&] { return to_bool(expr(b.b)); });
    }
    Value *x = expr(b.a), *y_own = expr(b.b);
    Value *y = y_own->getType() == x->getType() ? y_own : cast_int(y_own, b.b.dtype(), ot);
    bool sgn = ot.is_int();
    switch (b.op) {
      case BinaryOp::Add: return t.is_bool() ? b_.CreateOr(x, y) : b_.CreateAdd(x, y);
      case BinaryOp::Sub: return t.is_bool() ? b_.CreateXor(x, y) : b_.CreateSub(x, y);
      case BinaryOp::Mul: return t.is_bool() ? b_.CreateAnd(x, y) : b_.CreateMul(x, y);
      case BinaryOp::BitAnd: return b_.CreateAnd(x, y);
      case BinaryOp::BitOr: return b_.CreateOr(x, y);
      case BinaryOp::BitXor: return b_.CreateXor(x, y);
      case BinaryOp::Min: return sgn ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, y)
                                     : b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, x, y);
      case BinaryOp::Max: return sgn ? b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, y)
                                     : b_.CreateBinaryIntrinsic(llvm::Intrinsic::umax, x, y);
      case BinaryOp::EQ: return b_.CreateICmpEQ(x, y);
      case BinaryOp::NE: return b_.CreateICmpNE(x, y);
      case BinaryOp::LT: return sgn ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y);
      case BinaryOp::LE: return sgn ? b_.CreateICmpSLE(x, y) : b_.CreateICmpULE(x, y);
      case BinaryOp::GT: return sgn ? b_.CreateICmpSGT(x, y) : b_.CreateICmpUGT(x, y);
      case BinaryOp::GE: return sgn ? b_.CreateICmpSGE(x, y) : b_.CreateICmpUGE(x, y);
      case BinaryOp::Div:
      case BinaryOp::FloorDiv:
      case BinaryOp::Mod:
      case BinaryOp::FloorMod: return divide(b.op, ot, x, y);
      case BinaryOp::Shl:
      case BinaryOp::Shr: {
        if (t.is_bool()) unsupported("a shift of bool");
        bool left = b.op == BinaryOp::Shl;
        JitSite s;
        s.kind = JitSite::Kind::BadShift;
        s.what = left ? "shift_left" : "shift_right";
        s.type = t;
        Value *y64 = to_i64(y_own, b.b.dtype());  // the amount as given, before any narrowing
        Value *ok = b_.CreateAnd(b_.CreateICmpSGE(y64, b_.getInt64(0)), b_.CreateICmpSLT(y64, b_.getInt64(t.bits())));
        check(ok, site(std::move(s)), {y64});
        if (left) return b_.CreateShl(x, y);
        return sgn ? b_.CreateAShr(x, y) : b_.CreateLShr(x, y);
      }
      default: break;
    }
    unsupported(std::string("operator ") + ir::binary_op_name(b.op) + " on " + ot.str());
  }

  Value *divide(ir::BinaryOp op, DataType t, Value *x, Value *y) {
    using ir::BinaryOp;
    bool is_div = op == BinaryOp::Div || op == BinaryOp::FloorDiv;
    bool floor = op == BinaryOp::FloorDiv || op == BinaryOp::FloorMod;
    JitSite s;
    s.kind = JitSite::Kind::DivZero;
    s.what = is_div ? (floor ? "floordiv" : "truncdiv") : (floor ? "floormod" : "truncmod");
    Value *zero = llvm::ConstantInt::get(x->getType(), 0);
    check(b_.CreateICmpNE(y, zero), site(std::move(s)), {to_i64(x, t)});
    if (!t.is_int()) return is_div ? b_.CreateUDiv(x, y) : b_.CreateURem(x, y);
    // Signed: y == -1 is special (INT_MIN / -1 overflows): the quotient is -x (wrapped), the remainder 0.
    Value *m1 = b_.CreateICmpEQ(y, llvm::ConstantInt::get(x->getType(), -1, true));
    Value *ys = b_.CreateSelect(m1, llvm::ConstantInt::get(x->getType(), 1), y);
    Value *q = b_.CreateSDiv(x, ys), *r = b_.CreateSRem(x, ys);
    Value *adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                 b_.CreateICmpNE(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(ys, zero)));
    Value *v;
    if (is_div) {
      if (floor) q = b_.CreateSelect(adjust, b_.CreateSub(q, llvm::ConstantInt::get(x->getType(), 1)), q);
      v = b_.CreateSelect(m1, b_.CreateNeg(x), q);
    } else {
      if (floor) r = b_.CreateSelect(adjust, b_.CreateAdd(r, ys), r);
      v = b_.CreateSelect(m1, zero, r);
    }
    return v;
  }

  Value *float_binary(const ir::Binary &b) {
    using ir::BinaryOp;
    DataType t = b.a.dtype();
    Value *x = expr(b.a), *y = expr(b.b);
    switch (b.op) {
      case BinaryOp::EQ: return b_.CreateFCmpOEQ(x, y);
      case BinaryOp::NE: return b_.CreateFCmpUNE(x, y);
      case BinaryOp::LT: return b_.CreateFCmpOLT(x, y);
      case BinaryOp::LE: return b_.CreateFCmpOLE(x, y);
      case BinaryOp::GT: return b_.CreateFCmpOGT(x, y);
      case BinaryOp::GE: return b_.CreateFCmpOGE(x, y);
      case BinaryOp::Add: return fin(b_.CreateFAdd(x, y), t);
      case BinaryOp::Sub: return fin(b_.CreateFSub(x, y), t);
      case BinaryOp::Mul: return fin(b_.CreateFMul(x, y), t);
      case BinaryOp::Div: return fin(b_.CreateFDiv(x, y), t);
      case BinaryOp::Mod: return fin(math2("fmod", t, x, y), t);
      case BinaryOp::FloorDiv: return fin(intrinsic(llvm::Intrinsic::floor, fin(b_.CreateFDiv(x, y), t)), t);
      case BinaryOp::FloorMod: {
        Value *fl = intrinsic(llvm::Intrinsic::floor, fin(b_.CreateFDiv(x, y), t));
        return fin(b_.CreateFSub(x, fin(b_.CreateFMul(fl, y), t)), t);
      }
      case BinaryOp::Min:
      case BinaryOp::Max: {
        // The interpreter's (p != p || q != q) ? p + q : (q > p ? q : p) (NaN propagates), written as
        // q > p ? q : (unordered ? p + q : p). The same value; LLVM 19.1.7's InstCombine miscompiles
        // the first form when p is 0 and q is fabs(x) (it folds it to `x > 0 ? |x| : 0`).
        Value *nan_or_p = b_.CreateSelect(b_.CreateFCmpUNO(x, y), b_.CreateFAdd(x, y), x);
        Value *q_wins = b.op == BinaryOp::Min ? b_.CreateFCmpOLT(y, x) : b_.CreateFCmpOGT(y, x);
        return fin(b_.CreateSelect(q_wins, y, nan_or_p), t);
      }
      default: break;
    }
    unsupported(std::string("operator ") + ir::binary_op_name(b.op) + " on " + t.str());
  }

  Value *math1(const std::string &name, DataType t, Value *x) {
    bool d = float_kind(t) == FK::F64;
    return call("tessera_jit_" + name + (d ? "_f64" : "_f32"), d ? f64_ : f32_, {x});
  }
  Value *math2(const std::string &name, DataType t, Value *x, Value *y) {
    bool d = float_kind(t) == FK::F64;
    return call("tessera_jit_" + name + (d ? "_f64" : "_f32"), d ? f64_ : f32_, {x, y});
  }

  Value *cast(const ir::Cast &c) {
    DataType from = c.value.dtype(), to = c.dtype;
    Value *x = expr(c.value);
    if (from == to) return x;
    if (!from.is_float() && !to.is_float()) return cast_int(x, from, to);
    if (!from.is_float()) {
      Type *ft = ltype(to);
      return fin(from.is_int() ? b_.CreateSIToFP(x, ft) : b_.CreateUIToFP(x, ft), to);
    }
    if (!to.is_float()) {
      if (to.is_bool()) return b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
      // Truncation toward zero, saturating, NaN -> 0: what the interpreter (and PTX cvt.rzi) does.
      llvm::Intrinsic::ID id = to.is_int() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
      return b_.CreateIntrinsic(id, {ltype(to), x->getType()}, {x});
    }
    // Float to float: through the computation types, rounded once more to the target.
    FK fk = float_kind(from), tk = float_kind(to);
    if (tk == FK::F64) return fk == FK::F64 ? x : b_.CreateFPExt(x, f64_);
    if (fk == FK::F64) x = b_.CreateFPTrunc(x, f32_);
    return fin(x, to);
  }

  /// The bit pattern of a float value of type t, as an integer of t's width.
  Value *float_bits(Value *x, DataType t) {
    switch (float_kind(t)) {
      case FK::F16: return float_to_half(x);
      case FK::BF16: return float_to_bf16(x);
      case FK::F32: return b_.CreateBitCast(x, i32_);
      default: return b_.CreateBitCast(x, i64_);
    }
  }
  Value *bits_float(Value *u64, DataType t) {
    switch (float_kind(t)) {
      case FK::F16: return half_to_float(b_.CreateTrunc(u64, i16_));
      case FK::BF16: return bf16_to_float(b_.CreateTrunc(u64, i16_));
      case FK::F32: return b_.CreateBitCast(b_.CreateTrunc(u64, i32_), f32_);
      default: return b_.CreateBitCast(u64, f64_);
    }
  }

  Value *intrinsic_call(const ir::Call &c) {
    using ir::Intrinsic;
    DataType t = c.dtype;
    if (ir::is_async_or_warp_statement(c.op) || c.op == Intrinsic::ShflXor)
      unsupported(std::string("T.") + ir::intrinsic_name(c.op) + " (warp-level and asynchronous operations)");
    switch (c.op) {
      case Intrinsic::IfThenElse:
        return lazy(to_bool(expr(c.args[0])), [&] { return expr(c.args[1]); }, [&] { return expr(c.args[2]); });
      case Intrinsic::MaxValue:
      case Intrinsic::MinValue: {
        bool max = c.op == Intrinsic::MaxValue;
        if (t.is_float()) {
          return llvm::ConstantFP::get(ltype(t), float_extreme(t, max));
        }
        if (t.is_bool()) return max ? b_.getTrue() : b_.getFalse();
        unsigned bits = unsigned(t.bits());
        llvm::APInt v = t.is_uint() ? (max ? llvm::APInt::getMaxValue(bits) : llvm::APInt::getMinValue(bits))
                                    : (max ? llvm::APInt::getSignedMaxValue(bits) : llvm::APInt::getSignedMinValue(bits));
        return llvm::ConstantInt::get(ctx_, v);
      }
      case Intrinsic::SyncThreads: return llvm::ConstantInt::get(ltype(t), 0);
      case Intrinsic::Assume: {
        JitSite s;
        s.kind = JitSite::Kind::Assume;
        check(to_bool(expr(c.args[0])), site(std::move(s)), {});
        return llvm::ConstantInt::get(ltype(t), 1);
      }
      case Intrinsic::IsNan:
      case Intrinsic::IsInf:
      case Intrinsic::IsFinite: {
        Value *x = expr(c.args[0]);
        Value *r;
        if (!c.args[0].dtype().is_float()) {
          r = c.op == Intrinsic::IsFinite ? b_.getTrue() : b_.getFalse();
        } else if (c.op == Intrinsic::IsNan) {
          r = b_.CreateFCmpUNO(x, x);
        } else {
          Value *a = intrinsic(llvm::Intrinsic::fabs, x), *inf = llvm::ConstantFP::getInfinity(x->getType());
          r = c.op == Intrinsic::IsInf ? b_.CreateFCmpOEQ(a, inf) : b_.CreateFCmpOLT(a, inf);
        }
        return t.is_bool() ? r : b_.CreateZExt(r, ltype(t));
      }
      case Intrinsic::Abs:
        if (!t.is_float()) {
          Value *x = expr(c.args[0]);
          if (!t.is_int()) return x;
          return b_.CreateSelect(b_.CreateICmpSLT(x, llvm::ConstantInt::get(x->getType(), 0)), b_.CreateNeg(x), x);
        }
        return fin(intrinsic(llvm::Intrinsic::fabs, expr(c.args[0])), t);
      case Intrinsic::Reinterpret: {
        DataType from = c.args[0].dtype();
        Value *x = expr(c.args[0]);
        if (from.is_float()) {
          Value *bits = float_bits(x, from);  // zero-extended pattern
          if (!t.is_float()) return cast_int(bits, DataType::uint(bits->getType()->getIntegerBitWidth()), t);
          return bits_float(b_.CreateZExt(bits, i64_), t);
        }
        if (!t.is_float()) return cast_int(x, from, t);
        return bits_float(to_i64(x, from), t);
      }
      default: break;
    }
    if (!t.is_float()) unsupported(std::string("T.") + ir::intrinsic_name(c.op) + " of type " + t.str());
    Value *x = expr(c.args[0]);
    switch (c.op) {
      case Intrinsic::Sqrt: return fin(intrinsic(llvm::Intrinsic::sqrt, x), t);
      case Intrinsic::Floor: return fin(intrinsic(llvm::Intrinsic::floor, x), t);
      case Intrinsic::Ceil: return fin(intrinsic(llvm::Intrinsic::ceil, x), t);
      case Intrinsic::Trunc: return fin(intrinsic(llvm::Intrinsic::trunc, x), t);
      case Intrinsic::Pow: return fin(math2("pow", t, x, expr(c.args[1])), t);
#define TESSERA_MATH(Name, name) \
  case Intrinsic::Name: return fin(math1(name, t, x), t);
      TESSERA_MATH(Exp, "exp")
      TESSERA_MATH(Exp2, "exp2")
      TESSERA_MATH(Exp10, "exp10")
      TESSERA_MATH(Log, "log")
      TESSERA_MATH(Log2, "log2")
      TESSERA_MATH(Log10, "log10")
      TESSERA_MATH(Log1p, "log1p")
      TESSERA_MATH(Rsqrt, "rsqrt")
      TESSERA_MATH(Sigmoid, "sigmoid")
      TESSERA_MATH(Tanh, "tanh")
      TESSERA_MATH(Sin, "sin")
      TESSERA_MATH(Cos, "cos")
      TESSERA_MATH(Erf, "erf")
      TESSERA_MATH(Round, "round")
      TESSERA_MATH(NearbyInt, "nearbyint")
      TESSERA_MATH(RoundToTf32, "round_to_tf32")
#undef TESSERA_MATH
      default: break;
    }
    unsupported(std::string("T.") + ir::intrinsic_name(c.op) + " of type " + t.str());
  }

  // ---- statements --------------------------------------------------------------------

  void stmt(const ir::Stmt &s) {
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
        bind(l->var, expr(l->value));
        stmt(l->body);
        unbind(l->var);
        return;
      }
      case ir::NodeKind::Evaluate: {
        const auto *e = s.as<ir::Evaluate>();
        if (const auto *c = e->value.as<ir::Call>(); c && ir::is_async_or_warp_statement(c->op))
          unsupported(std::string("T.") + ir::intrinsic_name(c->op) + " (warp-level and asynchronous operations)");
        (void)expr(e->value);
        return;
      }
      case ir::NodeKind::Block: return block(*s.as<ir::Block>());
      default: break;
    }
    unsupported(std::string("statement ") + ir::node_kind_name(s.kind()));
  }

  /// for (v = min; v < min + extent; ++v), counted in int64 as the interpreter does.
  void loop(const ir::For &f) {
    DataType vt = f.loop_var.dtype();
    Value *lo = to_i64(expr(f.min), f.min.dtype());
    Value *n = to_i64(expr(f.extent), f.extent.dtype());
    BasicBlock *pre = b_.GetInsertBlock();
    BasicBlock *body = BasicBlock::Create(ctx_, "for." + f.loop_var.name(), fn_);
    BasicBlock *exit = BasicBlock::Create(ctx_, "for.end", fn_);
    b_.CreateCondBr(b_.CreateICmpSGT(n, b_.getInt64(0)), body, exit);
    b_.SetInsertPoint(body);
    llvm::PHINode *i = b_.CreatePHI(i64_, 2, "i");
    i->addIncoming(b_.getInt64(0), pre);
    Value *v = b_.CreateAdd(lo, i);
    bind(f.loop_var, cast_int(v, DataType::int64(), vt));
    stmt(f.body);
    unbind(f.loop_var);
    Value *next = b_.CreateAdd(i, b_.getInt64(1), "", /*HasNUW=*/true, /*HasNSW=*/true);
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, n), body, exit);
    b_.SetInsertPoint(exit);
  }

  void block(const ir::Block &blk) {
    std::string outer = block_;
    block_ = blk.name;
    // Bindings refer to the enclosing scope.
    std::vector<Value *> values;
    for (size_t k = 0; k < blk.iter_vars.size(); ++k)
      values.push_back(cast_int(expr(blk.bindings[k]), blk.bindings[k].dtype(), blk.iter_vars[k].var.dtype()));
    for (size_t k = 0; k < blk.iter_vars.size(); ++k) bind(blk.iter_vars[k].var, values[k]);
    BasicBlock *end = nullptr;
    if (blk.predicate.defined() && !ir::is_const_int(blk.predicate, 1)) {
      Value *c = to_bool(expr(blk.predicate));
      BasicBlock *run = BasicBlock::Create(ctx_, "block." + blk.name, fn_);
      end = BasicBlock::Create(ctx_, "block.end", fn_);
      b_.CreateCondBr(c, run, end);
      b_.SetInsertPoint(run);
    }
    Value *first = b_.getTrue();
    for (size_t k = 0; k < blk.iter_vars.size(); ++k) {
      const ir::IterVar &iv = blk.iter_vars[k];
      Value *v = to_i64(values[k], iv.var.dtype());
      Value *lo = to_i64(expr(iv.dom.min), iv.dom.min.dtype());
      Value *n = to_i64(expr(iv.dom.extent), iv.dom.extent.dtype());
      JitSite s;
      s.kind = JitSite::Kind::Domain;
      s.what = iv.var.name();
      check(b_.CreateAnd(b_.CreateICmpSGE(v, lo), b_.CreateICmpSLT(v, b_.CreateAdd(lo, n))), site(std::move(s)),
            {v, lo, n});
      if (iv.kind == ir::IterKind::Reduce) first = b_.CreateAnd(first, b_.CreateICmpEQ(v, lo));
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
    for (const ir::IterVar &iv : blk.iter_vars) unbind(iv.var);
    if (end) {
      b_.CreateBr(end);
      b_.SetInsertPoint(end);
    }
    block_ = outer;
  }

  void allocate(const ir::Buffer &buf) {
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
    PoisonKind poison = PoisonKind::Int;
    if (buf.dtype().is_float()) {
      switch (float_kind(buf.dtype())) {
        case FK::F16: poison = PoisonKind::F16; break;
        case FK::BF16: poison = PoisonKind::BF16; break;
        case FK::F32: poison = PoisonKind::F32; break;
        default: poison = PoisonKind::F64;
      }
    }
    Value *bytes = b_.CreateMul(storage, b_.getInt64(buf.dtype().bytes()));
    a.data = call("tessera_jit_alloc", ptr_, {st_, b_.getInt32(num_allocs_++), bytes, b_.getInt32(int32_t(poison))},
                  /*pure=*/false);
    a.scope = new_scope(buf.name());
    bufs_[buf.get()].push_back(a);
  }

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
  int num_allocs_ = 0;
  std::string block_ = "root";
  std::unordered_map<const ir::VarNode *, std::vector<Value *>> vars_;
  std::unordered_map<const ir::BufferNode *, std::vector<Buf>> bufs_;
};

}  // namespace

GeneratedModule generate_module(const Program &p, llvm::LLVMContext &ctx, const std::string &name) {
  return Gen(p, ctx, name).run();
}

}  // namespace tessera::runtime::detail
