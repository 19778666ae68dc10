//===- Expr.cpp - Expression node factories --------------------------------===//
#include "tessera/ir/Expr.h"
#include "tessera/ir/Tma.h"

#include <cmath>

#include "tessera/support/Error.h"
#include "tessera/support/Half.h"

namespace tessera::ir {

const char *node_kind_name(NodeKind kind) {
  switch (kind) {
#define TESSERA_EXPR_NODE(Name) \
  case NodeKind::Name: return #Name;
#define TESSERA_STMT_NODE(Name) \
  case NodeKind::Name: return #Name;
#include "tessera/ir/NodeKinds.def"
  }
  return "?";
}

Var Var::from(const Expr &e) {
  TESSERA_ICHECK(e.is<VarNode>()) << "expected a variable, got " << node_kind_name(e.kind());
  return Var(e.ptr());
}

Range Range::from_extent(Expr extent) {
  Expr zero = make_int(extent.dtype(), 0);
  return Range{zero, std::move(extent)};
}

Buffer Buffer::make(std::string name, DataType dtype, std::vector<Expr> shape, std::string scope,
                    std::vector<Expr> strides) {
  for (const Expr &e : shape)
    TESSERA_ICHECK(e.defined() && e.dtype().is_integer())
        << "buffer '" << name << "': shape entries must be integers";
  auto n = std::make_shared<BufferNode>();
  n->name = std::move(name);
  n->dtype = dtype;
  n->shape = std::move(shape);
  n->strides = std::move(strides);
  n->scope = std::move(scope);
  Buffer b;
  b.ptr_ = std::move(n);
  return b;
}

Buffer Buffer::with_scope(std::string scope) const {
  return make(name(), dtype(), shape(), std::move(scope), ptr_->strides);
}
Buffer Buffer::with_name(std::string n) const {
  return make(std::move(n), dtype(), shape(), scope(), ptr_->strides);
}

BufferRegion BufferRegion::full(const Buffer &b) {
  BufferRegion r{b, {}};
  for (const Expr &e : b.shape()) r.region.push_back(Range::from_extent(e));
  return r;
}

// Wraps `v` to the width and signedness of integer type `t`.
static int64_t wrap_int(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0;
  int bits = t.bits();
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && (u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}

Expr IntImm::make(DataType t, int64_t v) {
  TESSERA_ICHECK(t.is_int_like()) << "IntImm of non-integer type " << t.str();
  return Expr(std::make_shared<IntImm>(t, wrap_int(t, v)));
}

Expr FloatImm::make(DataType t, double v) {
  TESSERA_ICHECK(t.is_float()) << "FloatImm of non-float type " << t.str();
  if (t.is_bfloat16())
    v = round_to_bfloat16(v);
  else if (t.bits() == 16)
    v = round_to_half(v);
  else if (t.bits() == 32)
    v = static_cast<double>(static_cast<float>(v));
  return Expr(std::make_shared<FloatImm>(t, v));
}

const char *binary_op_name(BinaryOp op) {
  static const char *names[] = {"Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod", "Min",
                                "Max", "EQ",  "NE",  "LT",  "LE",  "GT",       "GE",       "And",
                                "Or",  "BitAnd", "BitOr", "BitXor", "Shl", "Shr"};
  return names[static_cast<int>(op)];
}

bool is_comparison(BinaryOp op) { return op >= BinaryOp::EQ && op <= BinaryOp::GE; }

Expr Binary::make(BinaryOp op, Expr a, Expr b) {
  TESSERA_ICHECK(a.defined() && b.defined()) << binary_op_name(op) << " of an undefined operand";
  TESSERA_ICHECK(a.dtype() == b.dtype())
      << binary_op_name(op) << " operands differ in type: " << a.dtype().str() << " vs " << b.dtype().str();
  DataType t = a.dtype();
  switch (op) {
    case BinaryOp::And:
    case BinaryOp::Or:
      TESSERA_ICHECK(t.is_bool()) << binary_op_name(op) << " needs bool operands, got " << t.str();
      break;
    case BinaryOp::BitAnd:
    case BinaryOp::BitOr:
    case BinaryOp::BitXor:
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      TESSERA_ICHECK(t.is_int_like()) << binary_op_name(op) << " needs integer operands, got " << t.str();
      break;
    case BinaryOp::FloorDiv:
    case BinaryOp::FloorMod:
    case BinaryOp::Mod:
      TESSERA_ICHECK(!t.is_bool() && !t.is_handle()) << binary_op_name(op) << " of " << t.str();
      break;
    default: break;
  }
  DataType result = (is_comparison(op) || op == BinaryOp::And || op == BinaryOp::Or) ? DataType::bool_() : t;
  return Expr(std::make_shared<Binary>(result, op, std::move(a), std::move(b)));
}

const char *unary_op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Not: return "Not";
    case UnaryOp::BitNot: return "BitNot";
    case UnaryOp::Neg: return "Neg";
  }
  return "?";
}

