//===- tessera/cpu/CpuLoops.h - CPU schedules of loop nests ----------------===//
//
// What the CPU target does with a function that is not a matmul
// (CpuSchedule.h has those), of one block or (rows) of several: loop orders
// for the memory system and vectorized partial results,
// offered as candidates for the tuner to time (tune/CpuTune.h), each
// verified against the float64 reference like any schedule:
//
//   tile2d T        a copy or elementwise block over two or more loops (a
//                   transpose): the last two loops in T x T tiles, so that
//                   both the reads and the writes stay within cache lines
//                   the tile keeps; the first loop over the cores. A T
//                   larger than one 512-bit vector's V elements is walked in
//                   V x V tiles, the innermost loop vectorized: the JIT
//                   transposes those in registers (runtime/llvm/
//                   CodegenTranspose.cpp). Each T also with "stream": the
//                   stores non-temporal (no read for ownership of B's lines).
//   reduce_outer T  a reduction over the strided axis (B[j] = sum_k A[k, j]):
//                   the output loop in tiles of T, the reduction loop
//                   between the tile loops, so that consecutive outputs sum
//                   consecutive elements, each still in k order (the bits
//                   of the program).
//   rfactor L       a reduction over the contiguous axis (B[i] = sum_k
//                   A[i, k]) whose constant extent L divides: L partial sums
//                   per output, vectorized, then summed (rfactor): the sum's
//                   order changes, within the float64 bound the
//                   verification holds it to.
//
//   rows L          a function of several blocks (a softmax, a gemv with its
//                   decode): each intermediate that one other block reads is
//                   computed where it is read (compute_inline: a dequantised
//                   weight is never stored); each reduction over its
//                   innermost loop whose constant extent L divides gets L
//                   vectorized partial results as in rfactor (set before
//                   their reduce loop, so they stay in registers across
//                   it), its rows over the cores; each other block whose
//                   innermost loop L divides runs its rows over the cores
//                   and that loop in vectors of L. Offered when some
//                   reduction gets lanes; fused too ("fuse"), where every
//                   block can be computed under the last one's outermost
//                   loop (compute_at): one row through all the blocks while
//                   its intermediates are in the caches. Word-major too
//                   ("words": P) where a reduction reads packed words at
//                   r // P (an int4 gemv's eight values a uint32): its L
//                   lanes are L consecutive words, each shifted by the same
//                   nibble in the inner reduce loop, instead of L
//                   consecutive elements, each picking its word apart; the
//                   vector it multiplies by is copied once per call in the
//                   order the lanes read it (x'[r % P, r // P]).
//
//   for (const CpuLoopConfig &c : cpu_loop_candidates(f))
//     ir::PrimFunc g = schedule_loops_for_cpu(f, c);
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"

namespace tessera::cpu {

struct CpuLoopConfig {
  /// "tile2d", "reduce_outer", "rfactor" or "rows" (whose tile is the lanes L).
  std::string kind;
  int64_t tile = 0;
  /// tile2d: the block's stores streamed past the caches
  /// (ir::kStreamingStoresAnnotation), for outputs larger than the caches.
  bool stream = false;
  /// rows: every block computed under the last block's outermost loop (one
  /// row at a time through all of them), where compute_at allows it.
  bool fuse = false;
  /// rows: word-major lanes for a reduction that reads packed words at
  /// r // words (0: lanes over consecutive elements).
  int64_t words = 0;
  /// {"loops":"tile2d","tile":32}, {"loops":"tile2d","tile":32,"stream":true},
  /// {"loops":"rows","tile":16,"fuse":true}, {"loops":"rows","tile":16,"words":8}
  std::string str() const;
  /// str()'s JSON back; nullopt for a JSON object without "loops" (a matmul
  /// config, CpuSchedule.h), UserError for a malformed one.
  static std::optional<CpuLoopConfig> parse(const std::string &json);
};

/// The loop schedules worth timing for `f` (empty unless `f` is one block,
/// bound to its own loops, unscheduled and unguarded, and one of the shapes
/// of the file comment, or several blocks that `rows` applies to).
std::vector<CpuLoopConfig> cpu_loop_candidates(const ir::PrimFunc &f);

/// `f` scheduled by `config`: UserError when the config is not one of its
/// candidates' kinds, the schedule primitives' errors when it does not apply.
ir::PrimFunc schedule_loops_for_cpu(const ir::PrimFunc &f, const CpuLoopConfig &config);

}  // namespace tessera::cpu
