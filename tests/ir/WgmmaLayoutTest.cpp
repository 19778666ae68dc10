//===- tests/ir/WgmmaLayoutTest.cpp - wgmma's layouts against the PTX ISA ---===//
//
// ir/Wgmma.h: the accumulator map is a bijection between the warpgroup's
// 128 x N/2 registers and the 64 x N tile, with the ISA figure's points;
// the shared-memory layouts put each 16-byte chunk where the swizzle
// patterns say (128 B: chunk ^= row % 8), are bijections over a whole
// atom, and descriptors round-trip; the forms parse and refuse what wgmma
// does not have.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <set>

#include "tessera/ir/Wgmma.h"

namespace tessera::ir::wgmma {
namespace {

TEST(WgmmaLayout, AccumulatorMapIsABijectionWithTheIsaPoints) {
  for (int n : {8, 64, 256}) {
    std::set<std::pair<int, int>> seen;
    for (int t = 0; t < kWarpgroup; ++t)
      for (int i = 0; i < n / 2; ++i) {
        mma::Element e = accumulator_at(t, i, n);
        ASSERT_TRUE(e.row >= 0 && e.row < 64 && e.col >= 0 && e.col < n);
        EXPECT_TRUE(seen.insert({e.row, e.col}).second) << "(" << e.row << ", " << e.col << ") twice";
        EXPECT_EQ(accumulator_owner(e.row, e.col, n), (mma::Slot{t, i}));
      }
    EXPECT_EQ(seen.size(), size_t(64 * n));
  }
  // The ISA's figure: thread 0 holds d0, d1 at row 0, cols 0, 1 and d2, d3
  // at row 8; thread 5 starts at row 1, col 2; warp 1 (thread 32) at row
  // 16; each 8 columns further is four registers on.
  EXPECT_EQ(accumulator_at(0, 1, 64), (mma::Element{0, 1}));
  EXPECT_EQ(accumulator_at(0, 2, 64), (mma::Element{8, 0}));
  EXPECT_EQ(accumulator_at(5, 0, 64), (mma::Element{1, 2}));
  EXPECT_EQ(accumulator_at(32, 0, 64), (mma::Element{16, 0}));
  EXPECT_EQ(accumulator_at(127, 31, 64), (mma::Element{63, 63}));
  EXPECT_EQ(accumulator_at(0, 4, 64), (mma::Element{0, 8}));
}

TEST(WgmmaLayout, SwizzledRowsXorTheirChunkWithTheRow) {
  const SmemLayout sw128{128, 16, 1024};
  for (int row = 0; row < 16; ++row)
    for (int kb = 0; kb < 32; kb += 2) {
      const int64_t at = sw128.address(0, row, kb);
      EXPECT_EQ(at / 128, row) << "a row stays in its 128 bytes";
      EXPECT_EQ(at % 128 / 16, (kb / 16) ^ (row % 8)) << "row " << row << " byte " << kb;
      EXPECT_EQ(at % 16, kb % 16);
    }
  // A tile 32 bytes further along K (the next k16 step) keeps the pattern.
  EXPECT_EQ(sw128.address(32, 3, 0) % 128 / 16, 2 ^ 3);
  // 64 bytes: rows of 64, the chunk XORed with bits 7-8 (row / 2 % 4).
  const SmemLayout sw64{64, 16, 512};
  EXPECT_EQ(sw64.address(0, 2, 0), 2 * 64 + (1 << 4));
  EXPECT_EQ(sw64.address(0, 1, 16), 64 + 16);
  // 32 bytes: bit 7 (rows 4-7 of a group) flips the chunk.
  const SmemLayout sw32{32, 16, 256};
  EXPECT_EQ(sw32.address(0, 4, 0), 4 * 32 + 16);
  EXPECT_EQ(sw32.address(0, 3, 16), 3 * 32 + 16);
  // No swizzle: 8 x 16-byte core matrices, LBO along K, SBO along rows.
  const SmemLayout plain{0, 128, 256};
  EXPECT_EQ(plain.address(0, 9, 18), 1 * 16 + 256 + 128 + 2);
}

TEST(WgmmaLayout, MnMajorOffsetsAreThePtxIsaExamples) {
  // The PTX ISA's MN-major bfloat16 examples ("Canonical Layouts"), as
  // element strides over (mn = x0 + 8 x1 + 8 X x2, k = y0 + 8 y1), X the
  // 16-byte chunks of a swizzle span (1 without a swizzle):
  //   none: ((8,1,2),(8,2)):((1,8,64),(8,128)),  LBO 256 B, SBO 128 B
  //   32 B: ((8,2,2),(8,2)):((1,8,128),(16,256)), LBO 256 B, SBO 512 B
  //   64 B: ((8,4,2),(8,2)):((1,8,256),(32,512)), LBO 512 B, SBO 1024 B
  struct Example {
    SmemLayout layout;
    int chunks;                       // X
    int64_t x2_stride, y0_stride, y1_stride;  // in elements
  };
  for (const Example &e : {Example{{0, 256, 128}, 1, 64, 8, 128}, Example{{32, 256, 512}, 2, 128, 16, 256},
                           Example{{64, 512, 1024}, 4, 256, 32, 512}}) {
    SCOPED_TRACE("swizzle " + std::to_string(e.layout.swizzle_bytes));
    ASSERT_EQ(e.layout.check(), "");
    for (int mn = 0; mn < 16 * e.chunks; ++mn)
      for (int k = 0; k < 16; ++k) {
        const int x0 = mn % 8, x1 = mn / 8 % e.chunks, x2 = mn / (8 * e.chunks), y0 = k % 8, y1 = k / 8;
        const int64_t want = x0 + 8 * x1 + e.x2_stride * x2 + e.y0_stride * y0 + e.y1_stride * y1;
        ASSERT_EQ(e.layout.mn_major_offset(2 * mn, k), 2 * want) << "mn " << mn << " k " << k;
        // The whole address is then swizzled, as a K-major one is.
        EXPECT_EQ(e.layout.element_address(0, mn, k, 2, true), e.layout.swizzle(2 * want));
      }
  }
  // 128 B, the rule's MN-major tiles ([span][block_k = 64][64]): K row k of
  // a span at k x 128 bytes, its 16-byte chunks XORed with k % 8.
  const SmemLayout sw128{128, 64 * 128, 1024};
  for (int mn = 0; mn < 128; mn += 8)
    for (int k = 0; k < 16; ++k) {
      const int64_t at = sw128.element_address(0, mn, k, 2, true);
      EXPECT_EQ(at / (64 * 128), mn / 64) << "the span";
      EXPECT_EQ(at % (64 * 128) / 128, k) << "the K row";
      EXPECT_EQ(at % 128 / 16, (mn % 64 / 8) ^ (k % 8)) << "the chunk";
    }
  // K-major reads of the same call ignore the LBO an MN-major partner set.
  EXPECT_EQ(sw128.element_address(0, 9, 5, 2, false), SmemLayout({128, 16, 1024}).address(0, 9, 10));
}

TEST(WgmmaLayout, EverySwizzleIsABijectionOverAnAtom) {
  for (int span : {32, 64, 128}) {
    const SmemLayout l{span, 16, 8 * span};
    std::set<int64_t> seen;
    for (int64_t a = 0; a < 8 * span; ++a) seen.insert(l.swizzle(a));
    EXPECT_EQ(seen.size(), size_t(8 * span));
    EXPECT_EQ(*seen.rbegin(), 8 * span - 1) << "stays inside its atom";
  }
}

TEST(WgmmaLayout, DescriptorsRoundTrip) {
  for (SmemLayout l : {SmemLayout{128, 16, 1024}, SmemLayout{64, 16, 512}, SmemLayout{32, 16, 256},
                       SmemLayout{0, 128, 256}}) {
    const uint64_t d = encode_descriptor(2048 + 32, l);
    auto [start, back] = decode_descriptor(d);
    EXPECT_EQ(start, 2048 + 32);
    EXPECT_EQ(back.swizzle_bytes, l.swizzle_bytes);
    EXPECT_EQ(back.lbo, l.lbo);
    EXPECT_EQ(back.sbo, l.sbo);
  }
  // The ISA's bit positions: start >> 4 at 0, LBO >> 4 at 16, SBO >> 4 at
  // 32, 128-byte swizzle = 1 at 62.
  EXPECT_EQ(encode_descriptor(1024, {128, 16, 1024}), 64u | 1u << 16 | uint64_t(64) << 32 | uint64_t(1) << 62);
  EXPECT_NE(SmemLayout({96, 16, 1024}).check(), "");
  EXPECT_NE(SmemLayout({128, 8, 1024}).check(), "");
  EXPECT_NE(SmemLayout({128, 16, 16 << 14}).check(), "");
}

TEST(WgmmaLayout, FormsParseAndRefuseWhatWgmmaLacks) {
  std::string why;
  auto v = find_wgmma_variant("m64n128k16", DataType::float16(), DataType::float32(), &why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(v->ptx(), "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16");
  EXPECT_EQ(v->d_per_thread(), 64);
  v = find_wgmma_variant("m64n64k32", DataType::int_(8), DataType::int32(), &why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(v->ptx(), "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8");
  EXPECT_FALSE(find_wgmma_variant("m64n60k16", DataType::float16(), DataType::float32(), &why));
  EXPECT_NE(why.find("multiple of 8"), std::string::npos) << why;
  EXPECT_FALSE(find_wgmma_variant("m64n264k16", DataType::float16(), DataType::float32(), &why));
  EXPECT_FALSE(find_wgmma_variant("m64n64k32", DataType::float16(), DataType::float32(), &why));
  EXPECT_NE(why.find("K = 16"), std::string::npos) << why;
  EXPECT_FALSE(find_wgmma_variant("m64n64k16", DataType::float16(), DataType::float16(), &why));
  EXPECT_FALSE(find_wgmma_variant("m16n8k16", DataType::float16(), DataType::float32(), &why));
}

}  // namespace
}  // namespace tessera::ir::wgmma
