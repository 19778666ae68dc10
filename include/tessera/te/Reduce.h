//===- tessera/te/Reduce.h - Extents, reduce axes and reducers -------------===//
//
// The building blocks of tensor expressions (TVM's TE) that do not need a
// Tensor: `Dim` (an extent given as a C++ integer or an IR expression),
// `TeError`, reduction axes and commutative reducers.
//
//   te::ReduceAxis k = te::reduce_axis(128, "k");
//   C = te::compute({128, 128}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
//
// A reduction (`sum`, `max`, `min`, `reduce`) is an ir::Expr, but it may only
// be the whole body of a compute: `sum(...) + 1` is rejected by `compute` with
// a TeError naming the enclosing operation. The reduce axes a reduction lists
// may appear only inside it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/ir/Expr.h"
#include "tessera/ir/Op.h"
#include "tessera/support/Error.h"

namespace tessera::te {

/// A mistake in a tensor-expression program: a wrong index count, a reduce
/// axis outside its reduction, a placeholder missing from create_prim_func's
/// arguments, ... The message names the compute or tensor:
///   "compute 'C': reduction over axis 'k' must be the whole body, found it inside an addition"
class TeError : public UserError {
 public:
  using UserError::UserError;
};

/// One extent or index: a C++ integer or an integer IR expression (`n`,
/// `n * 2`). Lets shapes be written as `{n, 128}`. An `int64_t` (`long`,
/// `long long`) becomes an int64 constant, any other C++ integer an int32
/// constant, as Python integers do in TVM.
class Dim {
 public:
  template <std::integral T>
  requires(!std::same_as<T, bool>) Dim(T v)
      : Dim(static_cast<int64_t>(v), sizeof(T) == 8 && std::is_signed_v<T>) {}
  Dim(ir::Expr e);
  const ir::Expr &expr() const { return expr_; }

 private:
  Dim(int64_t v, bool wide);
  ir::Expr expr_;
};

/// A reduction axis: an integer variable ranging over [min, min + extent)
/// that a reduction (`sum`, ...) iterates over. It is an ir::Var, so it indexes
/// tensors directly: `A(i, k)`. In create_prim_func's output it becomes a
/// serial loop named after the axis and a reduce (`R`) block iter var "v_<name>".
class ReduceAxis : public ir::Var {
 public:
  ReduceAxis() = default;
  /// [min, min + extent), both of the axis's type.
  const ir::Range &dom() const;
  /// Whether `v` is a reduction axis made by reduce_axis.
  static bool is_reduce_axis(const ir::Var &v);
  /// `v` as a reduce axis (checked: an internal error when it is not one).
  static ReduceAxis from(const ir::Var &v);

 private:
  explicit ReduceAxis(ir::Var v) : ir::Var(std::move(v)) {}
  friend ReduceAxis reduce_axis(Dim min, Dim extent, std::string name);
};

/// A reduction axis over [0, extent): `reduce_axis(128, "k")`, `reduce_axis(n, "k")`.
/// The variable takes the extent's type.
ReduceAxis reduce_axis(Dim extent, std::string name = "k");
/// A reduction axis over [min, min + extent) (TVM's `te.reduce_axis((min, min + extent))`
/// is `reduce_axis(min, extent)` here). Both are converted to the wider integer type.
ReduceAxis reduce_axis(Dim min, Dim extent, std::string name);

/// A commutative, associative reduction: `combine(acc, value)` and the
/// identity of `combine` for a dtype. In create_prim_func's output the block's
/// init stores `identity(dtype)` and the update is
/// `C[v_i] = combine(C[v_i], value)`: the accumulator is the left operand.
///
///   te::CommReducer prod{[](ir::Expr x, ir::Expr y) { return x * y; },
///                        [](ir::DataType t) { return ir::make_const(t, 1); }, "prod"};
///   B = te::compute({n}, [&](Var i) { return te::reduce(prod, A(i, k), {k}); }, "B");
struct CommReducer {
  std::function<ir::Expr(ir::Expr acc, ir::Expr value)> combine;
  std::function<ir::Expr(ir::DataType)> identity;
  /// Used in messages only.
  std::string name = "reducer";
};

/// `x + y`, identity 0.
const CommReducer &sum_reducer();
/// `T.max(x, y)`, identity `T.min_value(dtype)`.
const CommReducer &max_reducer();
/// `T.min(x, y)`, identity `T.max_value(dtype)`.
const CommReducer &min_reducer();

/// The reduction of `source` over `axes` with `reducer`. Requires:
///   1. at least one axis, no axis listed twice               -> TeError
///   2. every reduce axis used in `source` is listed in `axes` -> TeError
///   3. `source` holds no other reduction                      -> TeError
///   4. combine(x, y) of two `source.dtype()` values has that dtype -> TeError
/// The result has `source`'s dtype and may only be the whole body of a compute;
/// identity(dtype) is converted to that dtype.
ir::Expr reduce(const CommReducer &reducer, ir::Expr source, const std::vector<ReduceAxis> &axes);

/// `te.sum`, `te.max`, `te.min`: reduce() with sum_reducer(), max_reducer(),
/// min_reducer(). Write the axes in braces, `te::max(A(i, k), {k})`: the
/// initializer-list overloads win over ir::max(a, b), which `te::max(a, b)`
/// also names (the binary maximum, brought in by `using`).
ir::Expr sum(ir::Expr source, const std::vector<ReduceAxis> &axes);
ir::Expr sum(ir::Expr source, std::initializer_list<ReduceAxis> axes);
ir::Expr max(ir::Expr source, const std::vector<ReduceAxis> &axes);
ir::Expr max(ir::Expr source, std::initializer_list<ReduceAxis> axes);
ir::Expr min(ir::Expr source, const std::vector<ReduceAxis> &axes);
ir::Expr min(ir::Expr source, std::initializer_list<ReduceAxis> axes);
using ir::max;
using ir::min;

/// Whether `e` is a reduction made by `reduce`/`sum`/`max`/`min`.
bool is_reduction(const ir::Expr &e);

}  // namespace tessera::te
