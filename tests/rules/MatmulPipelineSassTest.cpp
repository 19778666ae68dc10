//===- tests/rules/MatmulPipelineSassTest.cpp - Pipelined SIMT GEMMs in SASS ===//
//
// The SIMT matmul rule's cp.async pipelines (stages > 1) in the machine code:
// for float32 nn and nt GEMMs at 4096 the policy's best pipelined configs,
// compiled by NVRTC for sm_80, sm_86, sm_89 and sm_90 (each with its GPU's
// policy) and disassembled (runtime/Sass.h):
//   - the tiles arrive by LDGSTS (cp.async), none by LDG;
//   - no local memory (LDL/STL) and 0 spill bytes in ptxas's report;
//   - no more FFMA than the same config unpipelined: the pipeline guards its
//     last steps instead of duplicating the compute in an epilogue.
// Label nvrtc; skips itself without NVRTC or cuobjdump.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "RuleTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/Matmul.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"

namespace tessera::test {
namespace {

TEST(MatmulPipelineSass, CpAsyncTilesWithoutSpillsOrADuplicatedBody) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  std::optional<std::filesystem::path> tool = runtime::find_disassembler();
  if (!tool) GTEST_SKIP() << runtime::kNoDisassemblerHint;
  const rules::Rule &rule = rules::matmul_rule();
  for (const char *name : {"matmul_nn_f32", "matmul_nt_f32"}) {
    const Entry e = find_entry(name);
    ir::PrimFunc f = analysis::specialize(load_func(e), e.specialized({{"m", 4096}, {"n", 4096}, {"k", 4096}}));
    for (auto [target, gpu] : {std::pair{"sm_80", "a100"}, {"sm_86", "rtx3090"}, {"sm_89", "l40s"}, {"sm_90", "h100"}}) {
      const Arch arch = Arch::by_name(gpu);
      auto m = rule.match(f, arch);
      ASSERT_TRUE(m) << m.reason();
      policies::Proposal p = policies::propose(f, rule, **m, arch, {.topk = 20});
      // The two best pipelined configs, each also built with one stage.
      std::vector<rules::MatmulConfig> configs;
      for (const policies::Candidate &c : p.candidates) {
        const auto &mc = dynamic_cast<const rules::MatmulConfig &>(*c.config);
        if (mc.stages > 1 && configs.size() < 4) {
          configs.push_back(mc);
          configs.push_back(mc);
          configs.back().stages = 1;
        }
      }
      ASSERT_GE(configs.size(), 2u) << name << " on " << gpu << ": the policy proposes no pipeline";
      std::vector<runtime::CudaFunction> fns;
      std::vector<const std::vector<uint8_t> *> cubins;
      for (const rules::MatmulConfig &c : configs)
        fns.push_back(runtime::CudaFunction::build(rule.apply(f, **m, c).func(), {.arch = target}));
      for (const runtime::CudaFunction &fn : fns) cubins.push_back(&fn.kernels().at(0).compiled.cubin);
      std::vector<runtime::CubinSass> sass = runtime::summarise_cubins(cubins, target, *tool);
      ASSERT_EQ(sass.size(), fns.size());
      for (size_t i = 0; i < fns.size(); i += 2) {
        SCOPED_TRACE(std::string(name) + " " + target + " " + configs[i].str());
        runtime::SassSummary piped, plain;
        for (const runtime::SassSummary &s : sass[i].functions) piped += s;
        for (const runtime::SassSummary &s : sass[i + 1].functions) plain += s;
        SCOPED_TRACE(piped.str());
        const runtime::KernelResources &k = fns[i].kernels().at(0).compiled.kernels.at(0);
        EXPECT_EQ(k.spill_loads + k.spill_stores, 0);
        EXPECT_EQ(piped.local_loads + piped.local_stores, 0) << "local memory traffic";
        int64_t async = 0, loads = 0;
        for (const auto &[width, n] : piped.async_copies) async += n;
        for (const auto &[width, n] : piped.global_loads) loads += n;
        EXPECT_GT(async, 0) << "the tiles are fetched by cp.async (LDGSTS)";
        EXPECT_EQ(loads, 0) << "no tile goes through registers";
        EXPECT_GT(piped.fma_ops["FFMA"], 0);
        EXPECT_LE(piped.fma_ops["FFMA"], plain.fma_ops["FFMA"]) << "the compute is not duplicated";
      }
    }
  }
}

}  // namespace
}  // namespace tessera::test
