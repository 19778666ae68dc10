//===- tessera/ir/Expr.h - Expression nodes --------------------------------===//
//
// The expression nodes of the tensor IR. Each is immutable and built by its
// `make` factory, which checks operand types (an ill-typed `make` is an
// internal error: front ends convert operands first, see Op.h for the
// type-promoting builders that the parser and the TE builder use).
//
//   IntImm      42, T.int64(7), True (bool)        FloatImm  T.float16(1.5)
//   Var         i, n                               Binary    a + b, a // b, a < b, a & b ...
//   Unary       not a, ~a, -a                      Select    T.Select(c, a, b)
//   Cast        T.Cast("float32", x)               Load      A[i, j]
//   Call        T.exp(x), T.if_then_else(c, a, b), T.reinterpret("float16", x), ...
//   Let         T.let(x, value, body)
//   StringImm   "name" (an argument of an opaque call)
//   BufferPtr   A.data (the address of a buffer, an argument of an opaque call)
//   OpaqueCall  T.call_extern("float32", "f", x), T.tvm_fill_fragment(...): code
//               tessera cannot see; parsed and printed, never interpreted,
//               scheduled or compiled (functions holding one are refused)
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "tessera/ir/Buffer.h"
#include "tessera/ir/ExprHandle.h"

namespace tessera::ir {

/// An integer or bool constant. uint64 values are stored as their bit pattern.
struct IntImm : ExprNode {
  static constexpr NodeKind kKind = NodeKind::IntImm;
  IntImm(DataType t, int64_t v) : ExprNode(kKind, t), value(v) {}
  const int64_t value;
  /// `t` must be bool or an integer type; `v` is wrapped to t's width.
  static Expr make(DataType t, int64_t v);
};

/// A floating-point constant, already rounded to its type.
struct FloatImm : ExprNode {
  static constexpr NodeKind kKind = NodeKind::FloatImm;
  FloatImm(DataType t, double v) : ExprNode(kKind, t), value(v) {}
  const double value;
  /// `t` must be a float type; `v` is rounded to it (float16/bfloat16: nearest even).
  static Expr make(DataType t, double v);
};

/// Binary operators. Div/Mod are C's truncating division and remainder on
/// integers (TVM's Div/Mod, `T.truncdiv`/`T.truncmod`); FloorDiv/FloorMod are
/// Python's `//` and `%`. Comparisons and And/Or yield bool.
enum class BinaryOp : uint8_t {
  Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max,
  EQ, NE, LT, LE, GT, GE, And, Or,
  BitAnd, BitOr, BitXor, Shl, Shr,
};
/// "Add", "FloorDiv", ... (for messages).
const char *binary_op_name(BinaryOp op);
/// True for EQ..GE.
bool is_comparison(BinaryOp op);

struct Binary : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Binary;
  Binary(DataType t, BinaryOp o, Expr x, Expr y) : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
  const BinaryOp op;
  const Expr a, b;
  /// Requires a.dtype() == b.dtype() (And/Or: bool; bit ops and shifts: integers).
  static Expr make(BinaryOp op, Expr a, Expr b);
};

/// Unary operators: logical not (bool), bitwise not (integers), negation.
enum class UnaryOp : uint8_t { Not, BitNot, Neg };
const char *unary_op_name(UnaryOp op);

struct Unary : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Unary;
  Unary(DataType t, UnaryOp o, Expr x) : ExprNode(kKind, t), op(o), a(std::move(x)) {}
  const UnaryOp op;
  const Expr a;
  static Expr make(UnaryOp op, Expr a);
};

/// cond ? t : f. Both arms may be evaluated (use if_then_else to guard a load).
struct Select : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Select;
  Select(Expr c, Expr t, Expr f)
      : ExprNode(kKind, t.dtype()), cond(std::move(c)), true_value(std::move(t)), false_value(std::move(f)) {}
  const Expr cond, true_value, false_value;
  static Expr make(Expr cond, Expr t, Expr f);
};

/// Value conversion to `dtype` (float->int truncates toward zero).
struct Cast : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Cast;
  Cast(DataType t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  const Expr value;
  static Expr make(DataType t, Expr v);
};

/// A read of one element: A[i, j].
struct Load : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Load;
  Load(Buffer b, std::vector<Expr> idx) : ExprNode(kKind, b.dtype()), buffer(std::move(b)), indices(std::move(idx)) {}
  const Buffer buffer;
  const std::vector<Expr> indices;
  /// Requires one integer index per buffer dimension.
  static Expr make(Buffer buffer, std::vector<Expr> indices);
};

