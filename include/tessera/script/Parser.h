//===- tessera/script/Parser.h - Reading TVMScript -------------------------===//
//
// Parses the TVMScript subset that TensorIR programs use into PrimFuncs. Both
// spellings are accepted: classic (`T.block`, `T.alloc_buffer`,
// `"tir.noalias"`) and current (`T.sblock`, `T.sblock_alloc_buffer`,
// `"tirx.noalias"`), so the output of TVM's `mod.script()` can be pasted
// as is. A file holds one `@T.prim_func` or an `@I.ir_module` class of them.
//
//   @T.prim_func
//   def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
//       for i, k in T.grid(128, 128):
//           with T.block("B"):
//               vi, vk = T.axis.remap("SR", [i, k])
//               with T.init():
//                   B[vi] = T.float32(0)
//               B[vi] = B[vi] + A[vi, vk]
//
// Type rules follow TVMScript: a Python literal takes the type of the other
// operand (an int literal stored into a float16 buffer is converted), mixed
// types promote as in ir/Op.h, block reads/writes are inferred when not
// written (ir/AccessRegions.h), and the body becomes the function's root
// block. Errors are ParseErrors; the parser never returns a partial result.
//
// Choices where TVMScript leaves room (kept in step with the printer):
//   - `T.serial/parallel/vectorized/unroll(a, b)` and `T.thread_binding(a, b,
//     thread=...)` mean [a, b) as in TVMScript, not (min, extent);
//     `T.axis.spatial((a, b), v)` likewise is the domain [a, b);
//   - `with T.block():` without a name makes a block named "" (TVMScript's
//     default);
//   - a value stored into a buffer, or bound by `x: T.int32 = ...`, must have
//     that type; only Python literals convert (`B[i] = 0` into float16 is
//     T.float16(0)); anything else is an error that suggests T.Cast;
//   - `**` on floats is T.pow; on integers the exponent must be a constant in
//     [0, 64] and the power is expanded into multiplications;
//   - `&` and `|` on two bools are logical and/or; `a if c else b` is
//     T.if_then_else; `T.likely(x)` is x;
//   - `T.let(v, value, body)` declares a new `v` (typed by `value`) for `body`;
//     `x = value` binds a LetStmt over the rest of its statement list;
//   - a 0-d buffer is indexed as `A[()]`;
//   - buffer kwargs the IR does not model (offset_factor, align, elem_offset,
//     axis_separators, buffer_type) are accepted and dropped, as are
//     `@T.prim_func(private=..., check_well_formed=...)`; attrs are stored as
//     written ("tir.noalias" and "tirx.noalias" alike);
//   - a `with T.block("root"):` that is the function's body is its root block
//     (its reads/writes stay empty); function-level T.alloc_buffer goes into
//     the root block that the parser then builds.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

#include "tessera/ir/Func.h"
#include "tessera/support/Error.h"

namespace tessera::script {

/// A syntax or typing error in TVMScript text, with its position.
/// what() is the full rendering:
///   prog.py:3:17: error: expected ')' to close '(' from 3:9, found ':'
///       def main(A: T.Buffer((128,), "float32"):
///                   ^
class ParseError : public UserError {
 public:
  ParseError(std::string file, int line, int col, std::string message, std::string rendered)
      : UserError(rendered), file(std::move(file)), line(line), col(col), message(std::move(message)) {}
  std::string file;
  int line;  ///< 1-based
  int col;   ///< 1-based
  /// The message without position and source line: "expected ')' ..., found ':'".
  std::string message;
};

/// Parses a module (one prim_func or an ir_module class). `file` is used in
/// error messages only.
ir::Module parse_module(std::string_view text, std::string_view file = "<string>");

/// Parses text that must hold exactly one PrimFunc (either a bare
/// `@T.prim_func` or a module with one function).
ir::PrimFunc parse_func(std::string_view text, std::string_view file = "<string>");

/// Reads and parses a file; a missing file is a UserError naming the path.
ir::Module parse_file(const std::string &path);

}  // namespace tessera::script
