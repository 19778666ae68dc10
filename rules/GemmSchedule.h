//===- rules/GemmSchedule.h - The SIMT GEMM schedule shared by matmul and conv -===//
//
// Private to rules/. The classic shared-memory GEMM on CUDA cores, for any
// reduction block whose loops have matmul roles (rows M, columns N, reduce K,
// batch), written once and used by the matmul rule (one loop per role) and
// the conv2d rule (rows = batch x output height x output width, K = window
// rows x window columns x input channels):
//
//   blockIdx.z  batch loops, fused
//   blockIdx.y  M block tiles (the M loops' outer pieces, fused)
//   blockIdx.x  N block tiles
//     threads: C_local[TM x TN] = 0                     (decompose_reduction)
//     for K outer pieces (the K step):
//       A_shared <- A tile, B_shared <- B tile           (cache_read + compute_at;
//                   every thread fetches vector-wide chunks: fuse, split, bind)
//       threadIdx.y M thread pieces, fused; threadIdx.x N thread pieces (fastest)
//         for K inner pieces (the innermost unrolled when asked, in chunks of
//                             at most kMaxUnrolledFmas multiply-adds):
//           B_local[TN] <- B_shared (one vector load)    (cache_read + compute_at)
//           C_local[i, j] += A_shared[..] * B_local[j]   (M/N per-thread pieces, unrolled)
//     threads: C[...] = epilogue(C_local)               (cache_write, reverse_compute_inline
//                                                        of the epilogue, reverse_compute_at,
//                                                        split and bound as the compute)
//
// With `stages` S > 1 the K step loop is annotated as a software pipeline
// (TVM's keys; lower::inject_software_pipeline builds it): the fetches at
// stage 0 as cp.async, the compute at stage S - 1, so the tiles of step
// t + S - 1 are in flight while step t computes, in S shared buffers each.
//
// The K step loop sits above the thread loops because compute_at sizes a
// copy by relaxing only the loops below its target: there, the copy covers
// the whole block's tile. Lowering makes the thread loops the launch's
// threads, inserts the barriers around the shared tiles and compacts the
// function-sized caches to their tiles (lower::compact_buffers).
//
// Each thread owns a contiguous TM x TN tile (per-thread pieces innermost), so
// its registers, its write-back and the box lowering compacts C_local to are
// exactly that tile. Warps lie along N: with 32 threads along N the A reads of
// a warp are one broadcast address, and the B fragment is one contiguous
// vector per thread. An operand whose contiguous dimension is K and whose
// compute reads walk its rows across the lanes (B in "nt") is stored K-major
// in shared memory (transform_layout) so that those reads become contiguous.
// Predicates from the splits mask tiles past the edges (symbolic extents
// included); nothing is assumed to divide.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/Func.h"
#include "tessera/schedule/Schedule.h"

