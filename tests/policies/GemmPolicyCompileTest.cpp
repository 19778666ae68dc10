//===- tests/policies/GemmPolicyCompileTest.cpp - Proposed configs compile (nvrtc) ===//
//
// Label `nvrtc`: the top 3 configs the GEMM policy proposes for every matmul
// and conv2d workload (the conv2d's include an implicit_gemm one) at its
// full size on the H100 preset compile with NVRTC
// for sm_90 without spilling under their launch bounds (the policy ranked
// them by the rule's register estimate). Measured once: 96 to 128 registers
// for the matmuls (estimate 112 to 128), 142 to 168 for the conv2d
// (estimate about 90: its occupancy is overestimated), 1 to 4 s per compile.
//
//===----------------------------------------------------------------------===//
#include "../rules/RuleTestUtil.h"

#include "tessera/policies/Policy.h"
#include "tessera/rules/Conv2d.h"
#include "tessera/rules/Matmul.h"
#include "tessera/runtime/CudaFunction.h"

namespace tessera::test {
namespace {

TEST(GemmPolicyCompile, TopConfigsCompileForSm90WithoutSpilling) {
  const Arch arch = Arch::by_name("h100");
  for (const Entry &e : workload_entries()) {
    if (e.rule != "matmul" && e.rule != "matmul_tensor_core" && e.rule != "conv2d") continue;
    // The SIMT matmul (and its policy) also takes the tensor-core workloads.
    const rules::Rule &rule = e.is_conv2d()           ? rules::conv2d_rule()
                              : e.rule == "matmul_tensor_core" ? rules::matmul_rule()
                                                               : *rules::find_rule(e.rule);
    const ir::PrimFunc f = analysis::specialize(load_func(e), e.specialized(e.full));
    auto m = rule.match(f, arch);
    ASSERT_TRUE(m) << m.reason();
    policies::Proposal p = policies::propose(f, rule, **m, arch, {.topk = 3});
    ASSERT_EQ(p.candidates.size(), 3u) << e.name;
    for (const policies::Candidate &c : p.candidates) {
      const std::string what = e.name + " " + c.config->str();
      try {
        auto fns = runtime::CudaFunction::build_for_archs(rule.apply(f, **m, *c.config).func(), {"sm_90"});
        ASSERT_EQ(fns.size(), 1u);
        const runtime::CompileResult &r = fns[0].compiled();
        EXPECT_FALSE(r.cubin.empty()) << what;
        ASSERT_FALSE(r.kernels.empty()) << what;
        for (const runtime::KernelResources &k : r.kernels)
          EXPECT_EQ(k.spill_stores, 0) << what << ": " << k.registers << " registers";
      } catch (const UserError &err) {
        ADD_FAILURE() << what << ": " << err.what();
      }
    }
  }
}

}  // namespace
}  // namespace tessera::test
