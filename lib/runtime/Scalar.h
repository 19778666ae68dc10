//===- Scalar.h - Per-dtype element access and rounding (private) ---------===//
//
// The element formats the interpreter reads and writes, and the rounding of a
// float result to its type. Float arithmetic for float16, bfloat16 and float32
// is done in `float` and rounded to the type after every operation; float64 in
// `double` (FloatOps<K>::T is the computation type).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "tessera/ir/DataType.h"
#include "tessera/support/Half.h"

namespace tessera::runtime::detail {

/// The four float formats.
enum class FK : uint8_t { F16, BF16, F32, F64 };

inline FK float_kind(ir::DataType t) {
  if (t.is_bfloat16()) return FK::BF16;
  if (t.bits() == 16) return FK::F16;
  if (t.bits() == 32) return FK::F32;
  return FK::F64;
}

template <FK K>
struct FloatOps {
  /// The type arithmetic is done in.
  using T = std::conditional_t<K == FK::F64, double, float>;
  /// Rounds a result computed in T to the format, as a double.
  static double fin(T r) {
    if constexpr (K == FK::F16)
      return half_bits_to_float(float_to_half_bits(r));
    else if constexpr (K == FK::BF16)
      return bfloat16_bits_to_float(float_to_bfloat16_bits(r));
    else
      return static_cast<double>(r);
  }
};

/// Storage tags for the formats that have no C++ type of their own.
struct HalfTag {};
struct BF16Tag {};
struct BoolTag {};

/// Element `off` of an array of `E` at `p` (memcpy: `p` need not be aligned).
template <typename E>
inline E load_elem(const uint8_t *p, int64_t off) {
  E v;
  std::memcpy(&v, p + off * static_cast<int64_t>(sizeof(E)), sizeof(E));
  return v;
}

/// Stores `v` as element `off` of an array of `E` at `p`.
template <typename E>
inline void store_elem(uint8_t *p, int64_t off, E v) {
  std::memcpy(p + off * static_cast<int64_t>(sizeof(E)), &v, sizeof(E));
}

template <typename E>
inline int64_t read_int(const uint8_t *p, int64_t off) {
  if constexpr (std::is_same_v<E, BoolTag>)
    return p[off] != 0;
  else
    return static_cast<int64_t>(load_elem<E>(p, off));
}

template <typename E>
inline void write_int(uint8_t *p, int64_t off, int64_t v) {
  if constexpr (std::is_same_v<E, BoolTag>)
    p[off] = v != 0;
  else
    store_elem<E>(p, off, static_cast<E>(v));
}

template <typename E>
inline double read_float(const uint8_t *p, int64_t off) {
  if constexpr (std::is_same_v<E, HalfTag>)
    return half_bits_to_float(load_elem<uint16_t>(p, off));
  else if constexpr (std::is_same_v<E, BF16Tag>)
    return bfloat16_bits_to_float(load_elem<uint16_t>(p, off));
  else
    return static_cast<double>(load_elem<E>(p, off));
}

template <typename E>
inline void write_float(uint8_t *p, int64_t off, double v) {
  if constexpr (std::is_same_v<E, HalfTag>)
    store_elem<uint16_t>(p, off, float_to_half_bits(static_cast<float>(v)));
  else if constexpr (std::is_same_v<E, BF16Tag>)
    store_elem<uint16_t>(p, off, float_to_bfloat16_bits(static_cast<float>(v)));
  else
    store_elem<E>(p, off, static_cast<E>(v));
}

/// Calls `fn.template operator()<E>()` with the storage type of integer/bool dtype `t`.
template <typename Fn>
decltype(auto) dispatch_int_storage(ir::DataType t, Fn &&fn) {
  if (t.is_bool()) return fn.template operator()<BoolTag>();
  bool s = t.is_int();
  switch (t.bits()) {
    case 8: return s ? fn.template operator()<int8_t>() : fn.template operator()<uint8_t>();
    case 16: return s ? fn.template operator()<int16_t>() : fn.template operator()<uint16_t>();
    case 32: return s ? fn.template operator()<int32_t>() : fn.template operator()<uint32_t>();
    default: return s ? fn.template operator()<int64_t>() : fn.template operator()<uint64_t>();
  }
}

/// Calls `fn.template operator()<E>()` with the storage type of float dtype `t`.
template <typename Fn>
decltype(auto) dispatch_float_storage(ir::DataType t, Fn &&fn) {
  switch (float_kind(t)) {
    case FK::F16: return fn.template operator()<HalfTag>();
    case FK::BF16: return fn.template operator()<BF16Tag>();
    case FK::F32: return fn.template operator()<float>();
    default: return fn.template operator()<double>();
  }
}

/// Calls `fn.template operator()<K>()` with the FK of float dtype `t`.
template <typename Fn>
decltype(auto) dispatch_fk(ir::DataType t, Fn &&fn) {
  switch (float_kind(t)) {
    case FK::F16: return fn.template operator()<FK::F16>();
    case FK::BF16: return fn.template operator()<FK::BF16>();
    case FK::F32: return fn.template operator()<FK::F32>();
    default: return fn.template operator()<FK::F64>();
  }
}

}  // namespace tessera::runtime::detail
