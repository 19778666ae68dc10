//===- tests/rules/TensorCoreSassTest.cpp - mma.sync GEMMs in the machine code ===//
//
// The tensor-core rule's kernels compiled by NVRTC for every Ampere-class
// target and Hopper (sm_80, sm_86, sm_89, sm_90), disassembled
// (runtime/Sass.h): the instructions meant are there and nothing spills.
//   - HMMA (mma.sync), LDSM (ldmatrix) and LDGSTS (cp.async) at 16 bytes;
//   - no local memory (LDL/STL) and 0 spill bytes in ptxas's report;
//   - the count of HMMA per K tile is what the warp tile implies.
// The default config and the policy's top 3 mma.sync configs for float16 nn and nt, bfloat16
// and int8 "nt" GEMMs at 4096 (IMMA for int8); tf32 (HMMA.1688.F32.TF32)
// and float16 accumulation (HMMA.16816.F16) on sm_80 and sm_90. Label nvrtc; skips itself without NVRTC or cuobjdump.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "RuleTestUtil.h"
#include "TensorCoreTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

struct Built {
  std::string what;
  runtime::CudaFunction fn;
  int64_t mma_per_k_tile = 0;  ///< mma.sync the unrolled K tile holds
  bool int8 = false;           ///< IMMA (int8) rather than HMMA
};

TEST(TensorCoreSass, HmmaLdsmAndLdgstsWithoutSpillsOnEveryTarget) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  std::optional<std::filesystem::path> tool = runtime::find_disassembler();
  if (!tool) GTEST_SKIP() << runtime::kNoDisassemblerHint;
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  for (const char *name : {"matmul_nn_f16", "matmul_nt_f16", "matmul_nn_bf16", "int8_nt"}) {
    const bool int8 = std::string(name) == "int8_nt";
    ir::PrimFunc f = int8 ? script::parse_func(int8_text(4096, 4096, 4096))
                          : analysis::specialize(load_func(find_entry(name)),
                                                 find_entry(name).specialized(find_entry(name).full));
    // Each target with a GPU of its own (their shared memory differs): the
    // default config everywhere, the policy's top 3 on the H100 too.
    for (auto [target, gpu] : {std::pair{"sm_80", "a100"}, {"sm_86", "rtx3090"}, {"sm_89", "l40s"}, {"sm_90", "h100"}}) {
      const Arch arch = Arch::by_name(gpu);
      auto m = rule.match(f, arch);
      ASSERT_TRUE(m) << m.reason();
      std::vector<std::unique_ptr<rules::Config>> configs;
      configs.push_back(rule.default_config(**m, arch));
      if (std::string(target) == "sm_90") {
        // The mma.sync ones (the Hopper kernel's cubins: TensorCoreWgmmaSassTest).
        policies::Proposal p = policies::propose(f, rule, **m, arch, {.topk = 60});
        EXPECT_TRUE(p.dropped.empty());
        int taken = 0;
        for (policies::Candidate &c : p.candidates)
          if (!dynamic_cast<const rules::TensorCoreConfig &>(*c.config).wgmma && taken++ < 3)
            configs.push_back(std::move(c.config));
        EXPECT_GE(taken, 3) << "the policy proposes mma.sync configs on an H100 too";
      }
      size_t n = configs.size();
      std::vector<Built> built;
      std::vector<const std::vector<uint8_t> *> cubins;
      for (size_t i = 0; i < n; ++i) {
        const auto &c = dynamic_cast<const rules::TensorCoreConfig &>(*configs[i]);
        ir::PrimFunc s = rule.apply(f, **m, c).func();
        built.push_back({std::string(name) + " " + target + " " + c.str(),
                         runtime::CudaFunction::build(s, {.arch = target}),
                         c.warp_m() / 16 * (c.warp_n() / 8) * (c.block_k / (32 / c.in_bytes)), int8});
      }
      for (const Built &b : built) cubins.push_back(&b.fn.kernels().at(0).compiled.cubin);
      std::vector<runtime::CubinSass> sass = runtime::summarise_cubins(cubins, target, *tool);
      ASSERT_EQ(sass.size(), built.size());
      for (size_t i = 0; i < built.size(); ++i) {
        SCOPED_TRACE(built[i].what);
        ASSERT_EQ(sass[i].error, "");
        runtime::SassSummary s;
        for (const runtime::SassSummary &fs : sass[i].functions) s += fs;
        SCOPED_TRACE(s.str());
        const runtime::KernelResources &k = built[i].fn.kernels().at(0).compiled.kernels.at(0);
        EXPECT_EQ(k.spill_loads + k.spill_stores, 0);
        EXPECT_EQ(s.local_loads + s.local_stores, 0) << "local memory traffic";
        const char *op = built[i].int8 ? "IMMA" : "HMMA";
        EXPECT_EQ(s.tensor_ops[op], built[i].mma_per_k_tile) << "one " << op << " per mma.sync of the unrolled K tile";
        EXPECT_GT(s.ldmatrix, 0);
        EXPECT_GT(s.async_copies[16], 0) << "16-byte cp.async (LDGSTS)";
        EXPECT_EQ(s.fma_ops["FFMA"], 0) << "the product runs on the tensor cores";
      }
    }
  }
}

