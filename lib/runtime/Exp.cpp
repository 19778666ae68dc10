//===- lib/runtime/Exp.cpp - exp_of, compiled for the CPU it runs on -------===//
#include "Exp.h"

namespace tessera::runtime::detail {

namespace {

// std::fma is one instruction where the CPU has FMA and a libm call where it
// does not: two versions, chosen when the library is loaded (the bits are
// the same: fma is exact either way). flatten: exp_with inlined into each.
// A function of its own: clang refuses to make exp_of multiversioned once
// Exp.h's float overload has used it. clang (the sanitizer build) does not
// take flatten with target_clones; it inlines exp_with or not, same bits.
#if defined(__clang__)
__attribute__((target_clones("fma", "default")))
#else
__attribute__((target_clones("fma", "default"), flatten))
#endif
double exp_for_this_cpu(double x) {
  if (std::isnan(x)) return x;  // no integer conversion of a NaN
  DoubleExpOps o;
  return exp_with(o, x);
}

}  // namespace

double exp_of(double x) { return exp_for_this_cpu(x); }

}  // namespace tessera::runtime::detail