Expr Unary::make(UnaryOp op, Expr a) {
  TESSERA_ICHECK(a.defined()) << unary_op_name(op) << " of an undefined operand";
  DataType t = a.dtype();
  if (op == UnaryOp::Not) TESSERA_ICHECK(t.is_bool()) << "Not needs a bool operand, got " << t.str();
  if (op == UnaryOp::BitNot) TESSERA_ICHECK(t.is_int_like()) << "BitNot needs an integer, got " << t.str();
  return Expr(std::make_shared<Unary>(t, op, std::move(a)));
}

Expr Select::make(Expr cond, Expr t, Expr f) {
  TESSERA_ICHECK(cond.dtype().is_bool()) << "Select condition must be bool, got " << cond.dtype().str();
  TESSERA_ICHECK(t.dtype() == f.dtype())
      << "Select arms differ in type: " << t.dtype().str() << " vs " << f.dtype().str();
  return Expr(std::make_shared<Select>(std::move(cond), std::move(t), std::move(f)));
}

Expr Cast::make(DataType t, Expr v) {
  TESSERA_ICHECK(v.defined()) << "Cast of an undefined value";
  TESSERA_ICHECK(!t.is_void()) << "Cast to void";
  return Expr(std::make_shared<Cast>(t, std::move(v)));
}

Expr Load::make(Buffer buffer, std::vector<Expr> indices) {
  TESSERA_ICHECK(buffer.defined()) << "Load from an undefined buffer";
  TESSERA_ICHECK(static_cast<int>(indices.size()) == buffer.ndim())
      << "load from '" << buffer.name() << "' has " << indices.size() << " indices but the buffer has "
      << buffer.ndim() << " dimensions";
  for (const Expr &i : indices)
    TESSERA_ICHECK(i.defined() && i.dtype().is_integer())
        << "load from '" << buffer.name() << "': indices must be integers";
  return Expr(std::make_shared<Load>(std::move(buffer), std::move(indices)));
}

namespace {
struct IntrinsicInfo {
  const char *name;
  int arity;
};
const IntrinsicInfo kIntrinsics[] = {
#define TESSERA_INTRINSIC(Name, spelling, arity) {spelling, arity},
#include "tessera/ir/Intrinsics.def"
};
}  // namespace

const char *intrinsic_name(Intrinsic op) { return kIntrinsics[static_cast<int>(op)].name; }
int intrinsic_arity(Intrinsic op) { return kIntrinsics[static_cast<int>(op)].arity; }

std::optional<Intrinsic> intrinsic_from_name(std::string_view name) {
  if (name == "fabs") return Intrinsic::Abs;
  for (size_t i = 0; i < std::size(kIntrinsics); ++i)
    if (name == kIntrinsics[i].name) return static_cast<Intrinsic>(i);
  return std::nullopt;
}

Expr StringImm::make(std::string value) { return Expr(std::make_shared<StringImm>(std::move(value))); }

Expr BufferPtr::make(Buffer buffer) {
  TESSERA_ICHECK(buffer.defined()) << "BufferPtr of an undefined buffer";
  return Expr(std::make_shared<BufferPtr>(std::move(buffer)));
}

Expr OpaqueCall::make(DataType t, std::string callee, std::vector<Expr> args) {
  TESSERA_ICHECK(!callee.empty()) << "an opaque call needs a callee";
  for (const Expr &a : args) TESSERA_ICHECK(a.defined()) << callee << " of an undefined argument";
  return Expr(std::make_shared<OpaqueCall>(t, std::move(callee), std::move(args)));
}

