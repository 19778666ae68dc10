//===- CodegenExpr.cpp - Expressions to LLVM IR ---------------------------===//
//
// Gen's expressions (Gen.h): integer and float arithmetic rounded as the
// interpreter rounds, casts, intrinsics, loads, conditional operators. A
// float16/bfloat16 step whose result that type holds exactly (a max or min,
// small integers) is not rounded: rounding would change nothing.
//
//===----------------------------------------------------------------------===//
#include "Gen.h"

#include <algorithm>
#include <cmath>

#include "../Exp.h"

namespace tessera::runtime::detail {

[[noreturn]] void Gen::unsupported(const std::string &what) {
  throw JitUnsupportedError("the LLVM JIT cannot compile " + what + " in block '" + block_ + "' of function '" +
                            p_.func.name() + "' (the interpreter can run it)");
}

/// Evaluates one of two expressions by `cond`, lazily.
Value *Gen::lazy(Value *cond, const std::function<Value *()> &then_v, const std::function<Value *()> &else_v) {
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

Value *Gen::expr(const Expr &e) {
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

Value *Gen::binary(const ir::Binary &b) {
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

Value *Gen::divide(ir::BinaryOp op, DataType t, Value *x, Value *y) {
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

namespace {

/// The largest integer magnitude below which every integer is a float16
/// (11 significant bits) or bfloat16 (8) value.
int64_t exact_integer_limit(DataType t) { return t.is_float16() ? 2048 : 256; }

/// [lo, hi] when every integer in it is a value of float type `t`.
std::optional<arith::IntBound> exact_in(DataType t, int64_t lo, int64_t hi) {
  const int64_t limit = exact_integer_limit(t);
  if (lo < -limit || hi > limit) return std::nullopt;
  return arith::IntBound{lo, hi};
}

}  // namespace

std::optional<arith::IntBound> Gen::exact_integer(const Expr &e) const {
  const DataType t = e.dtype();
  if (!(t.is_float16() || t.is_bfloat16()) || t.lanes() != 1) return std::nullopt;
  if (const auto *f = e.as<ir::FloatImm>()) {
    const double v = f->value;
    if (v != std::floor(v) || std::abs(v) > double(exact_integer_limit(t))) return std::nullopt;
    return arith::IntBound{int64_t(v), int64_t(v)};
  }
  if (const auto *c = e.as<ir::Cast>()) return exact_integer_cast(t, c->value);
  if (const auto *b = e.as<ir::Binary>()) return exact_integer_binary(b->op, b->a, b->b);
  return std::nullopt;
}

std::optional<arith::IntBound> Gen::exact_integer_cast(DataType to, const Expr &value) const {
  const DataType from = value.dtype();
  if (from.is_float() || from.is_bool() || from.lanes() != 1) return std::nullopt;
  // The values the integer takes as computed: a signed one without overflow
  // (computed_bound), an 8-bit one, or a mask of a small constant.
  if (auto b = computed_bound(value)) return exact_in(to, b->min, b->max);
  if (from.bits() <= 8) return exact_in(to, from.is_int() ? -128 : 0, from.is_int() ? 127 : 255);
  if (const auto *m = value.as<ir::Binary>(); m && m->op == ir::BinaryOp::BitAnd)
    for (const Expr &side : {m->a, m->b})
      if (auto k = ir::as_const_int(side); k && *k >= 0) return exact_in(to, 0, *k);
  return std::nullopt;
}

std::optional<arith::IntBound> Gen::exact_integer_binary(ir::BinaryOp op, const Expr &a, const Expr &b) const {
  if (op != ir::BinaryOp::Add && op != ir::BinaryOp::Sub && op != ir::BinaryOp::Mul) return std::nullopt;
  auto x = exact_integer(a);
  if (!x) return std::nullopt;
  auto y = exact_integer(b);
  if (!y) return std::nullopt;
  int64_t lo, hi;
  if (op == ir::BinaryOp::Add) {
    lo = x->min + y->min, hi = x->max + y->max;
  } else if (op == ir::BinaryOp::Sub) {
    lo = x->min - y->max, hi = x->max - y->min;
  } else {
    const int64_t p[] = {x->min * y->min, x->min * y->max, x->max * y->min, x->max * y->max};
    lo = *std::min_element(p, p + 4), hi = *std::max_element(p, p + 4);
  }
  return exact_in(a.dtype(), lo, hi);
}

Value *Gen::contractible(Value *op, DataType t) {
  // float16/bfloat16 are rounded after each operation (fin), which no fused
  // operation may skip; only the wide types contract.
  auto *inst = llvm::dyn_cast<llvm::Instruction>(op);
  if (fuse_multiply_add_ && inst && t.is_float() && !t.is_bfloat16() && t.bits() >= 32) {
    llvm::FastMathFlags flags = inst->getFastMathFlags();
    flags.setAllowContract(true);
    inst->setFastMathFlags(flags);
  }
  return op;
}

Value *Gen::float_binary(const ir::Binary &b) {
  using ir::BinaryOp;
  DataType t = b.a.dtype();
  Value *x = expr(b.a), *y = expr(b.b);
  // float16/bfloat16 integers small enough to be exact (a dequantised
  // weight, `T.Cast("float16", q & 15) - T.float16(8)`): the sum, difference
  // or product is exact too, and rounding it would change nothing.
  if (exact_integer_binary(b.op, b.a, b.b)) {
    if (b.op == BinaryOp::Add) return b_.CreateFAdd(x, y);
    return b.op == BinaryOp::Sub ? b_.CreateFSub(x, y) : b_.CreateFMul(x, y);
  }
  switch (b.op) {
    case BinaryOp::EQ: return b_.CreateFCmpOEQ(x, y);
    case BinaryOp::NE: return b_.CreateFCmpUNE(x, y);
    case BinaryOp::LT: return b_.CreateFCmpOLT(x, y);
    case BinaryOp::LE: return b_.CreateFCmpOLE(x, y);
    case BinaryOp::GT: return b_.CreateFCmpOGT(x, y);
    case BinaryOp::GE: return b_.CreateFCmpOGE(x, y);
    case BinaryOp::Add: return fin(contractible(b_.CreateFAdd(x, y), t), t);
    case BinaryOp::Sub: return fin(contractible(b_.CreateFSub(x, y), t), t);
    case BinaryOp::Mul: return fin(contractible(b_.CreateFMul(x, y), t), t);
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
      // Not rounded to float16/bfloat16: the result is one of the operands,
      // which are, or a NaN (whose payload the JIT leaves open; a store
      // makes it the canonical NaN of its sign all the same). Rounding would
      // put two conversions on a max-reduction's loop-carried chain.
      return b_.CreateSelect(q_wins, y, nan_or_p);
    }
    default: break;
  }
  unsupported(std::string("operator ") + ir::binary_op_name(b.op) + " on " + t.str());
}

namespace {

/// detail::exp_with's operations as LLVM IR (Exp.h): the interpreter's bits,
/// inline, so that the loop around an exp vectorizes.
struct IrExpOps {
  using F = Value *;
  llvm::IRBuilder<> &b;
  Type *f64, *i64;
  Value *c(double v) const { return llvm::ConstantFP::get(f64, v); }
  Value *mul(Value *x, Value *y) const { return b.CreateFMul(x, y); }
  Value *fma(Value *x, Value *y, Value *z) const { return b.CreateIntrinsic(llvm::Intrinsic::fma, {f64}, {x, y, z}); }
  Value *add_f(Value *x, Value *y) const { return b.CreateFAdd(x, y); }
  Value *sub_f(Value *x, Value *y) const { return b.CreateFSub(x, y); }
  Value *to_int(Value *x) const { return b.CreateFPToSI(x, i64); }
  Value *shr1(Value *k) const { return b.CreateAShr(k, 1); }
  Value *sub(Value *x, Value *y) const { return b.CreateSub(x, y); }
  Value *pow2(Value *k) const {
    return b.CreateBitCast(b.CreateShl(b.CreateAdd(k, llvm::ConstantInt::get(i64, 1023)), 52), f64);
  }
  Value *select_gt(Value *x, double bound, Value *t, Value *e) const {
    return b.CreateSelect(b.CreateFCmpOGT(x, c(bound)), t, e);
  }
  Value *select_lt(Value *x, double bound, Value *t, Value *e) const {
    return b.CreateSelect(b.CreateFCmpOLT(x, c(bound)), t, e);
  }
  // A NaN's integer conversion above is poison; the select never picks it.
  Value *select_nan(Value *x, Value *t, Value *e) const { return b.CreateSelect(b.CreateFCmpUNO(x, x), t, e); }
};

}  // namespace

Value *Gen::exp_inline(DataType t, Value *x) {
  const bool d = float_kind(t) == FK::F64;
  IrExpOps o{b_, f64_, i64_};
  Value *y = detail::exp_with(o, d ? x : b_.CreateFPExt(x, f64_));
  return d ? y : b_.CreateFPTrunc(y, f32_);
}

Value *Gen::math1(const std::string &name, DataType t, Value *x) {
  bool d = float_kind(t) == FK::F64;
  return call("tessera_jit_" + name + (d ? "_f64" : "_f32"), d ? f64_ : f32_, {x});
}

Value *Gen::math2(const std::string &name, DataType t, Value *x, Value *y) {
  bool d = float_kind(t) == FK::F64;
  return call("tessera_jit_" + name + (d ? "_f64" : "_f32"), d ? f64_ : f32_, {x, y});
}

Value *Gen::cast(const ir::Cast &c) {
  DataType from = c.value.dtype(), to = c.dtype;
  Value *x = expr(c.value);
  if (from == to) return x;
  if (!from.is_float() && !to.is_float()) return cast_int(x, from, to);
  if (!from.is_float()) {
    Type *ft = ltype(to);
    Value *f = from.is_int() ? b_.CreateSIToFP(x, ft) : b_.CreateUIToFP(x, ft);
    // An integer float16/bfloat16 holds exactly needs no rounding.
    return exact_integer_cast(to, c.value) ? f : fin(f, to);
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
Value *Gen::float_bits(Value *x, DataType t) {
  switch (float_kind(t)) {
    case FK::F16: return float_to_half_canonical(x);
    case FK::BF16: return float_to_bf16(x);
    case FK::F32: return b_.CreateBitCast(x, i32_);
    default: return b_.CreateBitCast(x, i64_);
  }
}

Value *Gen::bits_float(Value *u64, DataType t) {
  switch (float_kind(t)) {
    case FK::F16: return half_to_float(b_.CreateTrunc(u64, i16_));
    case FK::BF16: return bf16_to_float(b_.CreateTrunc(u64, i16_));
    case FK::F32: return b_.CreateBitCast(b_.CreateTrunc(u64, i32_), f32_);
    default: return b_.CreateBitCast(u64, f64_);
  }
}

Value *Gen::intrinsic_call(const ir::Call &c) {
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
    case Intrinsic::Atan2: return fin(math2("atan2", t, x, expr(c.args[1])), t);
    case Intrinsic::Hypot: return fin(math2("hypot", t, x, expr(c.args[1])), t);
    case Intrinsic::Exp: return fin(exp_inline(t, x), t);
#define TESSERA_MATH(Name, name) \
case Intrinsic::Name: return fin(math1(name, t, x), t);
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
    TESSERA_MATH(Tan, "tan")
    TESSERA_MATH(Asin, "asin")
    TESSERA_MATH(Acos, "acos")
    TESSERA_MATH(Atan, "atan")
    TESSERA_MATH(Sinh, "sinh")
    TESSERA_MATH(Cosh, "cosh")
    TESSERA_MATH(Asinh, "asinh")
    TESSERA_MATH(Acosh, "acosh")
    TESSERA_MATH(Atanh, "atanh")
#undef TESSERA_MATH
    default: break;
  }
  unsupported(std::string("T.") + ir::intrinsic_name(c.op) + " of type " + t.str());
}

}  // namespace tessera::runtime::detail