namespace tessera::rules::detail {

/// How one loop of the reduction block is tiled.
struct TiledLoop {
  int iter = -1;        ///< the block iter (position in BlockInfo::iters) the loop carries
  int64_t block = 1;    ///< spatial: extent per thread block; reduce: the K step
  int64_t threads = 1;  ///< spatial: threads along it (block / threads per thread)
};

/// How a shared-memory operand tile is fetched and laid out.
struct OperandPlan {
  std::string buffer;  ///< the buffer the reduction block reads
  int64_t vector = 1;  ///< elements per thread and fetch step (a vector move)
  int64_t pad = 0;     ///< elements added to the row pitch of the shared tile
  bool k_major =
      false;  ///< store the tile transposed ([.., K, rows]); the operand's last two dims are swapped
  bool fragment = false;  ///< load each thread's slice into registers per K step with one vector move
  int64_t pitch = 0;      ///< the unpadded row pitch of the compacted tile (elements), for the pad
};

struct GemmPlan {
  std::string block;                  ///< the reduction block
  std::vector<int> batch;             ///< iters whose loops go to blockIdx.z
  std::vector<TiledLoop> m, n;        ///< rows (threadIdx.y) and columns (threadIdx.x)
  std::vector<TiledLoop> k;           ///< reduce loops: outer pieces serial, inner pieces per K step
  std::vector<std::string> prologue;  ///< blocks inlined into the operand fetches
  std::vector<std::string> epilogue;  ///< spatial consumers folded into the write-back, in order
  OperandPlan a, b;
  int64_t vector_c = 1;  ///< write-back vector width (divides the N per-thread piece)
  bool unroll = true;    ///< unroll the innermost K inner piece (in chunks: unroll_k_inner)
  int64_t stages = 1;    ///< shared tiles in flight (> 1: a cp.async software pipeline over the K step)
};

/// Multiply-adds per thread that one unrolled K chunk may hold. NVVM and
/// ptxas time grow with the unrolled body: a 128 x 128 x 32 float16 tile of
/// 8 x 8 per thread fully unrolled (2048 FMAs) took 784 ms of NVRTC here,
/// in chunks of 4 K steps (256) 115 ms, with a loop branch per 256 FMAs.
inline constexpr int64_t kMaxUnrolledFmas = 256;

/// Unrolls the innermost K inner loop `k` whole when its body times its
/// extent stays within kMaxUnrolledFmas (`per_thread` multiply-adds a step),
/// else as a serial loop over unrolled chunks of a power-of-two number of
/// steps that divides the extent (the whole loop when none does).
void unroll_k_inner(schedule::Schedule &sch, const schedule::LoopRef &k, int64_t per_thread);

/// The blocks around the reduction block `r` of `info`: every block before it
/// must be inlinable into the operand fetches (prologue, program order) and
/// the blocks after it an elementwise chain starting from its result, each
/// reading the previous result element for element (epilogue, folded into
/// the write-back). Returns why not, or "" with the names filled in.
std::string find_prologue_epilogue(const analysis::FuncInfo &info, int r, std::vector<std::string> &prologue,
                                   std::vector<std::string> &epilogue);

/// Schedules `f` by `plan` (see the file comment). Throws ScheduleError when a
/// primitive refuses (the rule then declines) and InternalError when the
/// plan names blocks or iters that are not there.
schedule::Schedule schedule_gemm(const ir::PrimFunc &f, const GemmPlan &plan);
/// The same, continuing `sch` (whose function has the plan's block, e.g.
/// after the conv2d rule's implicit-GEMM layout changes).
void schedule_gemm(schedule::Schedule &sch, const GemmPlan &plan);

/// The largest number of distinct 4-byte words a warp's accesses put in one
/// shared memory bank (1 = conflict free), for byte addresses accessed
/// `access_bytes` at a time (wide accesses are served a phase of lanes at a
/// time, as the hardware does).
int64_t bank_conflict_degree(const std::vector<int64_t> &byte_addresses, int64_t access_bytes, int64_t banks,
                             int64_t bank_bytes);

/// The widest power-of-two vector (at most `max_lanes`) dividing every
/// constant of `extents` (a symbolic one, -1, allows only 1).
int64_t widest_vector(int64_t max_lanes, std::initializer_list<int64_t> extents);

/// The row pitch lowering gives a tile dimension of `tile` elements over an
/// extent `extent` (-1 symbolic): the tile, or the whole extent when smaller.
/// A constant extent, or -1 (symbolic).
inline int64_t extent_of(const ir::Expr &e) { return ir::as_const_int(e).value_or(-1); }

inline int64_t tile_pitch(int64_t tile, int64_t extent) {
  return extent > 0 && extent <= tile ? extent : tile;
}

/// The pad (a multiple of `step` below `limit`, the smallest among equals)
/// whose (compute-read, fetch-store) conflict degrees, as `degrees(pad)`
/// gives them, are least: reads first, they run every K element.
int64_t choose_pad(int64_t step, int64_t limit,
                   const std::function<std::pair<int64_t, int64_t>(int64_t pad)> &degrees);

}  // namespace tessera::rules::detail
