//===- Oracle.cpp - Choosing the interpreter or the LLVM JIT ---------------===//
#include "tessera/runtime/Oracle.h"

#include <cstdlib>

#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"

namespace tessera::runtime {

const char *oracle_name(Oracle o) {
  switch (o) {
    case Oracle::Interpreter: return "interpreter";
    case Oracle::Llvm: return "llvm";
    default: return "auto";
  }
}

Oracle parse_oracle(const std::string &name) {
  if (name == "auto") return Oracle::Auto;
  if (name == "interpreter") return Oracle::Interpreter;
  if (name == "llvm") return Oracle::Llvm;
  throw UserError("unknown oracle '" + name + "': expected interpreter, llvm or auto");
}

Oracle resolve_oracle(Oracle o) {
  if (o != Oracle::Auto) return o;
  const char *env = std::getenv("TESSERA_ORACLE");
  return env && *env ? parse_oracle(env) : Oracle::Auto;
}

Oracle execute(const ir::PrimFunc &f, std::vector<NDArray> &args, Oracle oracle) {
  oracle = resolve_oracle(oracle);
  std::vector<NDArray *> ptrs = pointers_to(args);
  if (oracle != Oracle::Interpreter && (oracle == Oracle::Llvm || llvm_jit_available())) {
    std::optional<LlvmJit> jit;
    try {
      jit.emplace(f, LlvmJitOptions{.specialize_shapes = true});
    } catch (const JitUnsupportedError &) {
      if (oracle == Oracle::Llvm) throw;
    }
    if (jit) {
      jit->run(std::move(ptrs));
      return Oracle::Llvm;
    }
  }
  Interpreter(f).run(std::move(ptrs));
  return Oracle::Interpreter;
}

}  // namespace tessera::runtime
