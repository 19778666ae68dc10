//===- lib/ir/Wgmma.cpp - Hopper's warpgroup mma: layouts and forms -------===//
#include "tessera/ir/Wgmma.h"

#include <cstdlib>

#include "tessera/support/Error.h"

namespace tessera::ir::wgmma {

namespace {

/// The descriptor's fields hold 14 bits of 16-byte units.
constexpr int64_t kFieldLimit = int64_t{1} << 14;

/// log2(span / 16): the number of row bits the swizzle XORs in.
int swizzle_bits(int swizzle_bytes) {
  switch (swizzle_bytes) {
    case 32: return 1;
    case 64: return 2;
    case 128: return 3;
    default: return 0;
  }
}

}  // namespace

std::string SmemLayout::check() const {
  if (swizzle_bytes != 0 && swizzle_bytes != 32 && swizzle_bytes != 64 && swizzle_bytes != 128)
    return "the swizzle is " + std::to_string(swizzle_bytes) + " bytes; wgmma knows 0 (none), 32, 64 and 128";
  for (auto [name, v] : {std::pair<const char *, int64_t>{"LBO", lbo}, {"SBO", sbo}})
    if (v < 0 || v % 16 != 0 || v / 16 >= kFieldLimit)
      return std::string(name) + " is " + std::to_string(v) + " bytes; a descriptor holds a multiple of 16 below " +
             std::to_string(kFieldLimit * 16);
  return "";
}

int64_t SmemLayout::offset(int64_t row, int64_t kb) const {
  TESSERA_ICHECK(row >= 0 && kb >= 0 && kb < 32) << "wgmma operand byte " << kb << " of row " << row;
  if (swizzle_bytes == 0) return (row % 8) * 16 + (row / 8) * sbo + (kb / 16) * lbo + kb % 16;
  return (row % 8) * swizzle_bytes + (row / 8) * sbo + kb;
}

int64_t SmemLayout::mn_major_offset(int64_t mn_byte, int64_t k) const {
  TESSERA_ICHECK(mn_byte >= 0 && k >= 0 && k < 16) << "MN-major wgmma operand element " << k << " of MN byte " << mn_byte;
  if (swizzle_bytes == 0) return mn_byte % 16 + (mn_byte / 16) * sbo + (k % 8) * 16 + (k / 8) * lbo;
  return mn_byte % swizzle_bytes + (mn_byte / swizzle_bytes) * lbo + (k % 8) * swizzle_bytes + (k / 8) * sbo;
}

int64_t SmemLayout::swizzle(int64_t address) const {
  const int bits = swizzle_bits(swizzle_bytes);
  if (bits == 0) return address;
  const int64_t mask = (int64_t{1} << bits) - 1;
  return address ^ (((address >> 7) & mask) << 4);
}

uint64_t encode_descriptor(int64_t start, const SmemLayout &layout) {
  TESSERA_ICHECK(layout.check().empty()) << layout.check();
  TESSERA_ICHECK(start >= 0 && start % 16 == 0 && start / 16 < kFieldLimit)
      << "a wgmma descriptor's start address is a multiple of 16 below 256 KiB, got " << start;
  uint64_t mode = 0;
  switch (layout.swizzle_bytes) {
    case 128: mode = 1; break;
    case 64: mode = 2; break;
    case 32: mode = 3; break;
    default: mode = 0;
  }
  return uint64_t(start / 16) | uint64_t(layout.lbo / 16) << 16 | uint64_t(layout.sbo / 16) << 32 | mode << 62;
}

std::pair<int64_t, SmemLayout> decode_descriptor(uint64_t desc) {
  auto field = [&](int at) { return int64_t((desc >> at) & uint64_t(kFieldLimit - 1)) * 16; };
  TESSERA_ICHECK(((desc >> 49) & 7) == 0) << "a wgmma descriptor with a base offset";
  static const int kSwizzle[4] = {0, 128, 64, 32};
  SmemLayout l{kSwizzle[desc >> 62], field(16), field(32)};
  return {field(0), l};
}

std::string check_transpose(const char *operand, int64_t trans, DataType in) {
  const std::string name = std::string(operand) == "A" ? "trans_a" : "trans_b";
  if (trans != 0 && trans != 1)
    return name + " is " + std::to_string(trans) + "; it is 0 (K-major) or 1 (MN-major)";
  if (trans && !can_be_mn_major(in))
    return std::string(operand) + " is MN-major but " + in.str() +
           " operands are K-major only (wgmma transposes 16-bit types)";
  return "";
}

std::string WgmmaVariant::shape_name() const { return "m64n" + std::to_string(n) + "k" + std::to_string(k()); }

std::string WgmmaVariant::ptx() const {
  const char *ab = in.is_float16() ? "f16" : in.is_bfloat16() ? "bf16" : "s8";
  const char *d = acc == DataType::int32() ? "s32" : "f32";
  return "wgmma.mma_async.sync.aligned." + shape_name() + "." + d + "." + ab + "." + ab;
}

std::optional<WgmmaVariant> find_wgmma_variant(const std::string &shape, DataType in, DataType acc,
                                               std::string *why) {
  auto fail = [&](const std::string &w) -> std::optional<WgmmaVariant> {
    if (why) *why = w;
    return std::nullopt;
  };
  // "m64n<N>k<K>"
  const std::string forms = "the shape must be the string \"m64nNk16\" (float16, bfloat16 -> float32) or "
                            "\"m64nNk32\" (int8 -> int32), N a multiple of 8 from 8 to 256";
  if (!shape.starts_with("m64n")) return fail(forms);
  const size_t kpos = shape.find('k', 4);
  if (kpos == std::string::npos || kpos == 4) return fail(forms);
  const std::string n_text = shape.substr(4, kpos - 4), k_text = shape.substr(kpos + 1);
  for (const std::string &t : {n_text, k_text})
    if (t.empty() || t.size() > 3 || t.find_first_not_of("0123456789") != std::string::npos) return fail(forms);
  const int n = std::atoi(n_text.c_str()), k = std::atoi(k_text.c_str());
  if (n < 8 || n > 256 || n % 8 != 0 || (k != 16 && k != 32)) return fail(forms);
  WgmmaVariant v{n, in, acc};
  const bool f16 = (in.is_float16() || in.is_bfloat16()) && acc == DataType::float32();
  const bool s8 = in == DataType::int_(8) && acc == DataType::int32();
  if (!f16 && !s8)
    return fail(shape + " does not multiply " + in.str() + " into " + acc.str() +
                " (float16 or bfloat16 -> float32 for k16, int8 -> int32 for k32)");
  if (v.k() != k) return fail(shape + " multiplies " + in.str() + " with K = " + std::to_string(v.k()) + ", not " +
                              std::to_string(k));
  return v;
}

std::optional<WgmmaVariant> find_wgmma_variant(const Expr &shape, DataType a, DataType b, DataType acc,
                                               std::string *why) {
  const auto *s = shape.as<StringImm>();
  if (!s) return find_wgmma_variant(std::string(), a, acc, why);  // the message lists the shapes
  if (a != b) {
    if (why) *why = "A is " + a.str() + " but B is " + b.str();
    return std::nullopt;
  }
  return find_wgmma_variant(s->value, a, acc, why);
}

mma::Slot a_register_owner(const WgmmaVariant &v, int row, int k) {
  TESSERA_ICHECK(row >= 0 && row < 64 && k >= 0 && k < v.k()) << "A element (" << row << ", " << k << ")";
  // mma.sync's A fragment of the warp's 16 rows: the same K, the same map.
  std::string why;
  static const auto f16 = mma::find_mma_variant("m16n8k16", DataType::float16(), DataType::float32(), &why);
  static const auto s8 = mma::find_mma_variant("m16n8k32", DataType::int_(8), DataType::int32(), &why);
  TESSERA_ICHECK(f16 && s8) << "the mma.sync A maps";
  const mma::Slot s = (v.k() == 32 ? *s8 : *f16).tables().a_owner[row % 16][k];
  return {32 * (row / 16) + s.lane, s.index};
}

mma::Element accumulator_at(int thread, int index, int n) {
  TESSERA_ICHECK(thread >= 0 && thread < kWarpgroup && index >= 0 && index < n / 2)
      << "wgmma accumulator element " << index << " of thread " << thread << " (N = " << n << ")";
  const int warp = thread / 32, g = (thread % 32) / 4, q = thread % 4;
  return {16 * warp + g + 8 * ((index / 2) % 2), 8 * (index / 4) + 2 * q + index % 2};
}

mma::Slot accumulator_owner(int row, int col, int n) {
  TESSERA_ICHECK(row >= 0 && row < 64 && col >= 0 && col < n) << "(" << row << ", " << col << ") of 64 x " << n;
  const int warp = row / 16, g = row % 8, q = (col % 8) / 2;
  return {32 * warp + 4 * g + q, 4 * (col / 8) + 2 * ((row % 16) / 8) + col % 2};
}

}  // namespace tessera::ir::wgmma
