//===- JitRuntime.h - What JIT-compiled code calls back into (private) ----===//
//
// The generated function has the signature
//   int32_t kernel(int64_t *iv, double *fv, BufState *bufs, JitRunState *st)
// where iv/fv/bufs are the interpreter's Frame after detail::bind_arguments
// (scalar parameters and shape variables in their slots, parameter buffers
// in their BufState slots). It returns 0, or 1 after a tessera_jit_fail call
// recorded the error. The helpers below are called by the generated code:
// the libm functions (behind names LLVM does not recognise, so it cannot
// rewrite pow(10, x) into exp10(x) or constant-fold them differently),
// allocation, and error reporting. No LLVM header here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "../Closures.h"  // AsyncCopies, BufState, StmtExec (no LLVM)
#include "tessera/ir/DataType.h"
#include "tessera/ir/MmaFragments.h"

namespace tessera::runtime::detail {

/// One place in the program that can fail at run time, for the message.
struct JitSite {
  enum class Kind : uint8_t { OutOfBounds, DivZero, BadShift, Domain, Assume, NegativeDim };
  Kind kind = Kind::OutOfBounds;
  bool store = false;
  int ndim = 0;          // OutOfBounds: the access's rank
  std::string block;     // the enclosing block
  std::string what;      // buffer / operator / iter var name
  ir::DataType type;     // BadShift: the shifted type
};

/// The state of one run.
struct JitRunState {
  const std::vector<JitSite> *sites = nullptr;
  std::vector<std::vector<uint8_t>> allocs;
  std::string error;
  /// The cp.async copies in flight (tessera_jit_warp).
  AsyncCopies async;
};

/// The function issues cp.async, wgmma or TMA copies (statements of a queue).
bool has_async_queue(const ir::PrimFunc &f);
/// Makes this thread's non-temporal stores (kStreamingStoresAnnotation)
/// visible before what follows: they are weakly ordered on x86, so a worker
/// thread fences before its results are read elsewhere, and so does a run.
inline void order_streaming_stores() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_sfence();
#endif
}

/// The error a parallel loop reports when one of its chunks ends with
/// asynchronous copies or wgmma in flight (LlvmJit::run then runs serially).
inline const char *const kAsyncCrossedIterations = "\x01asynchronous copies crossed parallel iterations";

/// A warp-level or asynchronous statement (ldmatrix, mma.sync, cp.async and
/// its commit and wait) as the interpreter compiled it, against slots of its
/// own: the generated code writes the values of the variables it reads into
/// `iv` and the buffers it names into `bufs`, then tessera_jit_warp runs it.
/// The interpreter's code is the semantics (exact per lane) and the messages.
struct WarpStatement {
  std::unique_ptr<Program> scope;
  StmtPtr node;
  /// mma.sync: its form, for the compiled path (tessera_jit_mma).
  ir::mma::MmaVariant mma;
};

/// A helper's name and address, for the JIT's symbol table.
struct JitSymbol {
  const char *name;
  void *address;
};
/// Every helper the generated code may call.
const std::vector<JitSymbol> &jit_runtime_symbols();

/// The poison pattern of a fresh allocation (interpreter semantics).
enum class PoisonKind : int32_t { Int = 0, F16 = 1, BF16 = 2, F32 = 3, F64 = 4 };

}  // namespace tessera::runtime::detail

extern "C" {
/// Records the error of `site` (values: OutOfBounds idx[ndim] then shape[ndim];
/// DivZero x; BadShift y; Domain v, lo, n; NegativeDim d, v).
void tessera_jit_fail(tessera::runtime::detail::JitRunState *st, int32_t site, const int64_t *vals);
/// Storage for allocation `id` of `bytes` bytes, poisoned.
uint8_t *tessera_jit_alloc(tessera::runtime::detail::JitRunState *st, int32_t id, int64_t bytes, int32_t poison);
/// Runs `w` (a WarpStatement) with the slots the generated code filled.
/// Returns 0, or 1 with st->error the interpreter's message.
int32_t tessera_jit_warp(const tessera::runtime::detail::WarpStatement *w, int64_t *iv,
                         tessera::runtime::detail::BufState *bufs, tessera::runtime::detail::JitRunState *st);
/// One lane's mma.sync of `w` once its fragment offsets are known and
/// checked (MmaLane.h): a_off / b_off indexed by lane.
void tessera_jit_mma(const tessera::runtime::detail::WarpStatement *w, int64_t lane, uint8_t *d, int64_t d_off,
                     const uint8_t *a, const int64_t *a_off, const uint8_t *b, const int64_t *b_off);
/// Runs body(ctx, begin, end, state) over [0, n) in chunks on the JIT's
/// workers (runtime::llvm_jit_threads()), each with a run state of its own
/// (the calling thread's is `st`). Returns 0, or 1 with st->error the error
/// of the first failing iteration; kAsyncCrossedIterations when a chunk
/// ended with asynchronous copies in flight. Copies in flight at the start:
/// every iteration on the calling thread, in order.
int32_t tessera_jit_parallel_for(int32_t (*body)(void *, int64_t, int64_t, tessera::runtime::detail::JitRunState *),
                                 void *ctx, int64_t n, tessera::runtime::detail::JitRunState *st);
}
