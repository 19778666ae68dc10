//===- tests/rules/TensorCoreWgmmaSassTest.cpp - The Hopper kernel's cubins ===//
//
// matmul_tensor_core with `wgmma` for "nt" float16, bfloat16 and int8 GEMMs
// and the "nn" float16 one (B transposed on its way in) at 4096: NVRTC's
// sm_90a cubin holds one HGMMA (IGMMA) per 16 (32) of the K tile and 16-byte
// cp.async, no spill, no local memory, no FFMA (ptxas serialising the wgmma
// would have failed the build: runtime/NVRTC.h); fed by TMA (`tma`), the
// tiles arrive by UTMALDG on mbarriers (SYNCS) with no LDGSTS, warp specialised
// and persistent (a block per SM walking tiles) too, and with the epilogue
// stored by TMA (UTMASTG, no STG), and on 256 x 128 tiles (two warpgroups of
// two m64 subtiles: 8 HGMMA). Label nvrtc; skips itself
// without NVRTC (the SASS half without cuobjdump).
//
//===----------------------------------------------------------------------===//
#include <cstdio>

#include "../support/Sm90aCubin.h"
#include "RuleTestUtil.h"
#include "TensorCoreTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

TEST(TensorCoreWgmma, Sm90aCubinsHoldTheGmmaAndNoSerialisation) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  // nt: both tiles K-major; nn: B N-major (trans_b); tn: A M-major (trans_a).
  for (const char *what : {"float16", "bfloat16", "int8", "float16 nn", "bfloat16 tn"}) {
    SCOPED_TRACE(what);
    const std::string w = what;
    const bool int8 = w == "int8", nn = w == "float16 nn", tn = w == "bfloat16 tn";
    const char *dtype = nn ? "float16" : tn ? "bfloat16" : what;
    ir::PrimFunc f = int8 ? script::parse_func(int8_text(4096, 4096, 4096))
                          : analysis::specialize(script::parse_func(matmul_text(dtype, !tn, !nn, "m", 4096, 4096)),
                                                 {{"m", 4096}});
    auto m = rule.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    rules::TensorCoreConfig config = wgmma_config(int8 ? 1 : 2, 2, 128);
    config.validate(test_arch());
    Sm90aCubin cubin = build_sm90a(rule.apply(f, **m, config).func());
    std::printf("# %s: %d registers, %lld bytes of dynamic shared memory\n", what, cubin.registers(),
                static_cast<long long>(config.shared_bytes()));
    if (!cubin.sass) continue;
    runtime::SassSummary &s = *cubin.sass;
    SCOPED_TRACE(s.str());
    const char *op = int8 ? "IGMMA" : "HGMMA";
    // Two warpgroups run the same code: one instruction per K step of the tile.
    EXPECT_EQ(s.tensor_ops[op], 4);
    EXPECT_EQ(s.local_loads + s.local_stores, 0);
    EXPECT_GT(s.async_copies[16], 0) << "16-byte cp.async (LDGSTS)";
    EXPECT_EQ(s.fma_ops["FFMA"], 0);
  }
}

TEST(TensorCoreWgmma, TmaFedCubinsHoldTensorCopiesAndNoThreadLoads) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  // nn: B N-major, copied in boxes of 64-element spans.
  for (const char *what : {"float16", "int8", "float16 warp specialised", "float16 persistent", "float16 nn",
                           "float16 tma store", "float16 256 rows"}) {
    SCOPED_TRACE(what);
    const bool rows256 = std::string(what) == "float16 256 rows";
    const bool tma_store = rows256 || std::string(what) == "float16 tma store";
    const bool persistent = tma_store || std::string(what) == "float16 persistent";
    const bool int8 = std::string(what) == "int8";
    const bool specialised = persistent || std::string(what) == "float16 warp specialised";
    const bool nn = std::string(what) == "float16 nn";
    ir::PrimFunc f = int8 ? script::parse_func(int8_text(4096, 4096, 4096))
                          : analysis::specialize(script::parse_func(matmul_text("float16", true, !nn, "m", 4096, 4096)),
                                                 {{"m", 4096}});
    auto m = rule.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    rules::TensorCoreConfig config = wgmma_config(int8 ? 1 : 2, 2, 128, 4);
    config.tma = true;
    config.warp_specialized = specialised;
    config.persistent = persistent ? test_arch().compute.sm_count : 0;
    config.tma_store = tma_store;
    // 256 x 128 on two warpgroups of two m64 subtiles each, 3 stages.
    if (rows256) config.block_m = 256, config.stages = 3;
    config.validate(test_arch());
    Sm90aCubin cubin = build_sm90a(rule.apply(f, **m, config).func());
    if (!cubin.sass) continue;
    runtime::SassSummary &s = *cubin.sass;
    SCOPED_TRACE(s.str());
    std::printf("# %s fed by TMA: %d registers; %s\n", what, cubin.registers(), s.str().c_str());
    EXPECT_EQ(s.tensor_ops[int8 ? "IGMMA" : "HGMMA"], rows256 ? 8 : 4);
    EXPECT_GT(s.tma_loads, 0) << "UTMALDG";
    EXPECT_GT(s.mbarrier_ops, 0) << "SYNCS";
    EXPECT_TRUE(s.async_copies.empty()) << "no cp.async: TMA copies the tiles";
    EXPECT_EQ(s.local_loads + s.local_stores, 0);
    // The epilogue: by TMA store (UTMASTG, no thread's STG) or by the lanes.
    if (tma_store) {
      EXPECT_GT(s.tma_stores, 0) << "UTMASTG";
      EXPECT_TRUE(s.global_stores.empty()) << "no STG: TMA stores the output";
    } else {
      EXPECT_EQ(s.tma_stores, 0);
      EXPECT_FALSE(s.global_stores.empty());
    }
    // The producer gives up registers and the consumers take them.
    const std::string cu = cubin.fn.kernels().at(0).source;
    EXPECT_EQ(cu.find("setmaxnreg.dec.sync.aligned.u32 40") != std::string::npos, specialised);
    EXPECT_EQ(cu.find("setmaxnreg.inc.sync.aligned.u32 232") != std::string::npos, specialised);
  }
}

}  // namespace
}  // namespace tessera::test
