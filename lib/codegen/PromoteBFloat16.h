//===- lib/codegen/PromoteBFloat16.h - bfloat16 arithmetic in float -------===//
//
// Private to lib/codegen. Before sm_80 there are no bfloat16 arithmetic
// instructions, so CodegenCUDA computes each bfloat16 operation in float and
// rounds the result back (the interpreter's semantics: one rounding per
// operation):
//   a * b + c   ->   bf16(float(bf16(float(a) * float(b))) + float(c))
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/ir/Stmt.h"

namespace tessera::codegen::detail {

/// Rewrites bfloat16 arithmetic, comparisons, min/max, negation and math
/// intrinsics as float operations between conversions; moves, selects and
/// reinterprets stay as they are.
ir::Stmt promote_bfloat16_to_float(const ir::Stmt &s);

}  // namespace tessera::codegen::detail
