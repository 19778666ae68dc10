//===- tessera/rules/MatmulTensorCore.h - GEMM on tensor cores (mma.sync) ---===//
//
// Matches what the SIMT matmul rule matches (analysis::match_matmul: one
// reduction block C[b.., i, j] += A * B, layouts nn/nt/tn/tt, batched,
// symbolic extents) when the Arch lists the mma.sync form for the operands
// (with cp.async):
//
//   float16, bfloat16 into float32 (or float16, accumulated in float32 or,
//            for float16 operands, in float16: `acc_bytes`)  m16n8k16
//   int8 into int32, both operands K-contiguous               m16n8k32
//   float32 operands both rounded by T.round_to_tf32 (the
//            program asks for tf32) into float32              m16n8k8
//
// an elementwise epilogue chain (cast, bias, activation,
// residual) is folded into the store, and inlinable producers of A or B (a
// cast, an int4 dequantisation) into the operand's tile fetch, which then
// copies element by element. Convolutions are the conv2d rule's.
//
// The kernel, built from the match (the typed description the SIMT rule
// reads, not re-derived here):
//
//   blockIdx.z  batch (fused), blockIdx.y  M tiles of block_m, blockIdx.x  N tiles of block_n
//               (raster P: blockIdx.x alone, panels of P tile rows walked column by
//               column, the blocks in flight sharing their A and B panels in L2)
//   warps: threadIdx.y = warps_m x warps_n, each a (block_m / warps_m) x (block_n / warps_n)
//          warp tile of m16n8 accumulators (a `warp` buffer: float32 registers)
//   A_shared, B_shared: `stages` tiles of block_k, rows padded by `pad` elements
//            or (swizzle) their 16-byte chunks XOR-permuted by row, the layout
//            Hopper's 128-byte swizzle uses: the kernel block carries the
//            "tessera.swizzle" annotation and lowering permutes every access
//            (lower::swizzle_shared_buffers)
//   prologue: tiles 0 .. stages-2 by cp.async (16/8/4-byte copies as the rows'
//             alignment allows, zero-filled past M/N/K), one group per tile
//   for each K tile: wait until its group landed, __syncthreads, issue the
//             copy of tile + stages-1 into the stage freed last iteration,
//             then per 16-wide K slice: ldmatrix (.trans where the operand is
//             stored K-outer) into A/B fragments, mma.sync m16n8k16 per
//             16 x 8 accumulator tile
//   epilogue: each lane's accumulators (rows g, g + 8; column pairs) through
//             the epilogue into the output, masked at the edges
//
// An operand whose rows cannot be read in 4-byte pieces (a symbolic or odd
// contiguous extent) is copied element by element, synchronously.
//
// Config, with the workload facts validate() needs copied from the match:
//   {"rule": "matmul_tensor_core", "block_m": 128, "block_n": 256, "block_k": 64,
//    "warps_m": 2, "warps_n": 4, "stages": 3, "pad": 8, "swizzle": false, "raster": 0,
//    "in_bytes": 2, "acc_bytes": 4, "a_elementwise": false, "b_elementwise": false}
// (the default: the fastest of the top-20 at 4096^3 float16 nn on an H100,
// bench/results/2026-11-26-h100-80gb-hbm3-4; smaller where shared memory
// is short).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/rules/Rule.h"

