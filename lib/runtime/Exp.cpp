//===- lib/runtime/Exp.cpp - exp_of, compiled for the CPU it runs on -------===//
#include "Exp.h"

namespace tessera::runtime::detail {

// std::fma is one instruction where the CPU has FMA and a libm call where it
// does not: two versions, chosen when the library is loaded (the bits are
// the same: fma is exact either way). flatten: exp_with inlined into each.
__attribute__((target_clones("fma", "default"), flatten)) double exp_of(double x) {
  if (std::isnan(x)) return x;  // no integer conversion of a NaN
  DoubleExpOps o;
  return exp_with(o, x);
}

}  // namespace tessera::runtime::detail
