//===- tessera/support/Half.h - float16 / bfloat16 conversions -------------===//
//
// Bit-exact conversions between float and the two 16-bit float formats, with
// round-to-nearest-even, used by constants and by the interpreter (which
// rounds every float16/bfloat16 result after each operation, as the GPU does).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstring>

namespace tessera {

/// IEEE binary16 bits of `f`, rounded to nearest even (overflow -> inf, NaN kept).
inline uint16_t float_to_half_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<uint16_t>(half);
}

/// The float value of IEEE binary16 bits.
inline float half_bits_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// bfloat16 bits of `f`, rounded to nearest even (NaN kept quiet).
inline uint16_t float_to_bfloat16_bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  x += 0x7fffu + lsb;
  return static_cast<uint16_t>(x >> 16);
}

inline float bfloat16_bits_to_float(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// Rounds a double to the nearest float16 value (via float, as C does for half(x)).
inline double round_to_half(double v) {
  return half_bits_to_float(float_to_half_bits(static_cast<float>(v)));
}
inline double round_to_bfloat16(double v) {
  return bfloat16_bits_to_float(float_to_bfloat16_bits(static_cast<float>(v)));
}

/// `f` rounded to TensorFloat-32 precision (10 mantissa bits, float32's
/// exponent) to nearest, ties away from zero, as PTX's `cvt.rna.tf32.f32`;
/// the 13 low mantissa bits of the result are zero, infinity and NaN are
/// kept, a value past the largest tf32 rounds to infinity.
inline float round_to_tf32(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0x7f800000u) return f;
  x = (x + 0x1000u) & 0xffffe000u;
  std::memcpy(&f, &x, 4);
  return f;
}
/// `f` as tensor cores read a tf32 operand: its 13 low mantissa bits dropped
/// (truncated; T.round_to_tf32 makes them zero first), infinity and NaN kept.
inline float truncate_to_tf32(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) != 0x7f800000u) x &= 0xffffe000u;
  std::memcpy(&f, &x, 4);
  return f;
}

/// The same rounding of a double (the float64 reference): 11 significant
/// bits, ties away from zero, the 42 low mantissa bits cleared.
inline double round_to_tf32(double v) {
  uint64_t x;
  std::memcpy(&x, &v, 8);
  if ((x & 0x7ff0000000000000ull) == 0x7ff0000000000000ull) return v;
  x = (x + (uint64_t{1} << 41)) & ~((uint64_t{1} << 42) - 1);
  std::memcpy(&v, &x, 8);
  return v;
}

}  // namespace tessera
