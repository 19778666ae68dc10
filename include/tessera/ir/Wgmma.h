//===- tessera/ir/Wgmma.h - Hopper's warpgroup mma: layouts and forms -----===//
//
// `wgmma.mma_async` (sm_90a) multiplies a 64 x K tile of A by a K x N tile
// of B into a 64 x N accumulator spread over the 128 threads of a
// warpgroup. In the SS form both operands are read from shared memory
// through 64-bit matrix descriptors; tessera writes the operand as the
// buffer element the tile starts at plus the layout (swizzle, LBO, SBO), so
// that the interpreter, the SIMT emulator and the code generator take the
// instruction's meaning from here:
//
//   Operands are K-major (A as M x K rows, B as N x K rows: C = A B^T): each
//   row of the instruction's K (16 x 16-bit or 32 x 8-bit elements: 32
//   bytes) is contiguous. Rows come in groups of 8 (a "core matrix" group):
//
//     no swizzle   row r, byte kb: (r % 8) * 16 + (r / 8) * SBO + (kb / 16) * LBO + kb % 16
//     32/64/128 B  row r, byte kb: (r % 8) * S + (r / 8) * SBO + kb   (S = the swizzle span)
//
//   and a swizzled layout then XORs address bits [4, 4 + b) with bits
//   [7, 7 + b) (b = 1, 2, 3 for 32, 64, 128 bytes: the 16-byte chunk index
//   of a 128-byte row XORed with the row % 8), applied to the whole address
//   (start + offset), which is why swizzled tiles sit on 1024-byte
//   boundaries (here: the buffer's start, which the code generator aligns).
//   LBO is unused by the swizzled K-major layouts.
//
//   With the transpose flag (imm-trans-a / imm-trans-b; 16-bit types only)
//   an operand is MN-major instead: each K row of the tile holds M (or N)
//   contiguous elements. Element (mn, k) of the instruction (k < 16), at MN
//   byte mb = mn * 2:
//
//     no swizzle   (mb % 16) + (mb / 16) * SBO + (k % 8) * 16 + (k / 8) * LBO
//     32/64/128 B  (mb % S) + (mb / S) * LBO + (k % 8) * S + (k / 8) * SBO
//
//   (the PTX ISA's canonical MN-major layouts: with a swizzle, LBO steps
//   between S-byte spans of MN and SBO between groups of 8 K rows; without,
//   the roles swap) and the same swizzle of the whole address. One layout
//   (swizzle, LBO, SBO) describes both operands of a T.wgmma, each read
//   K- or MN-major as its flag says: a K-major swizzled operand ignores LBO,
//   so an MN-major partner is free to use it.
//
//   The descriptor (PTX ISA, "Matrix Descriptor Format"): bits 0-13 the
//   start address >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 49-51 the base
//   offset (0 here), 62-63 the swizzle (0 none, 1 128 B, 2 64 B, 3 32 B).
//
//   Accumulator D (64 x N, N / 2 per thread): thread t of the warpgroup,
//   warp w = t / 32, g = (t % 32) / 4, q = t % 4; element i sits at
//   row 16 w + g + 8 ((i / 2) % 2), col 8 (i / 4) + 2 q + i % 2
//   (the mma.sync C map, once per 8 columns and per warp's 16 rows).
//
// The RS form reads A from registers instead: T.wgmma's A operand is then
// an element of a `warp` (or `local`) buffer, the first of this thread's A
// fragment, 8 16-bit or 16 int8 elements (four 32-bit registers). Warp w of
// the warpgroup holds rows 16 w .. 16 w + 15 of the 64 x K tile, laid out as
// mma.sync's A fragment of those 16 rows (the m16n8k16 / m16n8k32 map of
// ir/MmaFragments.h); A is then K-major (trans_a 0). B stays in shared
// memory behind its descriptor.
//
// The forms tessera emits: m64nNk16 float16/bfloat16 -> float32 (either
// operand K- or MN-major; A from registers K-major) and m64nNk32 int8 ->
// int32 (exact, wrapping; K-major only), N a multiple of 8 up to 256.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/ir/DataType.h"
#include "tessera/ir/Expr.h"
#include "tessera/ir/MmaFragments.h"

namespace tessera::ir::wgmma {

/// The threads of a warpgroup.
inline constexpr int kWarpgroup = 128;

/// A shared-memory operand's layout, as a descriptor states it.
struct SmemLayout {
  int swizzle_bytes = 0;  ///< 0 (none), 32, 64 or 128
  int64_t lbo = 0;        ///< leading byte offset: next 16 bytes of K (no swizzle only)
  int64_t sbo = 0;        ///< stride byte offset: next group of 8 rows

