//===- tests/codegen/WgmmaNvrtcTest.cpp - wgmma in the machine code (nvrtc) ===//
//
// tests/codegen/hopper/wgmma_nt_f16.py compiled by NVRTC for sm_90a: ptxas
// reports no spill and none of the warnings that say wgmma was serialised
// or fenced behind the program's back (C7510, C7517, C7519: treated as
// failures, TENSOR_CORE.md §4), and the SASS holds one HGMMA per wgmma,
// 64x64x16, with no local memory. Skips itself without NVRTC (and the SASS
// half without cuobjdump).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "Kernels.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"

namespace tessera::test {
namespace {

TEST(WgmmaNvrtc, Sm90aCubinHasOneHgmmaPerWgmmaAndNoSerialisation) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  ir::PrimFunc f = script::parse_func(read_text_file(codegen_test_dir() / "hopper" / "wgmma_nt_f16.py"));
  runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = "sm_90a"});
  const runtime::CompileResult &c = fn.kernels().at(0).compiled;
  for (const char *warning : {"C7510", "C7517", "C7519"}) EXPECT_EQ(c.log.find(warning), std::string::npos) << c.log;
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].spill_loads + c.kernels[0].spill_stores, 0) << c.log;
  std::optional<std::filesystem::path> tool = runtime::find_disassembler();
  if (!tool) GTEST_SKIP() << runtime::kNoDisassemblerHint;
  std::vector<runtime::CubinSass> sass = runtime::summarise_cubins({&c.cubin}, "sm_90a", *tool);
  ASSERT_EQ(sass.size(), 1u);
  ASSERT_EQ(sass[0].error, "");
  runtime::SassSummary s;
  for (const runtime::SassSummary &fs : sass[0].functions) s += fs;
  EXPECT_EQ(s.tensor_ops["HGMMA"], 4) << s.str();
  EXPECT_EQ(s.tensor_ops["HMMA"], 0) << s.str();
  EXPECT_EQ(s.local_loads + s.local_stores, 0) << s.str();
}

}  // namespace
}  // namespace tessera::test
