//===- lib/ir/MmaFragments.cpp - Which lane holds which matrix element -----===//
#include "tessera/ir/MmaFragments.h"

#include "tessera/support/Error.h"
#include "tessera/support/Half.h"

namespace tessera::ir::mma {

namespace {

const char *shape_name(MmaShape s) {
  switch (s) {
    case MmaShape::M16N8K16: return "m16n8k16";
    case MmaShape::M16N8K32: return "m16n8k32";
    case MmaShape::M16N8K8: return "m16n8k8";
  }
  return "?";
}

int k_of(MmaShape s) {
  switch (s) {
    case MmaShape::M16N8K16: return 16;
    case MmaShape::M16N8K32: return 32;
    case MmaShape::M16N8K8: return 8;
  }
  return 0;
}

}  // namespace

FragmentLayout::FragmentLayout(MmaShape shape, Operand operand) : shape_(shape), operand_(operand) {
  const int k = k_of(shape);
  switch (operand) {
    case Operand::A: rows_ = 16, cols_ = k; break;
    case Operand::B: rows_ = k, cols_ = 8; break;
    case Operand::C: rows_ = 16, cols_ = 8; break;
  }
}

Element FragmentLayout::at(int lane, int i) const {
  TESSERA_ICHECK(lane >= 0 && lane < 32 && i >= 0 && i < per_lane())
      << str() << ": no element " << i << " of lane " << lane;
  const int g = lane / 4, t = lane % 4;
  if (operand_ == Operand::C) return {g + 8 * (i / 2), 2 * t + i % 2};
  switch (shape_) {
    case MmaShape::M16N8K16:
      if (operand_ == Operand::A) return {g + 8 * ((i / 2) % 2), 2 * t + i % 2 + 8 * (i / 4)};
      return {2 * t + i % 2 + 8 * (i / 2), g};
    case MmaShape::M16N8K32:
      if (operand_ == Operand::A) return {g + 8 * ((i / 4) % 2), 4 * t + i % 4 + 16 * (i / 8)};
      return {4 * t + i % 4 + 16 * (i / 4), g};
    case MmaShape::M16N8K8:
      if (operand_ == Operand::A) return {g + 8 * (i % 2), t + 4 * (i / 2)};
      return {t + 4 * i, g};
  }
  TESSERA_ICHECK(false) << "unknown mma shape";
  return {};
}

Slot FragmentLayout::owner(int row, int col) const {
  TESSERA_ICHECK(row >= 0 && row < rows_ && col >= 0 && col < cols_)
      << str() << ": no element (" << row << ", " << col << ")";
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < per_lane(); ++i)
      if (at(lane, i) == Element{row, col}) return {lane, i};
  TESSERA_ICHECK(false) << str() << ": no lane holds (" << row << ", " << col << ")";
  return {};
}

std::string FragmentLayout::str() const {
  const char *op = operand_ == Operand::A ? "A" : operand_ == Operand::B ? "B" : "C";
  return std::string(shape_name(shape_)) + " " + op + " (" + std::to_string(rows_) + " x " +
         std::to_string(cols_) + ")";
}

LdmatrixLayout::LdmatrixLayout(int matrices, bool trans) : matrices_(matrices), trans_(trans) {
  TESSERA_ICHECK(matrices == 1 || matrices == 2 || matrices == 4) << "ldmatrix .x" << matrices;
}

Element LdmatrixLayout::at(int lane, int matrix, int half) const {
  TESSERA_ICHECK(lane >= 0 && lane < 32 && matrix >= 0 && matrix < matrices_ && (half == 0 || half == 1))
      << "ldmatrix .x" << matrices_ << ": no half " << half << " of register " << matrix << " of lane " << lane;
  Element e{lane / 4, 2 * (lane % 4) + half};
  return trans_ ? Element{e.col, e.row} : e;
}

int LdmatrixLayout::address_lane(int matrix, int row) const {
  TESSERA_ICHECK(matrix >= 0 && matrix < matrices_ && row >= 0 && row < 8)
      << "ldmatrix .x" << matrices_ << ": no row " << row << " of matrix " << matrix;
  return matrix * 8 + row;
}

