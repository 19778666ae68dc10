//===- Codegen.h - A PrimFunc to LLVM IR (private) -------------------------===//
//
// generate_module emits one function, `name`, with JitRuntime.h's kernel
// signature for the program the interpreter compiled (its slot layout is
// the ABI: scalar parameters and shape variables are read from iv/fv, the
// parameter buffers' data pointers from bufs). JitUnsupportedError for a
// construct it has no code for.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "../Closures.h"
#include "JitRuntime.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace tessera::runtime::detail {

struct GeneratedModule {
  std::unique_ptr<llvm::Module> module;
  std::vector<JitSite> sites;
  int num_allocs = 0;
  /// The warp-level statements the code calls (tessera_jit_warp), which
  /// must live as long as it.
  std::vector<std::unique_ptr<WarpStatement>> warp;
};

struct CodegenOptions {
  /// Run the independent outermost loops through tessera_jit_parallel_for
  /// (CodegenParallel.cpp), else all in one function.
  bool parallel = false;
  /// Mark float32/float64 multiplies, adds and subtracts contractible, so
  /// that LLVM fuses a multiply-add pair (LlvmJitOptions::fuse_multiply_add).
  bool fuse_multiply_add = false;
};

GeneratedModule generate_module(const Program &p, llvm::LLVMContext &ctx, const std::string &name,
                                const CodegenOptions &options);

}  // namespace tessera::runtime::detail
