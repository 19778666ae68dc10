//===- tessera/ir/MmaFragments.h - Which lane holds which matrix element ---===//
//
// The warp-level tensor-core instructions spread their operands over the 32
// lanes of a warp: `mma.sync.m16n8k16` gives each lane eight float16 of the
// 16 x 16 A tile (four 32-bit registers, a0..a7), four of the 16 x 8 B tile
// and four accumulators of the 16 x 8 C tile; `ldmatrix` loads 8 x 8 tiles of
// 16-bit elements so that they land in exactly that order. The interpreter,
// the SIMT emulator, the lowering of `warp` buffers to per-lane registers and
// the code generator must all agree on these maps, so each instruction's map
// is written here once, as the PTX ISA's figures give it ("Matrix Fragments
// for mma.m16n8k16 / m16n8k32 / m16n8k8", "ldmatrix"):
//
//   g = lane / 4 (the group), t = lane % 4 (the thread in the group)
//   m16n8k16 A (16 x 16): a_i at row g + 8 * ((i / 2) % 2), col 2t + i % 2 + 8 * (i / 4)
//            B (16 x 8):  b_i at row 2t + i % 2 + 8 * (i / 2),  col g
//            C (16 x 8):  c_i at row g + 8 * (i / 2),           col 2t + i % 2
//   m16n8k32 A (16 x 32, 8-bit): a_i at row g + 8 * ((i / 4) % 2), col 4t + i % 4 + 16 * (i / 8)
//            B (32 x 8):  b_i at row 4t + i % 4 + 16 * (i / 4), col g
//   m16n8k8  A (16 x 8, tf32):  a_i at row g + 8 * (i % 2), col t + 4 * (i / 2)
//            B (8 x 8):   b_i at row t + 4 * i, col g
//   (the C map is the same for every shape; float16 accumulators pack two per
//   register in the same element order)
//
//   ldmatrix (.b16, x1/x2/x4): lane l gives the address of row l % 8 of
//   matrix l / 8 (lanes past the matrix count are ignored); destination
//   register j of lane l holds matrix j's elements (l / 4, 2 (l % 4) + h),
//   h = 0, 1 the two halves; with .trans, (2 (l % 4) + h, l / 4).
//
// Each map is a bijection between (lane, element) and (row, col) of its
// tile (tests/ir/MmaFragmentsTest.cpp checks that and the ISA's examples);
// owner() is its inverse.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>

#include "tessera/ir/DataType.h"
#include "tessera/ir/Expr.h"

namespace tessera::ir::mma {

/// The mma.sync shapes and input types tessera uses. float16 and bfloat16
/// share one layout (M16N8K16), int8 and fp8 another (M16N8K32).
enum class MmaShape { M16N8K16, M16N8K32, M16N8K8 };

enum class Operand { A, B, C };

/// A tile position.
struct Element {
  int row = 0, col = 0;
  bool operator==(const Element &o) const { return row == o.row && col == o.col; }
};

/// The owner of a tile position: which lane, and which of its elements.
struct Slot {
  int lane = 0, index = 0;
  bool operator==(const Slot &o) const { return lane == o.lane && index == o.index; }
};

/// One operand's map between the 32 lanes' elements and its tile.
class FragmentLayout {
 public:
  FragmentLayout(MmaShape shape, Operand operand);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  /// Elements each lane holds (rows * cols / 32).
  int per_lane() const { return rows_ * cols_ / 32; }
  /// Where element `index` of `lane` sits. Throws InternalError out of range.
  Element at(int lane, int index) const;
  /// Which lane and element hold (row, col). Throws InternalError out of range.
  Slot owner(int row, int col) const;
  /// "m16n8k16 A (16 x 16)".
  std::string str() const;

 private:
  MmaShape shape_;
  Operand operand_;
  int rows_ = 0, cols_ = 0;
};

/// ldmatrix's map for `matrices` (1, 2 or 4) 8 x 8 tiles of 16-bit elements.
class LdmatrixLayout {
 public:
  LdmatrixLayout(int matrices, bool trans);