namespace tessera::rules {

struct TensorCoreConfig final : Config {
  int64_t block_m = 128;  ///< output rows per thread block (a multiple of 16 x warps_m)
  int64_t block_n = 256;  ///< output columns per thread block (a multiple of 16 x warps_n)
  int64_t block_k = 64;   ///< K elements per pipeline stage (a multiple of 16)
  int64_t warps_m = 2;    ///< warps along M
  int64_t warps_n = 4;    ///< warps along N
  int64_t stages = 3;     ///< shared-memory tiles in flight (2 to 6)
  /// Elements added to each shared row (0 or 16 bytes' worth: against ldmatrix
  /// conflicts). tf32 tiles stored K-outer get twice this (rows of 8 mod 32
  /// words keep the fragment loads conflict-free).
  int64_t pad = 8;
  bool swizzle = false;   ///< XOR-swizzled 16-byte chunks instead of padding (pad 0; rows of 64 bytes or more)
  int64_t raster = 0;     ///< 0: tiles in rows (blockIdx.y, x); P: panels of P tile rows walked by column
  int64_t in_bytes = 2;   ///< workload fact: bytes per A/B element (4: tf32)
  /// Accumulator bytes: 4 (float32, int32) or 2 (float16 accumulators: only
  /// for float16 operands whose program accumulates in float16).
  int64_t acc_bytes = 4;
  bool a_elementwise = false;  ///< workload fact: A's tile is copied element by element (computed or unaligned)
  bool b_elementwise = false;  ///< workload fact: the same for B
  /// Hopper's wgmma (sm_90a) instead of ldmatrix + mma.sync: warpgroups of
  /// 4 warps (warps_m 4 or 8, warps_n = 1), each taking one or two m64
  /// subtiles of the block's rows (block_m = 16 x warps_m x 1 or 2: 64, 128
  /// or 256 rows; each warp holds 16 rows of each of its warpgroup's
  /// subtiles), one m64nNk instruction per subtile across block_n (16
  /// to 256), tiles of 128-byte rows (block_k = 128 / in_bytes) swizzled
  /// as wgmma's 128-byte layout, fed by the same cp.async pipeline. A
  /// K-major operand's tile is K-major; a 16-bit M- or N-major one (B of
  /// the "nn" layout) is stored MN-major, as it arrives, when its block_m or
  /// block_n is a multiple of 64 (wgmma's transpose flag); another (int8) is
  /// transposed on its way in, element by element.
  bool wgmma = false;
  /// With wgmma: the tiles arrive by TMA (cp.async.bulk.tensor, ir/Tma.h)
  /// instead of cp.async: one thread copies each stage's boxes (a K-major
  /// tile in one, an M- or N-major 16-bit one in a box per 64-element
  /// span), which complete on the stage's mbarrier; the warpgroups wait on
  /// it for the phase of that fill. Both operands must be parameters read
  /// as they are (no inlined producer, no transpose on the way in), each
  /// dimension indexed by one iter.
  bool tma = false;
  /// With tma: one more warpgroup, the producer, gives up registers
  /// (setmaxnreg.dec to 40) and only copies: it waits for a stage to be
  /// released (the stage's second mbarrier, one arrival per consumer warp),
  /// then announces and copies its boxes. The block_m / 64 consumer
  /// warpgroups take registers (setmaxnreg.inc to 232), wait for each
  /// stage's boxes, run its wgmma and release the stage the previous tile
  /// read once its group retires. The producer and the consumers run
  /// concurrently, as on the GPU: the serial interpreter cannot run this
  /// kernel (a consumer waits for copies no earlier thread made); the SIMT
  /// emulator can.
  bool warp_specialized = false;
  /// With warp_specialized: 0 runs one block per output tile; P > 0 runs
  /// min(P, tiles) persistent blocks (P: the GPU's SMs times the blocks
  /// one SM holds), block b taking tiles b, b + P, b + 2P, ... in the order
  /// of `raster` (batch outermost). The stages' barriers are initialised
  /// once and their phases run on across tiles: the producer fills the
  /// next tile's stages while the consumers store this one's epilogue.
  int64_t persistent = 0;
  /// With warp_specialized: the epilogue goes out by TMA store
  /// (cp.async.bulk.tensor, ir/Intrinsics.def) instead of each lane's
  /// stores. Each consumer warp writes its 16 rows of each m64 subtile of
  /// the output tile, one box of 16 x W at a time (W: 128 bytes of output
  /// elements), into one of
  /// its two 128-byte-swizzled shared slots; its lane 0 stores the box,
  /// which TMA clips at the tensor's edges, and before a slot is rewritten
  /// waits until the store that last used it has read it. The output must
  /// be a parameter indexed [.., m, .., n] by the matmul's iters
  /// (tma_store_refusal), block_n a multiple of W. Shared memory: 4 KB per
  /// consumer warp.
  bool tma_store = false;

  /// setmaxnreg's counts for the warp-specialised kernel: the producer keeps
  /// what issuing copies needs; the consumers take what the rest of the
  /// 64K-register file allows (128 x 40 + 256 x 232 <= 65536 with two of them).
  static constexpr int64_t kProducerRegisters = 40, kConsumerRegisters = 232;
  /// The registers of an SM (every GPU with wgmma has 64K).
  static constexpr int64_t kRegisterFile = 65536;

