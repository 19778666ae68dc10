//===- tests/policies/SmTimeTest.cpp - Shared-memory wavefronts and SM time ---===//
//
// The two CostModel pieces the GEMM policy added: wavefronts of a warp's
// shared-memory access pattern (the documented examples, 8- and 16-byte
// phases) and the SM pipe model (which pipe bounds, the tail round, stalls
// hidden by resident blocks, a block that cannot run).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/policies/CostModel.h"

namespace tessera::policies {
namespace {

const Arch &h100() {
  static const Arch arch = Arch::by_name("h100");
  return arch;
}

std::vector<int64_t> lanes(int64_t stride_bytes, int64_t count = 32) {
  std::vector<int64_t> a;
  for (int64_t l = 0; l < count; ++l) a.push_back(l * stride_bytes);
  return a;
}

TEST(SmemWavefronts, CountsBankSweepsPerWarpAccess) {
  EXPECT_EQ(smem_wavefronts(h100(), lanes(4), 4), 1);     // 32 consecutive floats
  EXPECT_EQ(smem_wavefronts(h100(), lanes(0), 4), 1);     // one address, broadcast
  EXPECT_EQ(smem_wavefronts(h100(), lanes(128), 4), 32);  // a column of a 32 x 32 float tile
  EXPECT_EQ(smem_wavefronts(h100(), lanes(8), 4), 2);     // every other float: 2 words per bank
  EXPECT_EQ(smem_wavefronts(h100(), lanes(132), 4), 1);   // the column with a pad of one float
  EXPECT_EQ(smem_wavefronts(h100(), lanes(16), 16), 4);   // float4 per lane: 4 phases of 8 lanes
  EXPECT_EQ(smem_wavefronts(h100(), lanes(32), 16), 8);   // float4 at a 32-byte stride: 2 per phase
  EXPECT_EQ(smem_wavefronts(h100(), lanes(2), 2), 1);     // 32 halves: 16 words
  EXPECT_EQ(smem_wavefronts(h100(), {}, 4), 0);
}

TEST(SmTime, TheBusiestPipeBounds) {
  const Arch &a = h100();
  Occupancy occ = occupancy(a, {256, 64, 0});
  ASSERT_GT(occ.blocks_per_sm, 0);
  const int64_t grid = occ.blocks_per_sm * a.compute.sm_count;  // one full round
  SmTime fma = sm_time(a, {.fma = 1e5}, grid, 256, occ);
  EXPECT_STREQ(fma.bound, "fma");
  EXPECT_EQ(fma.rounds, 1);
  // 4 FMA warp instructions per clock on an H100 SM (128 lanes): 1e5 / 4
  // clocks a block, plus a tenth of the issue pipe's 1e5 / 4 (4 schedulers).
  const double clock_hz = a.compute.boost_clock_mhz * 1e6;
  EXPECT_NEAR(fma.us, double(occ.blocks_per_sm) * (1e5 / 4) * 1.1 / clock_hz * 1e6, fma.us * 0.01);
  EXPECT_STREQ(sm_time(a, {.fma = 1e5, .other = 1e5}, grid, 256, occ).bound, "issue");
  EXPECT_STREQ(sm_time(a, {.fma = 1e5, .smem_wavefronts = 1e5}, grid, 256, occ).bound, "shared memory");
  // A block waiting on memory alone is latency-bound; resident blocks fill its wait.
  Occupancy one = occ;
  one.blocks_per_sm = 1;
  EXPECT_STREQ(sm_time(a, {.fma = 1e3, .stall_cycles = 1e5}, a.compute.sm_count, 256, one).bound, "latency");
  EXPECT_STREQ(sm_time(a, {.fma = 1e5, .stall_cycles = 1e4}, grid, 256, occ).bound, "fma");
}

TEST(SmTime, TheTailRoundCounts) {
  const Arch &a = h100();
  Occupancy occ = occupancy(a, {256, 64, 0});
  const int64_t full = occ.blocks_per_sm * a.compute.sm_count;
  BlockWork w{.fma = 1e5};
  SmTime one = sm_time(a, w, full, 256, occ), tail = sm_time(a, w, full + 1, 256, occ);
  EXPECT_EQ(tail.rounds, 2);
  EXPECT_GT(tail.us, one.us * 1.1);
  // Blocks never resident: infinity.
  EXPECT_TRUE(std::isinf(sm_time(a, w, full, 256, Occupancy{}).us));
}

}  // namespace
}  // namespace tessera::policies
