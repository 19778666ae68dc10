//===- tessera/cpu/CpuSchedule.h - A function scheduled for the CPU --------===//
//
// The CPU target (`tessera schedule/tune --target cpu`): the same IR, the
// same schedule primitives, run by the LLVM JIT. A matmul block (one M, N
// and K iter bound to its own loop; analysis::match_matmul) is tiled for
// registers and cores,
//
//   for m0 (parallel):                  rows of C over the cores
//     for n0:
//       C tile = 0                      decompose_reduction
//       for k0: for k1:                 K in steps of tile_k (0: one step)
//         for m1 (unrolled):            tile_m rows
//           for n1 (vectorized):        tile_n columns, a multiple of the lanes
//             C[m, n] += A[m, k] * B[k, n]
//
// which keeps each output's terms summed in k order (the same bits as the
// original). With tile_mc, the cores take blocks of tile_mc rows and walk
// K in steps outermost within them (Goto's order), so that a tile_k x
// tile_n panel of B stays in L1 across a block's row tiles and the block's
// tile_mc x tile_k piece of A stays in L2 across the panels:
//
//   for mc (parallel):                  blocks of tile_mc rows of C
//     C block = 0
//     for k0:                           K in steps of tile_k
//       for n0:                         a panel of B
//         for m0:                       tile_m rows at a time
//           for k1: for m1 (unrolled): for n1 (vectorized): ... With pack_b, B is first copied (cache_read, transform_layout)
// into panels Bp[n // tile_n, k, n % tile_n], so that the inner loop reads
// it in order rather than one row of B apart. Anything else is left as it is: the JIT already runs the
// independent outermost loops on every core and LLVM vectorises inner loops.
//
//   CpuSchedule s = schedule_for_cpu(f, CpuMatmulConfig{4, 64, 256});
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/cpu/CpuArch.h"
#include "tessera/ir/Func.h"

namespace tessera::cpu {

struct CpuMatmulConfig {
  int64_t tile_m = 4, tile_n = 32;
  /// K per step (0: all of K in one step).
  int64_t tile_k = 0;
  /// B copied first into panels of tile_n columns with their K rows
  /// contiguous (a 2-d B whose N is a constant multiple of tile_n).
  bool pack_b = false;
  /// Rows of C per core's block, a multiple of tile_m (0: rows tile by tile,
  /// K innermost of the tile loops).
  int64_t tile_mc = 0;
  /// {"tile_m":4,"tile_n":32,"tile_k":0} (and "pack_b":true, "tile_mc":N when set)
  std::string str() const;
  /// str()'s JSON back; UserError naming a missing or wrong field.
  static CpuMatmulConfig parse(const std::string &json);
};

struct CpuSchedule {
  ir::PrimFunc func;
  /// "matmul" (tiled), or "plain" (left as it is) with `why`.
  std::string kind;
  std::string why;
  std::optional<CpuMatmulConfig> config;
};

/// `f` scheduled for the CPU (see the file comment): its matmul tiled with
/// `config` (else the first of cpu_matmul_candidates), anything else as it is.
/// UserError for a config that cannot tile it (a tile of 0 or less).
CpuSchedule schedule_for_cpu(const ir::PrimFunc &f, const CpuArch &arch,
                             const std::optional<CpuMatmulConfig> &config = std::nullopt);

/// The tilings worth timing for `f`'s matmul on `arch` (empty when `f` has
/// none), the default first: C tiles of 1-8 rows by 1-4 vectors (what the
/// registers hold; 8 rows by 2 vectors first), K whole or in steps that keep
/// a B panel in L2, each with B packed first where it can be; and, for a
/// matmul without batch dimensions whose M is a constant multiple, blocks
/// of 64 or 128 rows per core with K steps outside the tiles (tile_mc).
/// UserError (schedule_for_cpu) for pack_b where B cannot be packed.
std::vector<CpuMatmulConfig> cpu_matmul_candidates(const ir::PrimFunc &f, const CpuArch &arch);

}  // namespace tessera::cpu
