//===- tessera/runtime/NDArray.h - Host arrays -----------------------------===//
//
// A dense, row-major host array with a dtype and a shape: the inputs and
// outputs of the interpreter, later the staging copies of device buffers.
// Its data starts on a 64-byte boundary (support/CacheLineAllocator.h).
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
#include "tessera/support/CacheLineAllocator.h"

namespace tessera::runtime {

class NDArray {
 public:
  NDArray() = default;
  /// Zero-filled array. An empty shape is a 0-d array with one element (used
  /// for scalar parameters). A negative dimension, a vector/handle/void
  /// dtype, a size whose element or byte count overflows 64 bits, and one
  /// larger than the memory this machine has available are UserErrors (the
  /// last says what it needs and what there is).
  NDArray(ir::DataType dtype, std::vector<int64_t> shape);
  /// The element count of `shape`; UserError for a negative dimension or a
  /// count (of elements, or of bytes of `dtype`) that overflows 64 bits.
  static int64_t checked_numel(ir::DataType dtype, const std::vector<int64_t> &shape);
  /// UserError (support/HostMemory.h's message, naming `what`) when `bytes`
  /// are more than this machine has available; nothing under 256 MiB.
  static void check_fits(double bytes, const std::string &what);
  /// An array over `data`, memory it does not own (a DLPack tensor's, say):
  /// its elements are read and written there, in place, and copies of it
  /// alias the same memory. `data` must hold numel x element bytes and stay
  /// valid while the array is used. Errors as the constructor's.
  static NDArray wrap(ir::DataType dtype, std::vector<int64_t> shape, void *data);

  ir::DataType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return external_ ? external_bytes_ : bytes_.size(); }
  uint8_t *data() { return external_ ? external_ : bytes_.data(); }
  const uint8_t *data() const { return external_ ? external_ : bytes_.data(); }
  template <typename T>
  T *data_as() { return reinterpret_cast<T *>(data()); }
  template <typename T>
  const T *data_as() const { return reinterpret_cast<const T *>(data()); }

  /// Element `flat` (row-major) as a double; integers exactly up to 2^53,
  /// uint64 as its unsigned value. `flat` outside [0, numel) is a UserError
  /// (so are the other accessors').
  double get(int64_t flat) const;
  /// Stores `v` converted to the dtype: floats round to nearest even; integers
  /// truncate toward zero (NaN -> 0) and wrap at the width; bool is v != 0.
  void set(int64_t flat, double v);
  /// Integer elements exactly: signed types sign-extended, unsigned types
  /// zero-extended, uint64 as its bit pattern (UINT64_MAX reads as -1). Float
  /// elements truncate toward zero.
  int64_t get_int(int64_t flat) const;
  /// Stores the low bits of `v` (wrap-around); float dtypes round.
  void set_int(int64_t flat, int64_t v);

  /// Fills with values that are never all zero: floats uniform in [-1, 1)
  /// (float16/bfloat16 rounded, so an element may round to 1), signed integers
  /// in [-8, 8), unsigned in [0, 16), bool true or false — the range a dtype's
  /// arithmetic cannot overflow in typical kernels. When every drawn element
  /// is zero (a one-element bool array, say), element 0 is set to 1.
  /// Deterministic for a given generator state.
  void fill_random(std::mt19937_64 &rng);
  /// Every byte drawn uniformly: for integer arrays that hold packed bit
  /// fields (int4 weights in uint8/uint32), whose every field must vary.
  void fill_random_bits(std::mt19937_64 &rng);
  /// Each 16 bits (little-endian halves of wider elements) the bfloat16 of a
  /// uniform value in [-1, 1) (so in [-1, 1] once rounded): for integer
  /// arrays whose bits the program reinterprets as floats (bfloat16 scales
  /// packed two to a uint32). Needs an element of 16 bits or more.
  void fill_random_bfloat16_halves(std::mt19937_64 &rng);

  /// Summary used by `tessera run`, each number printed with printf's "%.6g":
  ///   "A float32[2, 2] l2=5 max=4 mean=-0.25"
  /// l2 is sqrt(sum x^2), max the largest absolute value, mean the arithmetic
  /// mean (all computed in double; an empty array gives 0 for all three; a NaN
  /// element makes them nan).
  std::string summary(const std::string &name) const;

  /// "float32[128, 64]"; a 0-d array is "float32[]".
  std::string type_str() const;

 private:
  ir::DataType dtype_;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  /// Starts a cache line: the JIT's vector accesses do not straddle two.
  std::vector<uint8_t, support::CacheLineAllocator<uint8_t>> bytes_;
  /// The memory of a wrapped array (wrap()); null for an owning one.
  uint8_t *external_ = nullptr;
  size_t external_bytes_ = 0;
};

/// The address of each of `arrays`, in order: the argument list
/// Interpreter::run and LlvmJit::run take.
std::vector<NDArray *> pointers_to(std::vector<NDArray> &arrays);

/// Largest relative error of `a` against the reference `b`, over elements i:
///   |a_i - b_i| / max(|b_i|, 1e-6 * max_j |b_j|, DBL_MIN)
/// (max_j over finite b_j). Equal elements (also equal infinities, or NaN in
/// both) count 0; NaN in one only counts infinity. Dtypes may differ (a
/// float16 result against a float32 reference). Different shapes are a UserError.
double max_rel_error(const NDArray &a, const NDArray &b);
/// Element-wise |a - b| <= atol + rtol * |b| (NaN equals NaN, equal infinities
/// are close). False when the shapes differ. For transformations that keep
/// the order of every operation (the result must be equal, or nearly).
bool allclose(const NDArray &a, const NDArray &b, double rtol, double atol);
// Whether a result computed in another order (a schedule, a GPU kernel) is
// right is runtime/Verify.h's question: check_outputs against the original's
// float64 reference and its rounding-error bounds.

}  // namespace tessera::runtime
