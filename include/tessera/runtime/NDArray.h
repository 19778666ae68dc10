//===- tessera/runtime/NDArray.h - Host arrays -----------------------------===//
//
// A dense, row-major host array with a dtype and a shape: the inputs and
// outputs of the interpreter, later the staging copies of device buffers.
// Elements are stored in their natural width (float16/bfloat16 as their 16-bit
// patterns, bool as one byte); `get`/`set` convert through double so tests can
// read and write any dtype uniformly.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tessera/ir/DataType.h"

namespace tessera::runtime {

class NDArray {
 public:
  NDArray() = default;
  /// Zero-filled array.
  NDArray(ir::DataType dtype, std::vector<int64_t> shape);

  ir::DataType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return bytes_.size(); }
  uint8_t *data() { return bytes_.data(); }
  const uint8_t *data() const { return bytes_.data(); }
  template <typename T>
  T *data_as() { return reinterpret_cast<T *>(bytes_.data()); }
  template <typename T>
  const T *data_as() const { return reinterpret_cast<const T *>(bytes_.data()); }

  /// Element `flat` (row-major) as a double; integers exactly up to 2^53.
  double get(int64_t flat) const;
  /// Stores `v` converted to the dtype (rounding floats, wrapping integers).
  void set(int64_t flat, double v);
  /// Integer elements exactly (int64/uint64 included).
  int64_t get_int(int64_t flat) const;
  void set_int(int64_t flat, int64_t v);

  /// Fills with values that are never all zero: floats uniform in [-1, 1)
  /// (float16/bfloat16 rounded), signed integers in [-8, 8), unsigned in
  /// [0, 16), bool true or false — the range a dtype's arithmetic cannot
  /// overflow in typical kernels.
  void fill_random(std::mt19937_64 &rng);

  /// Summary used by `tessera run`: "A float32[128, 64] l2=... max=... mean=..."
  /// (max is the largest absolute value).
  std::string summary(const std::string &name) const;

  /// "float32[128, 64]"
  std::string type_str() const;

 private:
  ir::DataType dtype_;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::vector<uint8_t> bytes_;
};

/// Largest relative error between two arrays of the same shape:
/// max |a - b| / max(|b|, 1e-6 * max|b| , tiny). Shapes must match.
double max_rel_error(const NDArray &a, const NDArray &b);
/// Element-wise |a - b| <= atol + rtol * |b| (NaN equals NaN).
bool allclose(const NDArray &a, const NDArray &b, double rtol, double atol);
/// Default tolerances per dtype for comparing a transformed program with a
/// reference: float16 1e-2, bfloat16 3e-2, float32 1e-5, float64 1e-12, integers exact.
double default_rtol(ir::DataType t);

}  // namespace tessera::runtime