  /// Empty when valid, else why not (swizzle not 0/32/64/128, offsets not
  /// multiples of 16 or past the descriptor's 14 bits of 16-byte units).
  std::string check() const;
  /// The byte offset, from the tile's start, of byte `kb` (< 32) of row `row`
  /// before swizzling.
  int64_t offset(int64_t row, int64_t kb) const;
  /// The byte offset, from the tile's start, of element `k` (< 16) of K of
  /// the MN-major 16-bit operand's MN byte `mn_byte`, before swizzling.
  int64_t mn_major_offset(int64_t mn_byte, int64_t k) const;
  /// `address` (bytes from a 1024-byte-aligned base) with the swizzle applied.
  int64_t swizzle(int64_t address) const;
  /// Where byte `kb` of row `row` of a tile starting at `start` lands.
  int64_t address(int64_t start, int64_t row, int64_t kb) const { return swizzle(start + offset(row, kb)); }
  /// Where element (`mn`, `k`) of an operand with `elem_bytes`-byte elements
  /// lands: K-major or (`mn_major`) MN-major.
  int64_t element_address(int64_t start, int64_t mn, int64_t k, int elem_bytes, bool mn_major) const {
    return swizzle(start + (mn_major ? mn_major_offset(mn * elem_bytes, k) : offset(mn, k * elem_bytes)));
  }
};

/// The 64-bit matrix descriptor of a tile at shared address `start` (bytes;
/// a multiple of 16 below 256 KiB) in `layout`.
uint64_t encode_descriptor(int64_t start, const SmemLayout &layout);
/// The start address and layout a descriptor states (its base offset must be 0).
std::pair<int64_t, SmemLayout> decode_descriptor(uint64_t desc);

/// One form of wgmma.mma_async (SS: both operands from shared memory).
struct WgmmaVariant {
  int n = 0;       ///< the instruction's N: 8..256, a multiple of 8
  DataType in;     ///< float16, bfloat16 or int8 (A and B alike)
  DataType acc;    ///< float32 (16-bit inputs) or int32 (int8)

  int k() const { return in.bytes() == 1 ? 32 : 16; }
  /// Accumulator elements per thread (N / 2), one 32-bit register each.
  int d_per_thread() const { return n / 2; }
  /// "m64n128k16"
  std::string shape_name() const;
  /// "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16".
  std::string ptx() const;
};

/// Whether an operand of type `in` may be MN-major (transposed): PTX's
/// transpose immediates exist for the 16-bit types only.
inline bool can_be_mn_major(DataType in) { return in.bytes() == 2; }
/// Empty when `trans` (T.wgmma's trans_a for operand "A", trans_b for "B")
/// is a flag operands of type `in` may take, else why not (not 0 or 1, or an
/// MN-major operand of a type wgmma does not transpose).
std::string check_transpose(const char *operand, int64_t trans, DataType in);

/// The variant `shape` ("m64nNk16" / "m64nNk32") names for operands of type
/// `in` into `acc`, or nullopt with the reason in `why`.
std::optional<WgmmaVariant> find_wgmma_variant(const std::string &shape, DataType in, DataType acc, std::string *why);
/// The same for a T.wgmma call: `shape` its first argument (a string), A of
/// type `a`, B of type `b`, D of type `acc`.
std::optional<WgmmaVariant> find_wgmma_variant(const Expr &shape, DataType a, DataType b, DataType acc,
                                               std::string *why);

/// The RS form's A fragment per thread: 8 (16-bit) or 16 (int8) elements.
inline int a_registers_per_thread(const WgmmaVariant &v) { return 64 * v.k() / kWarpgroup; }
/// Which thread of the warpgroup and which element of its A fragment hold
/// element (row < 64, k < K) of the RS form's A tile.
mma::Slot a_register_owner(const WgmmaVariant &v, int row, int k);

/// Where accumulator element `index` (< N / 2) of warpgroup thread `thread`
/// (< 128) sits in the 64 x N tile. Throws InternalError out of range.
mma::Element accumulator_at(int thread, int index, int n);
/// Which thread and element hold (row, col) of the 64 x N accumulator.
mma::Slot accumulator_owner(int row, int col, int n);

}  // namespace tessera::ir::wgmma