Element LdmatrixLayout::address_of(int lane) const {
  TESSERA_ICHECK(lane >= 0 && lane < 32) << "ldmatrix: no lane " << lane;
  if (lane / 8 >= matrices_) return {-1, lane % 8};
  return {lane / 8, lane % 8};
}

namespace {

MmaTables build_tables(MmaShape shape, int k) {
  MmaTables out;
  out.k = k;
  FragmentLayout a(shape, Operand::A), b(shape, Operand::B), c(shape, Operand::C);
  for (int r = 0; r < 16; ++r)
    for (int kk = 0; kk < k; ++kk) out.a_owner[r][kk] = a.owner(r, kk);
  for (int kk = 0; kk < k; ++kk)
    for (int n = 0; n < 8; ++n) out.b_owner[kk][n] = b.owner(kk, n);
  for (int l = 0; l < 32; ++l)
    for (int i = 0; i < 4; ++i) out.c_at[l][i] = c.at(l, i);
  return out;
}

}  // namespace

const MmaTables &mma_tables(MmaShape shape) {
  static const MmaTables k16 = build_tables(MmaShape::M16N8K16, 16), k32 = build_tables(MmaShape::M16N8K32, 32),
                         k8 = build_tables(MmaShape::M16N8K8, 8);
  switch (shape) {
    case MmaShape::M16N8K16: return k16;
    case MmaShape::M16N8K32: return k32;
    case MmaShape::M16N8K8: return k8;
  }
  TESSERA_UNREACHABLE("unknown mma shape");
}

namespace {

const char *ptx_type(DataType t, bool tf32) {
  if (tf32) return "tf32";
  if (t.is_float16()) return "f16";
  if (t.is_bfloat16()) return "bf16";
  if (t == DataType::float32()) return "f32";
  if (t == DataType::int32()) return "s32";
  return "s8";
}

}  // namespace

std::string MmaVariant::shape_name() const { return mma::shape_name(shape); }

std::string MmaVariant::ptx() const {
  const bool tf32 = shape == MmaShape::M16N8K8;
  const std::string d = ptx_type(acc, false), ab = ptx_type(in, tf32);
  return "mma.sync.aligned." + shape_name() + ".row.col." + d + "." + ab + "." + ab + "." + d;
}

double MmaVariant::input(double v) const {
  return shape == MmaShape::M16N8K8 ? truncate_to_tf32(static_cast<float>(v)) : v;
}

std::optional<MmaVariant> find_mma_variant(const std::string &shape, DataType in, DataType acc, std::string *why) {
  struct Known {
    const char *shape;
    MmaShape s;
    DataType in, acc;
  };
  static const Known known[] = {
      {"m16n8k16", MmaShape::M16N8K16, DataType::float16(), DataType::float32()},
      {"m16n8k16", MmaShape::M16N8K16, DataType::bfloat16(), DataType::float32()},
      {"m16n8k16", MmaShape::M16N8K16, DataType::float16(), DataType::float16()},
      {"m16n8k32", MmaShape::M16N8K32, DataType::int_(8), DataType::int32()},
      {"m16n8k8", MmaShape::M16N8K8, DataType::float32(), DataType::float32()},
  };
  bool shape_known = false;
  for (const Known &k : known) {
    if (shape != k.shape) continue;
    shape_known = true;
    if (in == k.in && acc == k.acc) return MmaVariant{k.s, in, acc};
  }
  if (why)
    *why = shape_known ? shape + " does not multiply " + in.str() + " into " + acc.str() +
                             " (float16 -> float32 or float16, bfloat16 -> float32 for m16n8k16; int8 -> int32 "
                             "for m16n8k32; float32 as tf32 -> float32 for m16n8k8)"
                       : "the shape must be the string \"m16n8k16\", \"m16n8k32\" or \"m16n8k8\"";
  return std::nullopt;
}

std::optional<MmaVariant> find_mma_variant(const Expr &shape, DataType a, DataType b, DataType acc, std::string *why) {
  const auto *s = shape.as<StringImm>();
  if (!s) return find_mma_variant(std::string(), a, acc, why);  // the message lists the shapes
  if (a != b) {
    if (why) *why = "A is " + a.str() + " but B is " + b.str();
    return std::nullopt;
  }
  return find_mma_variant(s->value, a, acc, why);
}

}  // namespace tessera::ir::mma
