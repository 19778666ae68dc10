//===- OpaqueCalls.h - The calls tessera parses without knowing them -----*- C++ -*-===//
//
// Private to lib/script. TVM prints many built-ins tessera has no semantics
// for (extern and packed calls, tensor-core and PTX intrinsics of already
// lowered code, T.ret, ...). They are read into ir::OpaqueCall and printed
// back as written; a function that holds one is refused by the interpreter,
// the rules and code generation with the callee's name.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/Expr.h"

namespace tessera::script::detail {

/// Whether `callee` ("T.call_extern") is a TVM built-in read as an opaque call.
bool is_opaque_callee(const std::string &callee);

/// The call_extern family names its result type in its first argument:
/// T.call_extern("float32", "expf", x).
bool dtype_in_first_arg(const std::string &callee);

/// The type an opaque call has when the text gives none: the first argument's
/// for the call_extern family, a handle for `A.access_ptr(...)` (callee
/// "access_ptr", the buffer's address first), else int32 (TVM's type of its
/// void calls).
ir::DataType default_opaque_dtype(const std::string &callee, const std::vector<ir::Expr> &args);

}  // namespace tessera::script::detail
