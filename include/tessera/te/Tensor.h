//===- tessera/te/Tensor.h - Tensor expressions (TVM's TE) -----------------===//
//
// A C++ way to write a tensor program as a graph of tensors, each either a
// placeholder (an input) or a compute (a function of index variables), and to
// turn it into a TensorIR PrimFunc with create_prim_func, the way TVM's
// `te.create_prim_func` does:
//
//   using namespace tessera;
//   ir::Var n("n");
//   te::Tensor A = te::placeholder({n, 64}, ir::DataType::float32(), "A");
//   te::Tensor B = te::placeholder({64, 32}, ir::DataType::float32(), "B");
//   te::ReduceAxis k = te::reduce_axis(64, "k");
//   te::Tensor C = te::compute(
//       {n, 32}, [&](ir::Var i, ir::Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C",
//       {"i", "j"});
//   ir::PrimFunc f = te::create_prim_func({A, B, C});
//
// gives the PrimFunc that this TVMScript parses to:
//
//   @T.prim_func
//   def main(var_A: T.handle, B: T.Buffer((64, 32), "float32"), var_C: T.handle):
//       T.func_attr({"tir.noalias": True})
//       n = T.int32()
//       A = T.match_buffer(var_A, (n, 64))
//       C = T.match_buffer(var_C, (n, 32))
//       for i, j, k in T.grid(n, 32, 64):
//           with T.block("C"):
//               v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
//               with T.init():
//                   C[v_i, v_j] = T.float32(0)
//               C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
//
//===----------------------------------------------------------------------===//
#pragma once

#include <concepts>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/te/Reduce.h"

namespace tessera::te {

/// A tensor shape: `{128, n}` (C++ integers and IR expressions mixed), or a
/// `std::vector<ir::Expr>` such as another tensor's `shape()`.
class Shape {
 public:
  Shape() = default;
  Shape(std::initializer_list<Dim> dims);
  Shape(std::vector<ir::Expr> dims);
  const std::vector<ir::Expr> &dims() const { return dims_; }
  size_t size() const { return dims_.size(); }

 private:
  std::vector<ir::Expr> dims_;
};

namespace detail {
struct TensorNode;
}  // namespace detail

/// A tensor of the expression graph: a placeholder or a compute. Tensors are
/// immutable handles compared by identity; each owns the ir::Buffer that
/// create_prim_func uses for it (named after the tensor).
class Tensor {
 public:
  Tensor() = default;
  bool defined() const { return node_ != nullptr; }
  bool same_as(const Tensor &o) const { return node_ == o.node_; }

  const std::string &name() const;
  ir::DataType dtype() const;
  const std::vector<ir::Expr> &shape() const;
  int ndim() const;
  const ir::Buffer &buffer() const;
  bool is_placeholder() const;
  /// Whether this is a compute whose body is a reduction.
  bool is_reduction() const;
  /// The tensors a compute reads, in order of first use; empty for a placeholder.
  std::vector<Tensor> inputs() const;

  /// An element: `A(i, j)`, `A(i + 1, 0)`, `A({i, j})`, `A(std::vector<ir::Expr>{...})`,
  /// a load of the tensor's buffer. Requires one integer index per dimension
  /// (else TeError: "tensor 'A' has 2 dimensions but is indexed with 3 indices").
  template <typename... Idx>
  requires(std::constructible_from<Dim, Idx> &&...) ir::Expr operator()(Idx... idx) const {
    return load({Dim(idx).expr()...});
  }
  ir::Expr operator()(std::initializer_list<Dim> idx) const;
  ir::Expr operator()(const std::vector<ir::Expr> &idx) const { return load(idx); }
  ir::Expr operator()(const std::vector<ir::Var> &idx) const;
  ir::Expr load(std::vector<ir::Expr> indices) const;

  const std::shared_ptr<const detail::TensorNode> &node() const { return node_; }
  explicit Tensor(std::shared_ptr<const detail::TensorNode> n) : node_(std::move(n)) {}

