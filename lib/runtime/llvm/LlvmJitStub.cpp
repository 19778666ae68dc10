//===- LlvmJitStub.cpp - runtime::LlvmJit when built without LLVM ----------===//
#include "tessera/runtime/LlvmJit.h"

namespace tessera::runtime {

bool llvm_jit_available() { return false; }
double llvm_jit_compile_ms_total() { return 0; }
unsigned llvm_jit_threads() { return 1; }
void set_llvm_jit_threads(unsigned) {}

struct LlvmJit::Impl {};

LlvmJit::LlvmJit(const ir::PrimFunc &f, const LlvmJitOptions &) {
  throw JitUnsupportedError("cannot compile function '" + f.name() +
                            "' with the LLVM JIT: tessera was built without LLVM (TESSERA_ENABLE_LLVM)");
}
LlvmJit::~LlvmJit() = default;
LlvmJit::LlvmJit(LlvmJit &&) noexcept = default;
LlvmJit &LlvmJit::operator=(LlvmJit &&) noexcept = default;
void LlvmJit::run(std::vector<NDArray *>) const {}
double LlvmJit::compile_ms() const { return 0; }
bool LlvmJit::from_cache() const { return false; }

}  // namespace tessera::runtime