bool needs_arch_specific_target(Intrinsic op) {
  switch (op) {
    case Intrinsic::Wgmma:
    case Intrinsic::WgmmaFence:
    case Intrinsic::WgmmaCommit:
    case Intrinsic::WgmmaWait:
    case Intrinsic::FenceProxyAsync:
    case Intrinsic::SetMaxNReg: return true;
    default: return false;
  }
}

bool is_async_or_warp_statement(Intrinsic op) {
  switch (op) {
    case Intrinsic::Ldmatrix:
    case Intrinsic::MmaSync:
    case Intrinsic::CpAsync:
    case Intrinsic::CpAsyncCommit:
    case Intrinsic::CpAsyncWait:
    case Intrinsic::MbarrierInit:
    case Intrinsic::MbarrierArrive:
    case Intrinsic::MbarrierArriveExpectTx:
    case Intrinsic::MbarrierWait:
    case Intrinsic::TmaLoad:
    case Intrinsic::TmaStore:
    case Intrinsic::TmaStoreWait:
    case Intrinsic::SyncWarp: return true;
    default: return needs_arch_specific_target(op);
  }
}

std::string setmaxnreg_check(int64_t count, int64_t increase) {
  if (count < 24 || count > 256 || count % 8 != 0)
    return "the register count is " + std::to_string(count) + "; setmaxnreg takes a multiple of 8 from 24 to 256";
  if (increase != 0 && increase != 1)
    return "the direction is " + std::to_string(increase) + "; 1 takes registers (inc), 0 gives them up (dec)";
  return {};
}

std::vector<int> address_operands(Intrinsic op) {
  switch (op) {
    case Intrinsic::Ldmatrix: return {2, 3};
    case Intrinsic::MmaSync: return {1, 2, 3};
    case Intrinsic::Wgmma: return {1, 2, 3};
    case Intrinsic::CpAsync: return {0, 1};
    case Intrinsic::MbarrierInit:
    case Intrinsic::MbarrierArrive:
    case Intrinsic::MbarrierArriveExpectTx:
    case Intrinsic::MbarrierWait: return {0};
    case Intrinsic::TmaLoad: return {0, 1};
    case Intrinsic::TmaStore: return {0};
    default: return {};
  }
}

int destination_operand(Intrinsic op) {
  if (op == Intrinsic::TmaStore) return -1;  // it writes a tensor (tma_store_tensor), not an address
  std::vector<int> operands = address_operands(op);
  return operands.empty() ? -1 : operands.front();
}