  int matrices() const { return matrices_; }
  bool trans() const { return trans_; }
  /// The tile element that half `half` (0, 1) of destination register
  /// `matrix` of `lane` receives.
  Element at(int lane, int matrix, int half) const;
  /// The lane whose address operand gives row `row` of tile `matrix`.
  int address_lane(int matrix, int row) const;
  /// The (matrix, row) that `lane`'s address operand gives; matrix -1 for a
  /// lane ldmatrix ignores (x1: lanes 8..31, x2: 16..31).
  Element address_of(int lane) const;

 private:
  int matrices_;
  bool trans_;
};

/// An mma.sync shape's maps as lookup tables (FragmentLayout::owner
/// searches), for the executors that evaluate it per lane: built once.
struct MmaTables {
  int k = 16;             ///< the instruction's K: 16 (16-bit inputs) or 32 (8-bit)
  Slot a_owner[16][32];   ///< [row][k], k < this->k
  Slot b_owner[32][8];    ///< [k][col]
  Element c_at[32][4];    ///< [lane][index]
  /// A and B elements per lane.
  int a_per_lane() const { return 16 * k / 32; }
  int b_per_lane() const { return 8 * k / 32; }
};
/// The tables of a shape (M16N8K8: tf32, K = 8).
const MmaTables &mma_tables(MmaShape shape);

/// One form of mma.sync that tessera emits: its shape and the types it
/// multiplies (A and B alike) and accumulates (C and D alike):
///
///   m16n8k16  float16  -> float32 | float16 (two accumulators per register)
///             bfloat16 -> float32
///   m16n8k32  int8     -> int32 (exact, wrapping)
///   m16n8k8   float32 read as tf32 (the 13 low mantissa bits ignored;
///             T.round_to_tf32 makes them zero) -> float32
///
/// The interpreter, the SIMT emulator and the code generator all take the
/// instruction's meaning from here.
struct MmaVariant {
  MmaShape shape = MmaShape::M16N8K16;
  DataType in, acc;

  const MmaTables &tables() const { return mma_tables(shape); }
  /// A, B and C elements per lane.
  int a_per_lane() const { return tables().a_per_lane(); }
  int b_per_lane() const { return tables().b_per_lane(); }
  static constexpr int c_per_lane() { return 4; }
  /// 32-bit registers per lane of each operand.
  int a_regs() const { return a_per_lane() * in.bytes() / 4; }
  int b_regs() const { return b_per_lane() * in.bytes() / 4; }
  int c_regs() const { return c_per_lane() * acc.bytes() / 4; }
  /// "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32".
  std::string ptx() const;
  /// An A or B element as the instruction reads it (tf32: truncated).
  double input(double v) const;
  /// "m16n8k16", "m16n8k32", "m16n8k8".
  std::string shape_name() const;
};

/// The variant `shape` ("m16n8k16", ...) names for operands of type `in`
/// into `acc`, or nullopt with the reason in `why`.
std::optional<MmaVariant> find_mma_variant(const std::string &shape, DataType in, DataType acc, std::string *why);
/// The same for a T.mma_sync call's operands: `shape` its first argument
/// (a string), A of type `a`, B of type `b` (the same), D of type `acc`.
std::optional<MmaVariant> find_mma_variant(const Expr &shape, DataType a, DataType b, DataType acc, std::string *why);

/// What mma.sync adds to accumulator element `index` (0..3) of `lane`: the
/// sum over K of A(row, k) B(k, col), each operand element read from the
/// lane and fragment index that holds it, `a(lane, index)` / `b(lane, index)`
/// (as doubles: 16-bit float products are exact and so, to the last bits,
/// is their sum; int8 sums are exact).
template <typename ReadA, typename ReadB>
double mma_dot(const MmaTables &t, int lane, int index, ReadA &&a, ReadB &&b) {
  const Element c = t.c_at[lane][index];
  double sum = 0;
  for (int k = 0; k < t.k; ++k) {
    const Slot sa = t.a_owner[c.row][k], sb = t.b_owner[k][c.col];
    sum += a(sa.lane, sa.index) * b(sb.lane, sb.index);
  }
  return sum;
}

}  // namespace tessera::ir::mma
