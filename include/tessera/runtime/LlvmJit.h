//===- tessera/runtime/LlvmJit.h - PrimFuncs compiled for the CPU by LLVM --===//
//
// A drop-in, much faster alternative to the Interpreter (runtime/Interpreter.h):
// the PrimFunc is compiled to LLVM IR once, optimised with LLVM's O2 pipeline
// for the host CPU and run through the ORC JIT. Same arguments, same binding
// and checking rules (the interpreter's own code: scalar parameters, symbolic
// dimensions bound from the first array dimension they appear as, dtype /
// rank / dimension mismatches are an InterpretError naming the argument), and
// the same semantics, exactly:
//   - serial semantics (DESIGN.md decision 2): thread-bound, parallel,
//     vectorized and unrolled loops run as plain loops, in order;
//   - integers wrap at their width, floordiv/floormod floor, truncdiv
//     truncates, INT_MIN / -1 wraps; division by zero, a shift amount outside
//     [0, bits), an iter var outside its domain, a false T.assume and an
//     out-of-bounds load or store are checked in the generated code and
//     reported as the interpreter's InterpretError, with the same text; the
//     run stops at the first one (the arrays may be partly written, as with
//     the interpreter), and memory outside the arrays is never touched;
//   - float16/bfloat16/float32 computed in float and rounded to the type after
//     every operation, float64 in double; the math functions call the same
//     libm functions the interpreter calls (no fast-math, no contraction), so
//     results are bit for bit the interpreter's (unless fuse_multiply_add
//     is set; NaNs: a NaN where the interpreter has one, its payload and
//     signalling bit not guaranteed);
//   - `alloc_buffer`s are fresh and poisoned each time their block runs.
//   - warp-level and asynchronous statements (T.ldmatrix, T.mma_sync,
//     T.cp_async and its groups, T.wgmma) run the interpreter's own per-lane
//     code, called from the compiled loops with the values it reads: the
//     same semantics and messages (a copy never waited for included), at
//     the interpreter's speed for those statements only (ldmatrix and the
//     addressing of mma.sync compiled). Parallel loops that issue
//     asynchronous copies run in parallel when each thread's chunk of
//     iterations waits for its own copies; a run where copies cross chunks
//     is undone (the written arrays restored) and run again on one thread.
// What the JIT does not compile (the rare warp statement that reads a float
// variable; everything when built without LLVM) is a JitUnsupportedError
// from the constructor, before anything runs: the caller runs the
// interpreter instead (runtime/Oracle.h does). What the interpreter refuses
// (T.shfl_xor, opaque calls) the JIT refuses with the same InterpretError.
//
// Compiled functions are cached by structural hash (ir/StructuralEqual.h)
// within the process, so a structurally equal PrimFunc compiles once.
//
//   runtime::LlvmJit jit(f);                   // compile (or take from the cache)
//   auto args = runtime::make_random_args(f, {{"n", 64}}, /*seed=*/0);
//   jit.run({&args[0], &args[1]});
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/NDArray.h"

namespace tessera::runtime {

/// The LLVM JIT cannot compile this program (a construct it has no code for,
/// or tessera was built without LLVM). The message names the construct.
class JitUnsupportedError : public UserError {
 public:
  using UserError::UserError;
};

/// True when tessera was built with the LLVM backend.
bool llvm_jit_available();

/// The threads a JIT-compiled function runs its independent outermost loops
/// on (analysis::cpu_parallel_loops): set_llvm_jit_threads, else the
/// environment's TESSERA_JIT_THREADS, else every core. 1 runs everything on
/// the calling thread. The results do not depend on it (the iterations are
/// independent; each computes what it computes serially).
unsigned llvm_jit_threads();
void set_llvm_jit_threads(unsigned n);

struct LlvmJitOptions {
  /// Take the code from the process's cache when a structurally equal
  /// function was compiled before (false: compile again; for benchmarks).
  bool use_cache = true;
  /// Compile, at each run, the function specialised to the values that run
  /// binds to its symbolic shape variables (analysis::specialize; one code
  /// per distinct set of values, kept with this object and in the cache).
  /// With every size a constant the index arithmetic is proven and its
  /// checks go away, loop trip counts are known and unrolled loops become
  /// straight code: a tiled GPU-style matmul compiles in a fraction of the
  /// time and runs faster. The constructor then only checks that the JIT can
  /// compile `f` (the same JitUnsupportedError); compile_ms() counts the
  /// variants compiled so far. A function without shape variables is
  /// compiled at once either way. The oracle (runtime/Oracle.h) runs this way.
  bool specialize_shapes = false;
  /// Fuse a float32/float64 multiply and the add or subtract that takes it
  /// into one fused multiply-add where LLVM finds the pair (one rounding
  /// instead of two, as NVRTC compiles CUDA by default). The results are
  /// then no longer the interpreter's bits, but within the verification
  /// bound: the fused operation is never less accurate. For the CPU
  /// target's timed code (half the instructions of a matmul's inner loop);
  /// the oracle never sets it. float16/bfloat16 arithmetic is rounded after
  /// every operation either way.
  bool fuse_multiply_add = false;
};

/// Milliseconds this process has spent compiling with the LLVM JIT so far
/// (every function, every thread): the difference around a call says what
/// that call spent compiling.
double llvm_jit_compile_ms_total();

/// A PrimFunc compiled for the host CPU; compile once, run many times.
class LlvmJit {
 public:
  /// Compiles `f` (or finds it in the process's cache). InterpretError for
  /// what the interpreter cannot run either, JitUnsupportedError for what
  /// only the interpreter runs.
  explicit LlvmJit(const ir::PrimFunc &f, const LlvmJitOptions &options = {});
  ~LlvmJit();
  LlvmJit(LlvmJit &&) noexcept;
  LlvmJit &operator=(LlvmJit &&) noexcept;

  /// Runs the function on `args`, exactly as Interpreter::run does (same
  /// binding rules, same errors). Concurrent runs on distinct arrays are safe.
  void run(std::vector<NDArray *> args) const;

  /// Milliseconds spent generating, optimising and JIT-compiling the code
  /// (0 when it came from the cache; with specialize_shapes, the variants
  /// compiled so far).
  double compile_ms() const;
  /// True when the compiled code came from the cache.
  bool from_cache() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::runtime
