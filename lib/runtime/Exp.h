//===- lib/runtime/Exp.h - exp, the same bits in the interpreter and the JIT ===//
//
// Private to lib/runtime. T.exp is what softmax, layer norms and their
// float64 references spend their time in; libm's exp is a call per element
// that LLVM cannot vectorize. Both executors compute it instead with this one
// algorithm, written once over an "ops" type: plain doubles for the
// interpreter (and the JIT's fallback symbols), IRBuilder values for the LLVM
// JIT (llvm/CodegenExpr.cpp), which inlines it and vectorizes the loop
// around it. Only operations IEEE 754 defines exactly are used (+, *, fma,
// roundeven, integer bit operations, compares and selects), so the two give
// the same bits for every input.
//
// The algorithm: n = x / ln 2 rounded to an integer, r = x - n ln 2 (|r| <= ln2 / 2,
// with ln 2 split in two so that the subtraction loses nothing), e^r by its
// Taylor series to r^13 / 13! (truncation below 5e-18, relative), evaluated
// by Estrin's scheme in fmas, then scaled by 2^n in two halves (each a normal
// power of two, so the only rounding is the last one, gradual underflow
// included). Measured against libm over 10^7 random arguments of [-745, 710]:
// at most 2 ulp apart (tests/runtime/ExpTest.cpp). float32 (and float16)
// exp is this exp of the widened argument, rounded to the type.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tessera::runtime::detail {

/// ln(DBL_MAX): above it exp is +inf.
inline constexpr double kExpMax = 709.782712893384;
/// Below it exp is 0 (under half the smallest subnormal).
inline constexpr double kExpMin = -745.1332191019412;
inline constexpr double kLog2e = 1.4426950408889634;
/// ln 2 = kLn2Hi + kLn2Lo, kLn2Hi the double nearest.
inline constexpr double kLn2Hi = 0.6931471805599453;
inline constexpr double kLn2Lo = 2.3190468138462996e-17;
/// 1.5 * 2^52: v + this - this rounds v to an integer, ties to even.
inline constexpr double kRoundShift = 6755399441055744.0;
/// 1 / i! for i = 0..13.
inline constexpr double kExpTaylor[14] = {1.0,
                                          1.0,
                                          0.5,
                                          0.16666666666666666,
                                          0.041666666666666664,
                                          0.008333333333333333,
                                          0.001388888888888889,
                                          0.0001984126984126984,
                                          2.48015873015873e-05,
                                          2.7557319223985893e-06,
                                          2.755731922398589e-07,
                                          2.505210838544172e-08,
                                          2.08767569878681e-09,
                                          1.6059043836821613e-10};

/// exp(x) for float64 `x` through `o`, which provides (on its value types F,
/// a float64, and I, an int64): F c(double); F mul(F, F), add_f(F, F),
/// sub_f(F, F); F fma(F, F, F); I to_int(F) (of an integral value); I shr1(I) (arithmetic
/// shift right by one); I sub(I, I); F pow2(I) (2^k for a normal exponent k);
/// and F select_gt(F x, double bound, F then, F otherwise) (x > bound ? then :
/// otherwise), select_lt likewise, F select_nan(F x, F then, F otherwise).
template <typename Ops, typename F = typename Ops::F>
F exp_with(Ops &o, F x) {
  // Clamped so that n stays where 2^n splits into two normal halves; a NaN
  // stays NaN through the clamp and is returned at the end.
  F xc = o.select_gt(x, kExpMax, o.c(kExpMax), o.select_lt(x, kExpMin, o.c(kExpMin), x));
  // Rounded to the nearest integer, ties to even, by adding and taking away
  // 1.5 * 2^52 (exact for |v| < 2^51; here |v| < 1100).
  F n = o.sub_f(o.add_f(o.mul(xc, o.c(kLog2e)), o.c(kRoundShift)), o.c(kRoundShift));
  F r = o.fma(n, o.c(-kLn2Hi), xc);
  r = o.fma(n, o.c(-kLn2Lo), r);
  // Estrin's scheme: pairs, then pairs of pairs (a chain of 5 operations
  // instead of Horner's 14: the interpreter is latency-bound).
  F r2 = o.mul(r, r), r4 = o.mul(r2, r2), r8 = o.mul(r4, r4);
  F q[7];
  for (int i = 0; i < 7; ++i) q[i] = o.fma(o.c(kExpTaylor[2 * i + 1]), r, o.c(kExpTaylor[2 * i]));
  F s0 = o.fma(q[1], r2, q[0]), s1 = o.fma(q[3], r2, q[2]), s2 = o.fma(q[5], r2, q[4]);
  F t0 = o.fma(s1, r4, s0), t1 = o.fma(q[6], r4, s2);
  F p = o.fma(t1, r8, t0);
  auto k = o.to_int(n);                 // in [-1076, 1024]
  auto k1 = o.shr1(k), k2 = o.sub(k, k1);  // each in [-538, 512]
  F y = o.mul(o.mul(p, o.pow2(k1)), o.pow2(k2));
  F inf = o.c(std::numeric_limits<double>::infinity());
  return o.select_nan(x, x, o.select_gt(x, kExpMax, inf, o.select_lt(x, kExpMin, o.c(0.0), y)));
}

/// The ops on plain doubles.
struct DoubleExpOps {
  using F = double;
  double c(double v) const { return v; }
  double mul(double a, double b) const { return a * b; }
  double add_f(double a, double b) const { return a + b; }
  double sub_f(double a, double b) const { return a - b; }
  double fma(double a, double b, double c) const { return std::fma(a, b, c); }
  int64_t to_int(double a) const { return static_cast<int64_t>(a); }
  int64_t shr1(int64_t a) const { return a >> 1; }
  int64_t sub(int64_t a, int64_t b) const { return a - b; }
  double pow2(int64_t k) const {
    const uint64_t bits = static_cast<uint64_t>(k + 1023) << 52;
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  double select_gt(double x, double bound, double t, double e) const { return x > bound ? t : e; }
  double select_lt(double x, double bound, double t, double e) const { return x < bound ? t : e; }
  double select_nan(double x, double t, double e) const { return std::isnan(x) ? t : e; }
};

/// T.exp as both executors compute it (Exp.cpp: built for FMA and for
/// plain x86-64, the one the CPU has chosen at load time).
double exp_of(double x);
inline float exp_of(float x) { return static_cast<float>(exp_of(static_cast<double>(x))); }

}  // namespace tessera::runtime::detail
