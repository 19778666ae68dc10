//===- tessera/tune/Reference.h - The reference result of a workload --------===//
//
// The float64 reference and error bounds (runtime/Verify.h) of a function on
// given inputs, at any size: the LLVM JIT runs the reference program when it
// compiles it (runtime/Oracle.h; options.oracle), else the interpreter when
// the function is small; a large one's reference program is scheduled by the
// fallback rule (one output element per thread, float64 arithmetic) and run
// on the device, and the interpreter is the last resort when that fails.
// fast_tune, the benchmarks and the GPU tests judge every candidate against it.
//
//   runtime::Reference ref = tuning::reference_for(f, inputs, dims, arch);
//   std::vector<runtime::OutputCheck> c = runtime::check_outputs(f, got, ref);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/arch/Arch.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/Verify.h"

namespace tessera::tuning {

/// Stores the unscheduled `func` executes with `dims` bound, counted where they
/// stand (a block's init not counted: it runs once per output, its body at
/// least as often),
/// each loop at its largest extent given the loops around it, an unbound
/// integer scalar parameter at its value in `dims` or else at 8
/// (make_random_args' largest), one read from a buffer at its type's largest
/// (saturating; INT64_MAX when an extent has no bound, e.g. a symbolic size
/// left out of `dims`): the
/// interpreter's work, give or take a constant factor.
int64_t loop_iterations(const ir::PrimFunc &func, const runtime::DimBindings &dims);

/// The memory (bytes) a CPU check of `func` at `dims` holds, estimated: each
/// parameter's array, and per element the float64 copy the reference program
/// runs on, its error variance and the reference kept (24 bytes). A 128^4
/// float32 elementwise program: 15 GB (measured 14.8 GB).
double verification_bytes(const ir::PrimFunc &func, const runtime::DimBindings &dims);

struct ReferenceOptions {
  /// Above this many loop iterations (of the original program, with `dims`
  /// bound) the reference runs on the device when there is one.
  int64_t interpreter_limit = int64_t(1) << 22;
  /// Never use the device (the CPU executors at any size).
  bool interpreter_only = false;
  /// The CPU executor (runtime/Oracle.h): auto takes the LLVM JIT when it
  /// compiles the reference program and the work is at most `llvm_limit`
  /// loop iterations per core it runs on (runtime::llvm_jit_threads()),
  /// before the device.
  runtime::Oracle oracle = runtime::Oracle::Auto;
  int64_t llvm_limit = int64_t(1) << 30;
};

struct ComputedReference {
  runtime::Reference ref;
  /// "llvm", "interpreter" or "device (fallback rule, float64)".
  std::string how;
};

/// The reference of `f` on `inputs` (f's arguments; not modified). UserError
/// when neither the device nor the interpreter can compute it.
ComputedReference reference_for(const ir::PrimFunc &f, const std::vector<runtime::NDArray> &inputs,
                                const runtime::DimBindings &dims, const Arch &arch,
                                const ReferenceOptions &options = {});

}  // namespace tessera::tuning
