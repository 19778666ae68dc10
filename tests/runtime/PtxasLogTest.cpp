//===- PtxasLogTest.cpp - Resource usage from ptxas -v logs (unit) --------===//
#include <gtest/gtest.h>

#include "tessera/runtime/NVRTC.h"

namespace tessera::runtime {
namespace {

TEST(PtxasLog, TwoEntriesWithADeviceFunction) {
  const char *log = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'gemm' for 'sm_90'
ptxas info    : Function properties for helper
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Function properties for gemm
    16 bytes stack frame, 24 bytes spill stores, 20 bytes spill loads
ptxas info    : Used 128 registers, used 1 barriers, 37888 bytes smem, 400 bytes cmem[0]
ptxas info    : Compile time = 19.000 ms
ptxas info    : Compiling entry function '_Z4vaddPKfS0_Pfi' for 'sm_90'
ptxas info    : Function properties for _Z4vaddPKfS0_Pfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 380 bytes cmem[0]
)";
  std::vector<KernelResources> ks = parse_ptxas_log(log);
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].name, "gemm");
  EXPECT_EQ(ks[0].registers, 128);
  EXPECT_EQ(ks[0].barriers, 1);
  EXPECT_EQ(ks[0].shared_bytes, 37888);
  EXPECT_EQ(ks[0].stack_bytes, 16);
  EXPECT_EQ(ks[0].spill_stores, 24);
  EXPECT_EQ(ks[0].spill_loads, 20);
  EXPECT_EQ(ks[1].name, "_Z4vaddPKfS0_Pfi");
  EXPECT_EQ(ks[1].registers, 8);
  EXPECT_EQ(ks[1].shared_bytes, 0);
  EXPECT_EQ(ks[1].barriers, 0);
  EXPECT_EQ(ks[1].spill_stores, 0);
}

TEST(PtxasLog, EmptyOrForeignLog) {
  EXPECT_TRUE(parse_ptxas_log("").empty());
  EXPECT_TRUE(parse_ptxas_log("warning: something\nUsed 5 registers\n").empty());
}

}  // namespace
}  // namespace tessera::runtime
