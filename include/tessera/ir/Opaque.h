//===- tessera/ir/Opaque.h - Code tessera cannot see into --------------------===//
//
// ir::OpaqueCall (Expr.h) keeps what TVM prints but tessera has no semantics
// for (T.call_extern, T.tvm_fill_fragment, T.ret, ...). A function holding one
// parses and prints; everything that must know what it computes (the
// interpreter, the rules, lowering, code generation) refuses it up front with
// the callee's name and where it sits:
//
//   if (auto what = ir::find_opaque(f)) throw UserError("... " + *what);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>

#include "tessera/ir/Func.h"

namespace tessera::ir {

/// The first opaque call of `f`, described for a message:
/// "T.call_extern(\"float32\", \"expf\", A[vi]) in block 'B'"; nullopt if none.
std::optional<std::string> find_opaque(const PrimFunc &f);

/// UserError "cannot <what> function 'main': it calls T.call_extern(...) in
/// block 'B', which tessera has no semantics for (an opaque call)" when `f`
/// holds an opaque call.
void check_no_opaque(const PrimFunc &f, const std::string &what);

}  // namespace tessera::ir