Expr Call::make(DataType t, Intrinsic op, std::vector<Expr> args) {
  int arity = intrinsic_arity(op);
  TESSERA_ICHECK(arity < 0 || static_cast<int>(args.size()) == arity)
      << intrinsic_name(op) << " takes " << arity << " arguments, got " << args.size();
  for (const Expr &a : args) TESSERA_ICHECK(a.defined()) << intrinsic_name(op) << " of an undefined argument";
  if (is_async_or_warp_statement(op)) {
    TESSERA_ICHECK(t == DataType::int32()) << intrinsic_name(op) << " has type int32";
    if (op == Intrinsic::TmaLoad || op == Intrinsic::TmaStore) {
      // tma_load: dst, bar, src.data, swizzle, ...; tma_store: src, dst.data, swizzle, ...
      const bool load = op == Intrinsic::TmaLoad;
      const size_t fixed = load ? 4 : 3, tensor = load ? 2 : 1;
      TESSERA_ICHECK(args.size() >= fixed + 2 && (args.size() - fixed) % 2 == 0 &&
                     args.size() <= fixed + 2 * tma::kMaxDims)
          << intrinsic_name(op) << " takes " << (load ? "dst, bar, src, swizzle" : "src, dst, swizzle")
          << ", then 1 to " << tma::kMaxDims << " box extents and as many coordinates; got " << args.size()
          << " arguments";
      const auto *t = args[tensor].as<BufferPtr>();
      TESSERA_ICHECK(t) << intrinsic_name(op) << " argument " << tensor << " must be a tensor (T.data)";
      TESSERA_ICHECK(args.size() - fixed == 2 * t->buffer.shape().size())
          << intrinsic_name(op) << " of '" << t->buffer.name()
          << "' takes one box extent and one coordinate per dimension";
    }
    for (int i : address_operands(op))
      TESSERA_ICHECK(args[i].as<Load>()) << intrinsic_name(op) << " argument " << i
                                         << " must be a buffer element (an address)";
    return Expr(std::make_shared<Call>(t, op, std::move(args)));
  }
  switch (op) {
    case Intrinsic::IfThenElse:
      TESSERA_ICHECK(args[0].dtype().is_bool()) << "if_then_else condition must be bool";
      TESSERA_ICHECK(args[1].dtype() == t && args[2].dtype() == t) << "if_then_else arms must have type " << t.str();
      break;
    case Intrinsic::Reinterpret:
      TESSERA_ICHECK(args[0].dtype().bits() == t.bits())
          << "reinterpret from " << args[0].dtype().str() << " to " << t.str() << " changes the width";
      break;
    case Intrinsic::IsNan:
    case Intrinsic::IsInf:
    case Intrinsic::IsFinite:
      TESSERA_ICHECK(t.is_bool()) << intrinsic_name(op) << " returns bool";
      break;
    case Intrinsic::MaxValue:
    case Intrinsic::MinValue: break;
    case Intrinsic::RoundToTf32:
      // float64 in the widened reference program (runtime/ReferenceProgram.h).
      TESSERA_ICHECK((t == DataType::float32() || t == DataType::float64()) && args[0].dtype() == t)
          << "round_to_tf32 takes and returns float32";
      break;
    case Intrinsic::Assume:
      TESSERA_ICHECK(t.is_bool() && args[0].dtype().is_bool()) << "assume takes and returns bool";
      break;
    case Intrinsic::SyncThreads:
      TESSERA_ICHECK(t == DataType::int32()) << "syncthreads has type int32";
      break;
    case Intrinsic::ShflXor:
      TESSERA_ICHECK(args[0].dtype() == DataType::uint(32)) << "shfl_xor mask must be uint32";
      TESSERA_ICHECK(args[1].dtype() == t) << "shfl_xor has the type of its value";
      TESSERA_ICHECK(args[2].dtype() == DataType::int32() && args[3].dtype() == DataType::int32())
          << "shfl_xor lane mask and width must be int32";
      break;
    case Intrinsic::Abs:
      TESSERA_ICHECK(args[0].dtype() == t) << "abs keeps its operand type";
      break;
    default:
      TESSERA_ICHECK(t.is_float()) << intrinsic_name(op) << " needs a float type, got " << t.str();
      for (const Expr &a : args)
        TESSERA_ICHECK(a.dtype() == t) << intrinsic_name(op) << " operands must have type " << t.str();
  }
  return Expr(std::make_shared<Call>(t, op, std::move(args)));
}

Expr Let::make(Var var, Expr value, Expr body) {
  TESSERA_ICHECK(var.defined() && value.defined() && body.defined()) << "Let with an undefined part";
  TESSERA_ICHECK(var.dtype() == value.dtype())
      << "let '" << var.name() << "' has type " << var.dtype().str() << " but its value is " << value.dtype().str();
  return Expr(std::make_shared<Let>(std::move(var), std::move(value), std::move(body)));
}

Expr make_int(DataType t, int64_t v) { return IntImm::make(t, v); }

Expr make_const(DataType t, double v) {
  if (t.is_float()) return FloatImm::make(t, v);
  if (t.is_bool()) return IntImm::make(t, v != 0);
  TESSERA_ICHECK(t.is_integer()) << "constant of type " << t.str();
  return IntImm::make(t, static_cast<int64_t>(std::trunc(v)));
}

Expr const_true() { return IntImm::make(DataType::bool_(), 1); }
Expr const_false() { return IntImm::make(DataType::bool_(), 0); }

std::optional<int64_t> as_const_int(const Expr &e) {
  if (const auto *imm = e.as<IntImm>()) return imm->value;
  return std::nullopt;
}

bool is_const_int(const Expr &e, int64_t v) {
  auto c = as_const_int(e);
  return c && *c == v;
}

}  // namespace tessera::ir
