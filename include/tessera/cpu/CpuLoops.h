//===- tessera/cpu/CpuLoops.h - CPU schedules of a single loop nest --------===//
//
// What the CPU target does with a function of one block that is not a
// matmul (CpuSchedule.h has those): loop orders for the memory system,
// offered as candidates for the tuner to time (tune/CpuTune.h), each
// verified against the float64 reference like any schedule:
//
//   tile2d T        a copy or elementwise block over two or more loops (a
//                   transpose): the last two loops in T x T tiles, so that
//                   both the reads and the writes stay within cache lines
//                   the tile keeps; the first loop over the cores, the
//                   innermost vectorized.
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
  /// "tile2d", "reduce_outer" or "rfactor".
  std::string kind;
  int64_t tile = 0;
  /// {"loops":"tile2d","tile":32}
  std::string str() const;
  /// str()'s JSON back; nullopt for a JSON object without "loops" (a matmul
  /// config, CpuSchedule.h), UserError for a malformed one.
  static std::optional<CpuLoopConfig> parse(const std::string &json);
};

/// The loop schedules worth timing for `f` (empty unless `f` is one block,
/// bound to its own loops, unscheduled and unguarded, and one of the shapes
/// of the file comment).
std::vector<CpuLoopConfig> cpu_loop_candidates(const ir::PrimFunc &f);

/// `f` scheduled by `config`: UserError when the config is not one of its
/// candidates' kinds, the schedule primitives' errors when it does not apply.
ir::PrimFunc schedule_loops_for_cpu(const ir::PrimFunc &f, const CpuLoopConfig &config);

}  // namespace tessera::cpu
