//===- SolveDimension.h - A shape variable from the dimension it sizes ----===//
//
// Private to lib/runtime: the interpreter's argument binding and
// CudaFunction's both solve a shape variable found only inside a dimension
// (TVM's `(n * 32,)`) from the array's extent there.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>

namespace tessera::runtime::detail {

/// The value v >= 0 of a shape variable at which a dimension equals `got`,
/// given the dimension's values f0, f1, f2 at v = 0, 1, 2; none when those
/// are not affine in v, v does not move the dimension, or no whole v gives
/// `got`. (The caller checks every dimension afterwards, so a dimension
/// that is affine only on 0..2 is still caught as a mismatch.)
inline std::optional<int64_t> solve_affine_dimension(int64_t f0, int64_t f1, int64_t f2, int64_t got) {
  const int64_t slope = f1 - f0;
  if (slope == 0 || f2 - f1 != slope || (got - f0) % slope != 0 || (got - f0) / slope < 0) return std::nullopt;
  return (got - f0) / slope;
}

}  // namespace tessera::runtime::detail