TEST(TensorCoreSass, Tf32AndFloat16AccumulationAreTheirOwnHmma) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  std::optional<std::filesystem::path> tool = runtime::find_disassembler();
  if (!tool) GTEST_SKIP() << runtime::kNoDisassemblerHint;
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  // The form each program asks for, as the SASS spells it (sm_80 and sm_90).
  struct Case {
    std::string text, hmma;
    int64_t acc_bytes;
  };
  std::vector<Case> cases = {{tf32_text(true, false, "4096", 4096, 4096), "HMMA.1688.F32.TF32", 4},
                             {tf32_text(false, true, "4096", 4096, 4096), "HMMA.1688.F32.TF32", 4},
                             {f16_accumulating_text(true, false, "4096", 4096, 4096), "HMMA.16816.F16", 2}};
  for (const Case &k : cases)
    for (auto [target, gpu] : {std::pair{"sm_80", "a100"}, {"sm_90", "h100"}}) {
      const Arch arch = Arch::by_name(gpu);
      ir::PrimFunc f = script::parse_func(k.text);
      auto m = rule.match(f, arch);
      ASSERT_TRUE(m) << m.reason();
      auto c = dynamic_cast<const rules::TensorCoreConfig &>(*rule.default_config(**m, arch));
      c.acc_bytes = k.acc_bytes;
      SCOPED_TRACE(k.hmma + " " + target + " " + c.str());
      runtime::CudaFunction fn = runtime::CudaFunction::build(rule.apply(f, **m, c).func(), {.arch = target});
      const runtime::KernelResources &res = fn.kernels().at(0).compiled.kernels.at(0);
      EXPECT_EQ(res.spill_loads + res.spill_stores, 0);
      std::string sass = runtime::disassemble(fn.kernels().at(0).compiled.cubin, *tool);
      runtime::SassSummary s;
      for (const runtime::SassSummary &fs : runtime::parse_sass(sass)) s += fs;
      SCOPED_TRACE(s.str());
      EXPECT_EQ(s.local_loads + s.local_stores, 0) << "local memory traffic";
      EXPECT_EQ(s.tensor_ops["HMMA"], c.warp_m() / 16 * (c.warp_n() / 8) * (c.block_k / c.mma_k()))
          << "one HMMA per mma.sync of the unrolled K tile";
      size_t at = sass.find("HMMA.");
      ASSERT_NE(at, std::string::npos);
      EXPECT_EQ(sass.compare(at, k.hmma.size(), k.hmma), 0) << sass.substr(at, 40);
      EXPECT_GT(s.async_copies[16], 0) << "16-byte cp.async (LDGSTS)";
      EXPECT_EQ(s.fma_ops["FFMA"], 0) << "the product runs on the tensor cores";
    }
}

}  // namespace
}  // namespace tessera::test