 private:
  std::shared_ptr<const detail::TensorNode> node_;
};

/// An input tensor (TVM's `te.placeholder`). Shape entries may be symbolic
/// integer variables (int32 or int64); in create_prim_func's output they are
/// the shape variables of the parameter buffer, not scalar parameters.
///   te::placeholder({n, 128}, ir::DataType::float16(), "A")
Tensor placeholder(Shape shape, ir::DataType dtype = ir::DataType::float32(),
                   std::string name = "placeholder");

/// Element-wise math for compute bodies (float operands; integers become
/// float32), as in TVM's `te.exp`, ...: `te::exp(A(i) - M(i))`.
inline ir::Expr exp(ir::Expr x) {
  return ir::call(ir::Intrinsic::Exp, {std::move(x)});
}
inline ir::Expr log(ir::Expr x) {
  return ir::call(ir::Intrinsic::Log, {std::move(x)});
}
inline ir::Expr sqrt(ir::Expr x) {
  return ir::call(ir::Intrinsic::Sqrt, {std::move(x)});
}
inline ir::Expr rsqrt(ir::Expr x) {
  return ir::call(ir::Intrinsic::Rsqrt, {std::move(x)});
}
inline ir::Expr tanh(ir::Expr x) {
  return ir::call(ir::Intrinsic::Tanh, {std::move(x)});
}
inline ir::Expr sigmoid(ir::Expr x) {
  return ir::call(ir::Intrinsic::Sigmoid, {std::move(x)});
}
inline ir::Expr abs(ir::Expr x) {
  return ir::call(ir::Intrinsic::Abs, {std::move(x)});
}
using ir::cast;
using ir::if_then_else;
using ir::select;

namespace detail {
/// Fresh index variables for a compute of `shape`, one per dimension, typed like
/// the extent and named `names[d]` (default "i0", "i1", ...).
std::vector<ir::Var> make_index_vars(const Shape &shape, const std::vector<std::string> &names,
                                     const std::string &op_name);
/// Validates `body` (see `compute`) and builds the compute tensor.
Tensor make_compute(std::string name, Shape shape, std::vector<ir::Var> indices, ir::Expr body);
[[noreturn]] void throw_arity_error(const std::string &op_name, size_t ndim);

template <typename F, size_t... I>
ir::Expr invoke_n(F &fn, const std::vector<ir::Var> &v, std::index_sequence<I...>) {
  return fn(v[I]...);
}
template <typename F, size_t... I>
constexpr bool invocable_n(std::index_sequence<I...>) {
  return std::is_invocable_v<F &, decltype((void)I, std::declval<ir::Var>())...>;
}
template <typename F, size_t N>
constexpr bool invocable_with = invocable_n<F>(std::make_index_sequence<N>{});
template <typename F>
constexpr bool invocable_any_arity = invocable_with<F, 0> || invocable_with<F, 1> || invocable_with<F, 2> ||
                                     invocable_with<F, 3> || invocable_with<F, 4> || invocable_with<F, 5>;

template <size_t N, typename F>
ir::Expr call_with_arity(F &fn, const std::vector<ir::Var> &v, const std::string &op_name) {
  if constexpr (invocable_with<F, N>) {
    if (v.size() == N) return invoke_n(fn, v, std::make_index_sequence<N>{});
  }
  if constexpr (N < 5) {
    return call_with_arity<N + 1>(fn, v, op_name);
  } else {
    throw_arity_error(op_name, v.size());
  }
}
}  // namespace detail

/// A tensor defined by a function of its indices (TVM's `te.compute`). `fn`
/// takes one ir::Var per dimension (0 to 5 of them, or one
/// `const std::vector<ir::Var> &` for any rank) and returns the element:
///   te::compute({m, n}, [&](ir::Var i, ir::Var j) { return A(i, j) + B(j); }, "C")
///   te::compute(A.shape(), [&](const std::vector<ir::Var> &ix) { return te::exp(A(ix)); }, "E")
/// `index_names` names the index variables, hence the loops ("i", "j") and the
/// block iter vars ("v_i", "v_j") of create_prim_func's output; by default they
/// are "i0", "i1", ...
///
/// The body is either a plain expression or one reduction (sum/max/min/reduce)
/// as a whole. Requires:
///   1. `fn` takes as many indices as the shape has dimensions  -> TeError
///   2. a reduction is the whole body ("compute 'C': reduction over axis 'k'
///      must be the whole body, found it inside an addition")    -> TeError
///   3. no reduce axis appears outside the reduction that lists it -> TeError
///   4. `index_names` is empty or has one name per dimension     -> TeError
template <typename F>
Tensor compute(Shape shape, F fn, std::string name = "compute", std::vector<std::string> index_names = {}) {
  std::vector<ir::Var> idx = detail::make_index_vars(shape, index_names, name);
  ir::Expr body;
  if constexpr (detail::invocable_any_arity<F>) {
    body = detail::call_with_arity<0>(fn, idx, name);
  } else {
    static_assert(std::is_invocable_v<F &, const std::vector<ir::Var> &>,
                  "te::compute: fn must take 0 to 5 ir::Var indices or a const std::vector<ir::Var> &");
    body = fn(static_cast<const std::vector<ir::Var> &>(idx));
  }
  return detail::make_compute(std::move(name), std::move(shape), std::move(idx), std::move(body));
}

/// Builds the TensorIR function computing the tensors in `args` (TVM's
/// `te.create_prim_func`):
///   - parameters: one handle + buffer per argument, in `args` order
///     (placeholders and outputs alike); symbolic dims are the buffers' shape
///     variables, not scalar parameters;
///   - the compute stages reachable from `args`, in a post-order depth-first
///     topological order (inputs before users, first-use order among inputs);
///     computes not in `args` are intermediates allocated by the root block
///     (`T.alloc_buffer`), in stage order;
///   - each stage: one serial loop per dimension and then per reduce axis
///     (named like the index / axis), a block named after the tensor with
///     iter vars "v_<loop>" (spatial, then reduce) bound one to one to the
///     loops, reads/writes from ir::infer_access_regions, and for a reduction
///     `T.init()` storing the identity and the update
///     `C[v_i, v_j] = combine(C[v_i, v_j], value)`;
///   - function attributes `{"tir.noalias": True}` only (no "global_symbol":
///     the function's name is `name`).
/// Requires:
///   1. `args` is non-empty, holds defined tensors, none twice       -> TeError
///   2. every placeholder the outputs read is in `args`               -> TeError
///   3. every variable of an intermediate's shape is a dimension of some argument
///      (there are no scalar parameters to bind it)                   -> TeError
///   4. a compute's body uses only its own indices, reduce axes and the
///      shape variables of the arguments                               -> TeError
/// A compute tensor not in `args` and not read by one is simply not part of the
/// function: list every output you want in `args`.
ir::PrimFunc create_prim_func(const std::vector<Tensor> &args, std::string name = "main");

}  // namespace tessera::te
