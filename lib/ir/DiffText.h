//===- DiffText.h - Short renderings of IR for diff messages (private) ----===//
//
// Used by structural_diff (StructuralEqual.cpp) to name the two sides of the
// first difference it finds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tessera/ir/Func.h"

namespace tessera::ir::detail {

/// TVMScript-like one-line text of `e`, cut off below `depth` levels:
///   (A[i, k] * T.float32(2)), T.exp(...), "(undefined)" for an undefined expression.
std::string expr_text(const Expr &e, int depth = 6);

/// The path segment a statement contributes: "For(i)", "Block(C)", "Store(A)",
/// "Seq(3 statements)", "(nothing)" for an undefined statement.
std::string stmt_brief(const Stmt &s);

}  // namespace tessera::ir::detail
