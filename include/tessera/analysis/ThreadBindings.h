//===- tessera/analysis/ThreadBindings.h - Nested loops on one thread axis --===//
//
// A loop bound to a thread axis inside another loop bound to the same axis
// does not iterate on the GPU: both are the same threads, so the inner
// loop's variable is the outer one's (TVM's UnifyThreadBinding; tessera's
// launch extraction). dlight writes this for every cooperative fetch: the
// copy's threadIdx.x loop below the compute's.
//
//   for tx in T.thread_binding(128, thread="threadIdx.x"):
//     for k0 in range(K // 32):
//       for tx2 in T.thread_binding(128, thread="threadIdx.x"):   # tx2 = tx on the GPU
//         A_shared[tx2] = A[k0 * 128 + tx2]
//       ... reads all of A_shared ...
//
// tessera's CPU executors run thread loops as loops, one thread after the
// other, so there thread tx runs the copy for every tx2: each thread does the
// whole block's share. That is what the kernel computes (where its barriers
// are right) when the nested body is the same whichever thread runs it and
// running it again changes nothing — a copy. It is not when the body
//   - uses a variable that differs between threads (the enclosing thread
//     loops' variables, or what is computed from them or from thread-local
//     buffers),
//   - reads or writes a thread-local buffer (scope other than global and
//     shared: each thread has its own), or
//   - reads a buffer it also writes (B[tx2] = B[tx2] + 1 adds once per thread
//     on the GPU, once per thread per thread serially).
// nested_thread_binding_refusal names the first such loop and why, so the
// interpreter and the LLVM JIT refuse to run it instead of computing
// something the kernel does not. Nested blockIdx loops are judged the same
// way (their bodies may not depend on the enclosing blockIdx either).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>

#include "tessera/ir/Func.h"

namespace tessera::analysis {

/// Why running `f`'s loops serially would not compute what its kernel does
/// (above), naming the loop; nullopt when it would.
std::optional<std::string> nested_thread_binding_refusal(const ir::PrimFunc &f);

}  // namespace tessera::analysis