/// Built-in functions. Math functions take and return floats (Abs, Min/MaxValue
/// also integers); IsNan/IsInf/IsFinite return bool; IfThenElse(c, a, b)
/// evaluates only the taken arm; Reinterpret(x) reinterprets x's bits as the
/// call's dtype (same width); MaxValue/MinValue take no argument and give the
/// extreme finite value of the call's dtype.
enum class Intrinsic : uint8_t {
#define TESSERA_INTRINSIC(Name, spelling, arity) Name,
#include "tessera/ir/Intrinsics.def"
};
/// TVMScript spelling without the "T." prefix: "exp", "if_then_else", ...
const char *intrinsic_name(Intrinsic op);
/// Number of arguments, or -1 for none fixed.
int intrinsic_arity(Intrinsic op);
/// The warp-level and asynchronous statements (Ldmatrix, MmaSync, the
/// cp.async and wgmma families, FenceProxyAsync): int32-typed, used only in
/// T.evaluate.
bool is_async_or_warp_statement(Intrinsic op);
/// Hopper's statements that only the architecture-specific target compiles
/// (sm_90a): wgmma, its fence and groups, the async-proxy fence and
/// setmaxnreg.
bool needs_arch_specific_target(Intrinsic op);
/// The arguments of such a statement that are addresses (Loads naming the
/// first element an instruction touches), in argument order.
std::vector<int> address_operands(Intrinsic op);
/// The operand a warp-level statement writes through (ldmatrix's fragment,
/// mma.sync's and wgmma's accumulators, cp.async's destination), or -1
/// (T.tma_store writes the tensor of its argument 1, a BufferPtr).
int destination_operand(Intrinsic op);
/// Looks up an intrinsic by its TVMScript spelling ("fabs" is an alias of "abs").
std::optional<Intrinsic> intrinsic_from_name(std::string_view name);
/// Empty when T.setmaxnreg(count, increase) is well formed (count a multiple
/// of 8 from 24 to 256, increase 0 or 1), else why not.
std::string setmaxnreg_check(int64_t count, int64_t increase);

struct Call : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Call;
  Call(DataType t, Intrinsic o, std::vector<Expr> a) : ExprNode(kKind, t), op(o), args(std::move(a)) {}
  const Intrinsic op;
  const std::vector<Expr> args;
  /// Checks the arity and operand types of `op`.
  static Expr make(DataType t, Intrinsic op, std::vector<Expr> args);
};

/// let var = value in body.
struct Let : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Let;
  Let(Var v, Expr val, Expr b) : ExprNode(kKind, b.dtype()), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  const Var var;
  const Expr value, body;
  static Expr make(Var var, Expr value, Expr body);
};

/// A string literal; dtype handle.
struct StringImm : ExprNode {
  static constexpr NodeKind kKind = NodeKind::StringImm;
  explicit StringImm(std::string v) : ExprNode(kKind, DataType::handle()), value(std::move(v)) {}
  const std::string value;
  static Expr make(std::string value);
};

/// The address of a buffer's data, `A.data`; dtype handle.
struct BufferPtr : ExprNode {
  static constexpr NodeKind kKind = NodeKind::BufferPtr;
  explicit BufferPtr(Buffer b) : ExprNode(kKind, DataType::handle()), buffer(std::move(b)) {}
  const Buffer buffer;
  static Expr make(Buffer buffer);
};

/// A call of something tessera has no semantics for, kept as written:
/// `callee` is the spelling ("T.call_extern", "T.ptx_legacy.ldmatrix").
struct OpaqueCall : ExprNode {
  static constexpr NodeKind kKind = NodeKind::OpaqueCall;
  OpaqueCall(DataType t, std::string c, std::vector<Expr> a)
      : ExprNode(kKind, t), callee(std::move(c)), args(std::move(a)) {}
  const std::string callee;
  const std::vector<Expr> args;
  static Expr make(DataType t, std::string callee, std::vector<Expr> args);
};

/// The constant `v` of integer/bool type `t` (wrapped to its width).
Expr make_int(DataType t, int64_t v);
/// A constant of any scalar type: integers truncate toward zero, floats round.
Expr make_const(DataType t, double v);
/// An int32 constant.
inline Expr i32(int64_t v) { return make_int(DataType::int32(), v); }
Expr const_true();
Expr const_false();
/// The value of an integer constant, or nullopt.
std::optional<int64_t> as_const_int(const Expr &e);
/// True when `e` is the integer constant `v`.
bool is_const_int(const Expr &e, int64_t v);

}  // namespace tessera::ir
