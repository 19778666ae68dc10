//===- tessera/analysis/Parallel.h - May a loop's iterations run at once? ---===//
//
// The dependence test the fallback rule binds loops to threads with:
//
//   std::string why = analysis::why_not_parallel(loop);
//   if (why.empty()) sch.bind(...);     // iterations are independent
//
// A loop is parallel when, for every buffer written anywhere under it, there
// is one dimension d such that every access to that buffer under the loop
// (loads and stores, in blocks or not, block iter vars replaced by their
// bindings) indexes d with the same expression e, and e advances by a
// non-zero constant when the loop variable advances by one while using no
// other variable bound under the loop. Distinct iterations then touch
// disjoint slices of every buffer they write, and read nothing another
// iteration writes. Buffers allocated under the loop are private to an
// iteration and need no test.
//
// The test is sound and simple: `B[i] = B[i] + A[i]` (in place) and
// `A[i, j] = 1` under `if i % 2 == 0` are parallel in i; the prefix sum
// `B[i + 1] = B[i] + A[i + 1]` is not (B is read at i and written at i + 1);
// a reduction loop is not (its output does not depend on it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/ir/Stmt.h"

namespace tessera::analysis {

/// Empty when the iterations of the For `loop` are independent (see the file
/// comment), else a sentence naming the buffer and accesses that prevent it.
std::string why_not_parallel(const ir::Stmt &loop);

/// A loop whose iterations a CPU may run on several cores at once.
struct CpuParallelLoop {
  const ir::For *loop = nullptr;
  /// For a loop bound to blockIdx: buffers allocated outside the loop in a
  /// scope a GPU block or thread owns ("shared", "local", "warp", ...) and
  /// written under it; each core needs its own copy, as each GPU block has
  /// its own. (A parallel loop's buffers are shared, as on a CPU.)
  std::vector<ir::Buffer> private_copies;
};

/// The outermost loops of `f` (no loop around them) whose iterations may run
/// at once on a CPU: loops bound to blockIdx and loops of kind parallel (the
/// program's own semantics: GPU blocks share no shared or local memory and
/// do not synchronise), and other loops (serial, unrolled, vectorized) that
/// why_not_parallel accepts. Loops bound to threadIdx are not (the threads of
/// a block synchronise), nor is anything under an outer loop.
std::vector<CpuParallelLoop> cpu_parallel_loops(const ir::PrimFunc &f);

}  // namespace tessera::analysis
