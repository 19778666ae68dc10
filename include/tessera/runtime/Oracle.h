//===- tessera/runtime/Oracle.h - Which CPU executor computes references ---===//
//
// The numeric oracle (the float64 reference of runtime/Verify.h, and the
// serial run of a scheduled program that `tessera schedule --verify` checks)
// runs on the CPU in one of two executors with the same semantics: the
// interpreter (runtime/Interpreter.h, always there, slow) or the LLVM JIT
// (runtime/LlvmJit.h, compiled code, 50x and more faster on loops). `auto`
// takes the JIT when tessera was built with it and it compiles the program
// (JitUnsupportedError otherwise), else the interpreter. The environment variable TESSERA_ORACLE
// (interpreter|llvm|auto) sets what `auto` means for a whole process.
//
//   std::vector<NDArray> args = ...;
//   Oracle used = execute(f, args, Oracle::Auto);   // Oracle::Llvm or Oracle::Interpreter
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/NDArray.h"

namespace tessera::runtime {

enum class Oracle { Auto, Interpreter, Llvm };

/// "auto", "interpreter" or "llvm".
const char *oracle_name(Oracle o);
/// Parses an oracle name; UserError naming the choices otherwise.
Oracle parse_oracle(const std::string &name);
/// Auto resolved through TESSERA_ORACLE (Auto when unset or "auto").
Oracle resolve_oracle(Oracle o);

/// Runs `f` on `args` (modified in place, as Interpreter::run) with `oracle`;
/// returns the executor that ran (Llvm or Interpreter). Llvm: a program the
/// JIT refuses is a JitUnsupportedError. Auto: such a program, or a build
/// without LLVM, runs in the interpreter. Run-time errors (out of bounds, ...)
/// are the InterpretError of either executor.
Oracle execute(const ir::PrimFunc &f, std::vector<NDArray> &args, Oracle oracle = Oracle::Auto);

}  // namespace tessera::runtime