  const char *rule() const override { return "matmul_tensor_core"; }
  Json to_json() const override;
  void validate(const Arch &arch) const override;
  static TensorCoreConfig from_json(const Json &j);

  int64_t warps() const { return warps_m * warps_n; }
  /// The block's threads: the warps, and the producer warpgroup when warp specialised.
  int64_t threads() const { return 32 * warps() + (warp_specialized ? 128 : 0); }
  int64_t warp_m() const { return block_m / warps_m; }
  /// With wgmma: the m64 subtiles each consumer warpgroup multiplies (1 or 2).
  int64_t m64_per_group() const { return warp_m() / 16; }
  int64_t warp_n() const { return block_n / warps_n; }
  /// Shared memory of the staged A and B tiles with their padding (either
  /// layout), and tma_store's output slots.
  int64_t shared_bytes() const;
  /// tma_store's output slots: two 16-row boxes of 128-byte rows per consumer warp.
  int64_t store_slot_bytes() const { return tma_store ? warps() * 2 * 16 * 128 : 0; }
  /// The instruction's K (tensor_core_mma_k).
  int64_t mma_k() const;
  /// Registers per thread, estimated: the accumulators, the A and B
  /// fragments of one K slice, 48 for addresses and loop state, and 2.5 per
  /// element a thread copies per stage of an element-by-element operand (its
  /// index arithmetic; sm_90 measured 1.2 to 2.3 for a convolution's gather);
  /// tf32's element-wise fragment loads count 2.5 times their fragments.
  /// Warp specialised, what a consumer thread needs (it takes up to
  /// kConsumerRegisters by setmaxnreg).
  int64_t registers() const;
  /// Registers per thread the launch allocates (what occupancy sees):
  /// registers(), except warp specialised: what ptxas gives each of the
  /// block's threads (the file over them, a multiple of 8), which
  /// setmaxnreg then moves from the producer to the consumers.
  int64_t launch_registers() const;
};

/// What the tensor-core policy reads from a match: the problem's extents
/// (-1 where symbolic) and operand type, from the rule's typed description.
struct TensorCoreProblem {
  int64_t batch = 1, m = -1, n = -1, k = -1;
  /// The same as expressions over the shape variables (batch: the product).
  ir::Expr batch_extent, m_extent, n_extent, k_extent;
  ir::DataType in;  ///< float32: tf32 operands
  bool f16_accumulation = false;  ///< the program accumulates float16 in float16 (acc_bytes 2 allowed)
  bool a_elementwise = false, b_elementwise = false;  ///< tiles copied element by element
  bool k_major = false;  ///< A and B both K-major (wgmma reads 16-bit operands either way, int8 K-major only)
  bool tma_copyable = false;  ///< TMA can copy both tiles (TensorCoreConfig::tma), given block sizes that allow it
  bool a_k_major = false, b_k_major = false;  ///< each operand's contiguous dimension is K
  /// TMA can store the output (TensorCoreConfig::tma_store), given a block_n
  /// that is a multiple of 128 bytes of its `out_bytes`-byte elements.
  bool tma_storable = false;
  int64_t out_bytes = 4;
};
/// The problem of a matmul_tensor_core match; ConfigError for another rule's match.
TensorCoreProblem tensor_core_problem(const Match &m);

/// The Arch's mma.sync entry the kernel uses for operands of type `in`
/// (float32: tf32) accumulated in `acc_bytes` (4: int32 for int8, else
/// float32; 2: float16), or nullptr.
const MmaSupport *tensor_core_mma(const Arch &arch, ir::DataType in, int64_t acc_bytes = 4);
/// The accumulator bytes to use: 2 where the program allows float16
/// accumulation and `arch` runs it faster than float32's (GeForce parts run
/// float32 accumulation at half rate), else 4.
int64_t preferred_acc_bytes(const Arch &arch, const TensorCoreProblem &p);

/// The mma.sync K for operands of `in_bytes` bytes: 16 (float16/bfloat16),
/// 32 (int8), 8 (tf32).
int64_t tensor_core_mma_k(int64_t in_bytes);

/// The tensor-core matmul rule (registered in all_rules(), before "matmul").
const Rule &matmul_tensor_core_rule();

}  // namespace tessera::rules
