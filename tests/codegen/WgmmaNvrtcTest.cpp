//===- tests/codegen/WgmmaNvrtcTest.cpp - wgmma in the machine code (nvrtc) ===//
//
// tests/codegen/hopper/wgmma_nt_{f16,s8}.py compiled by NVRTC for sm_90a: ptxas
// reports no spill and none of the warnings that say wgmma was serialised
// or fenced behind the program's back (C7510, C7511, C7517, C7519), and the
// SASS holds one HGMMA (IGMMA for int8) per wgmma, with no local memory; a
// kernel that makes ptxas print one of those warnings is a CompileError
// naming it (TENSOR_CORE.md §4). hopper/tma_wgmma_nt_f16.py's tiles arrive
// by TMA (UTMALDG, mbarriers: SYNCS), with no thread loading them. Skips
// itself without NVRTC (and the SASS half without cuobjdump).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <iostream>

#include "../support/Sm90aCubin.h"
#include "Kernels.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"

namespace tessera::test {
namespace {

class WgmmaNvrtc : public ::testing::TestWithParam<std::pair<const char *, const char *>> {};

TEST_P(WgmmaNvrtc, Sm90aCubinHasOneGmmaPerWgmmaAndNoSerialisation) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  const auto [name, op] = GetParam();
  ir::PrimFunc f = script::parse_func(read_text_file(codegen_test_dir() / "hopper" / (std::string(name) + ".py")));
  Sm90aCubin cubin = build_sm90a(f);
  if (!cubin.sass) GTEST_SKIP() << runtime::kNoDisassemblerHint;
  runtime::SassSummary &s = *cubin.sass;
  EXPECT_EQ(s.tensor_ops[op], 4) << s.str();
  EXPECT_EQ(s.tensor_ops["HMMA"] + s.tensor_ops["IMMA"], 0) << s.str();
  EXPECT_EQ(s.local_loads + s.local_stores, 0) << s.str();
}

INSTANTIATE_TEST_SUITE_P(Hopper, WgmmaNvrtc,
                         ::testing::Values(std::pair{"wgmma_nt_f16", "HGMMA"}, std::pair{"wgmma_nt_s8", "IGMMA"},
                                           std::pair{"wgmma_rs_nt_f16", "HGMMA"}),
                         [](const auto &info) { return std::string(info.param.first); });

TEST(WgmmaNvrtc, TmaKernelHoldsTensorCopiesAndBarriersInSass) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  ir::PrimFunc f = script::parse_func(read_text_file(codegen_test_dir() / "hopper" / "tma_wgmma_nt_f16.py"));
  Sm90aCubin cubin = build_sm90a(f);
  if (!cubin.sass) GTEST_SKIP() << runtime::kNoDisassemblerHint;
  runtime::SassSummary &s = *cubin.sass;
  // ptxas unrolls the four K tiles: 4 HGMMA each. The tiles come by TMA,
  // not by thread loads: two boxes for each of the two stages of the
  // prologue and of the two refills.
  EXPECT_EQ(s.tensor_ops["HGMMA"], 16) << s.str();
  EXPECT_EQ(s.tma_loads, 8) << s.str();
  EXPECT_GT(s.mbarrier_ops, 0) << s.str();
  EXPECT_TRUE(s.async_copies.empty() && s.global_loads.empty()) << s.str();
  EXPECT_EQ(s.local_loads + s.local_stores, 0) << s.str();
  std::cout << "tma_wgmma_nt_f16 on sm_90a: " << s.str() << ", " << cubin.registers() << " registers\n";
}

TEST(WgmmaNvrtc, SerialisedWgmmaIsAFailedBuild) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  // Touching an accumulator between two wgmma of a group: ptxas injects
  // warpgroup waits and arrives (C7517, C7519) and serialises the chain.
  std::string text = read_text_file(codegen_test_dir() / "hopper" / "wgmma_nt_f16.py");
  const std::string wgmma_line =
      "                    T.evaluate(T.wgmma(\"m64n64k16\", C_frag[tx_2, 0], A_shared[ks * 16], B_shared[ks * 16], "
      "tx_2, 128, 16, 1024))\n";
  size_t at = text.find(wgmma_line);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + wgmma_line.size(), "                    C_frag[tx_2, 1] = C_frag[tx_2, 1] * T.float32(0.5)\n");
  try {
    runtime::CudaFunction::build(script::parse_func(text), {.arch = "sm_90a"});
    ADD_FAILURE() << "a serialised wgmma chain built";
  } catch (const runtime::CompileError &e) {
    EXPECT_NE(std::string(e.what()).find("ptxas serialised the wgmma"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(C75"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::test
