//===- tests/policies/GemmPolicyTest.cpp - The GEMM policy (matmul, conv2d) ---===//
//
// On every matmul and conv2d workload of the corpus at its full size and on
// every arch preset: twenty candidates, none dropped, sorted, the same on a
// second call, each accepted by the rule's apply. A large float32 matmul on
// the H100 gets a block of at least 128 threads that fits the SMs; a 16^3
// matmul gets no tile larger than the problem; every one of the top 20 at
// the workloads' small sizes (shapes that divide no tile) gives the
// interpreter's answer, for the conv2d and the transposed layouts the top 5;
// conv2d ranks implicit_gemm tilings with the direct ones when the extents
// are constant (the full-size conv's top 20 on the H100 has both; the first
// implicit ones at the small size give the interpreter's answer); a
// symbolic m is sized for the hint and runs for any m.
//
//===----------------------------------------------------------------------===//
#include <set>

#include "../rules/RuleTestUtil.h"

#include "tessera/policies/CostModel.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/Conv2d.h"
#include "tessera/rules/Matmul.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

bool is_gemm(const Entry &e) {
  return e.rule == "matmul" || e.rule == "matmul_tensor_core" || e.rule == "conv2d";
}

/// The CUDA-core rule of a GEMM workload (whose default may be the tensor cores').
const rules::Rule &cuda_core_rule(const Entry &e) {
  if (e.is_conv2d()) return rules::conv2d_rule();
  return e.rule == "matmul_tensor_core" ? rules::matmul_rule() : *rules::find_rule(e.rule);
}

ir::PrimFunc at_size(const Entry &e, const Sizes &sizes) {
  return analysis::specialize(load_func(e), e.specialized(sizes));
}


struct Proposed {
  rules::MatchPtr match;
  policies::Proposal proposal;
};

Proposed propose(const ir::PrimFunc &f, const rules::Rule &rule, const Arch &arch,
                 const policies::ProposeOptions &options = {}) {
  auto m = rule.match(f, arch);
  EXPECT_TRUE(m) << m.reason();
  if (!m) return {};
  return {*m, policies::propose(f, rule, **m, arch, options)};
}

std::vector<std::string> texts(const policies::Proposal &p) {
  std::vector<std::string> out;
  for (const policies::Candidate &c : p.candidates) out.push_back(c.config->str());
  return out;
}

/// Applies the top `count` candidates of `f`'s proposal and expects the
/// interpreter's answer for each (at every binding in `dims_list`).
void expect_top_match_interpreter(const Entry &e, const ir::PrimFunc &f, const rules::Rule &rule,
                                  size_t count, const std::vector<runtime::DimBindings> &dims_list) {
  Proposed p = propose(f, rule, test_arch());
  ASSERT_FALSE(p.proposal.candidates.empty()) << e.name;
  for (size_t i = 0; i < count && i < p.proposal.candidates.size(); ++i) {
    const rules::Config &c = *p.proposal.candidates[i].config;
    SCOPED_TRACE(e.name + " #" + std::to_string(i) + " " + c.str());
    schedule::Schedule sch = rule.apply(f, *p.match, c);
    for (const runtime::DimBindings &dims : dims_list) expect_same_results(e, f, sch.func(), dims);
  }
}

TEST(GemmPolicy, ServesMatmulAndConv2d) {
  for (const char *rule : {"matmul", "conv2d"}) {
    const policies::Policy *p = policies::find_policy(rule);
    ASSERT_NE(p, nullptr) << rule;
    EXPECT_STREQ(p->name(), "gemm");
  }
}

TEST(GemmPolicy, KeepsTheContractOnEveryWorkloadAndArch) {
  const std::vector<Arch> arches = Arch::presets();
  ASSERT_GE(arches.size(), 2u);
  int workloads = 0;
  for (const Entry &e : workload_entries()) {
    if (!is_gemm(e)) continue;
    ++workloads;
    // The SIMT matmul (and its policy) also takes the tensor-core workloads.
    const rules::Rule &rule = cuda_core_rule(e);
    const ir::PrimFunc f = at_size(e, e.full);
    std::set<std::string> applied;  // configs shared by several arches are applied once
    for (const Arch &arch : arches) {
      SCOPED_TRACE(e.name + " on " + arch.name);
      Proposed p = propose(f, rule, arch);
      const auto &cands = p.proposal.candidates;
      EXPECT_EQ(cands.size(), 20u);
      EXPECT_TRUE(p.proposal.dropped.empty()) << p.proposal.dropped.front();
      for (size_t i = 0; i < cands.size(); ++i) {
        EXPECT_TRUE(std::isfinite(cands[i].score) && cands[i].score > 0) << cands[i].score;
        EXPECT_FALSE(cands[i].why.empty());
        if (i > 0) {
          EXPECT_LE(cands[i - 1].score, cands[i].score) << "not sorted at " << i;
        }
        EXPECT_NO_THROW(cands[i].config->validate(arch));
        if (applied.insert(cands[i].config->str()).second) {
          EXPECT_NO_THROW(rule.apply(f, *p.match, *cands[i].config)) << cands[i].config->str();
        }
      }
      // Deterministic: a second call gives the same list.
      Proposed again = propose(f, rule, arch);
      EXPECT_EQ(texts(again.proposal), texts(p.proposal));
      for (size_t i = 0; i < cands.size() && i < again.proposal.candidates.size(); ++i)
        EXPECT_EQ(again.proposal.candidates[i].score, cands[i].score);
      // topk is honoured.
      EXPECT_EQ(propose(f, rule, arch, {.topk = 3}).proposal.candidates.size(), 3u);
    }
  }
  EXPECT_GE(workloads, 7);
}

TEST(GemmPolicy, LargeFloat32MatmulOnH100FillsTheSMs) {
  const Arch arch = Arch::by_name("h100");
  const ir::PrimFunc f = test::matmul_layout_program("nn", 4096, 4096, 4096);
  Proposed p = propose(f, rules::matmul_rule(), arch);
  ASSERT_FALSE(p.proposal.candidates.empty());
  const auto &top = dynamic_cast<const rules::MatmulConfig &>(*p.proposal.candidates[0].config);
  SCOPED_TRACE(top.str() + ": " + p.proposal.candidates[0].why);
  EXPECT_GE(top.threads(), 128);
  EXPECT_EQ(top.threads() % arch.compute.warp_size, 0);
  policies::Occupancy occ = policies::occupancy(arch, {top.threads(), top.registers(), top.shared_bytes()});
  EXPECT_GE(occ.blocks_per_sm, 1);
  // At least a quarter of the SM's warps resident, and a full wave of blocks.
  EXPECT_GE(occ.fraction, 0.25);
  EXPECT_GE((4096 / top.block_m) * (4096 / top.block_n), occ.blocks_per_sm * arch.compute.sm_count);
  // More than one output per thread: the FMAs outnumber the shared loads.
  EXPECT_GE(top.thread_m * top.thread_n, 16);
}

TEST(GemmPolicy, TinyMatmulGetsNoTileLargerThanTheProblem) {
  const ir::PrimFunc f = test::matmul_layout_program("nn", 16, 16, 16);
  for (const Arch &arch : Arch::presets()) {
    Proposed p = propose(f, rules::matmul_rule(), arch);
    EXPECT_FALSE(p.proposal.candidates.empty()) << arch.name;
    EXPECT_TRUE(p.proposal.dropped.empty());
    for (const policies::Candidate &c : p.proposal.candidates) {
      const auto &m = dynamic_cast<const rules::MatmulConfig &>(*c.config);
      EXPECT_LE(m.block_m, 16) << m.str();
      EXPECT_LE(m.block_n, 16) << m.str();
      EXPECT_LE(m.block_k, 16) << m.str();
    }
  }
}

TEST(GemmPolicy, Top20MatchTheInterpreterOnTheMatmulWorkloads) {
  for (const Entry &e : workload_entries()) {
    // The SIMT-matmul shapes (the tensor-core rule's defaults but the convolution).
    if ((e.rule != "matmul" && e.rule != "matmul_tensor_core") || e.is_conv2d()) continue;
    SmallWorkload w = small_workload(e);
    expect_top_match_interpreter(e, w.func, rules::matmul_rule(), 20, {w.dims});
  }
}

TEST(GemmPolicy, Top5MatchTheInterpreterOnConv2dAndTransposedLayouts) {
  Entry conv = find_entry("conv2d_nhwc_f16");
  SmallWorkload w = small_workload(conv);
  expect_top_match_interpreter(conv, w.func, rules::conv2d_rule(), 5, {w.dims});
  for (const char *layout : {"tn", "tt"}) {
    Entry e;
    e.name = std::string("matmul ") + layout;
    expect_top_match_interpreter(e, test::matmul_layout_program(layout, 37, 45, 40), rules::matmul_rule(), 5, {{}});
  }
}

bool is_implicit_gemm(const policies::Candidate &c) {
  return dynamic_cast<const rules::Conv2dConfig &>(*c.config).implicit_gemm();
}

TEST(GemmPolicy, Conv2dRanksImplicitGemmWithTheDirectForm) {
  // The corpus conv at full size (3 x 3, 64 -> 64 channels) on the H100:
  // both forms in the top 20, at least a quarter of each (the policy's
  // floor per form), each accepted by the rule (the contract test applies them).
  Entry e = find_entry("conv2d_nhwc_f16");
  const ir::PrimFunc f = at_size(e, e.full);
  Proposed p = propose(f, rules::conv2d_rule(), Arch::by_name("h100"));
  size_t implicit = 0;
  for (const policies::Candidate &c : p.proposal.candidates) implicit += is_implicit_gemm(c);
  EXPECT_GE(implicit, 1u) << testing::PrintToString(texts(p.proposal));
  EXPECT_GE(implicit, 5u) << testing::PrintToString(texts(p.proposal));
  EXPECT_LE(implicit, 15u) << testing::PrintToString(texts(p.proposal));
  // Symbolic extents cannot be fused: the direct form only.
  const ir::PrimFunc symbolic = load_func(e);
  Proposed s = propose(symbolic, rules::conv2d_rule(), test_arch());
  ASSERT_FALSE(s.proposal.candidates.empty());
  for (const policies::Candidate &c : s.proposal.candidates)
    EXPECT_FALSE(is_implicit_gemm(c)) << c.config->str();
}

TEST(GemmPolicy, ImplicitGemmCandidatesMatchTheInterpreter) {
  // At the small size (M = 2 x 9 x 11, K = 3 x 3 x 6, N = 10: no tile
  // divides) the first three implicit_gemm candidates among the top 40.
  Entry e = find_entry("conv2d_nhwc_f16");
  SmallWorkload w = small_workload(e);
  Proposed p = propose(w.func, rules::conv2d_rule(), test_arch(), {.topk = 40});
  size_t run = 0;
  for (const policies::Candidate &c : p.proposal.candidates) {
    if (!is_implicit_gemm(c) || run == 3) continue;
    ++run;
    SCOPED_TRACE(c.config->str());
    c.config->validate(test_arch());
    expect_same_results(e, w.func, rules::conv2d_rule().apply(w.func, *p.match, *c.config).func(), w.dims);
  }
  EXPECT_EQ(run, 3u) << testing::PrintToString(texts(p.proposal));
}

TEST(GemmPolicy, SymbolicMIsSizedForTheHintAndRunsForAnyM) {
  Entry e = find_entry("bmm_symbolic_m_f16");
  SmallWorkload w = small_workload(e);
  ASSERT_TRUE(w.dims.count("m"));
  // Scheduled once, run at m = 1, the small size and one past a power of two.
  expect_top_match_interpreter(e, w.func, rules::matmul_rule(), 5, {{{"m", 1}}, w.dims, {{"m", 65}}});
  // A hint of 16 rows: no block taller than 16; of 4096: taller blocks lead.
  Proposed small = propose(w.func, rules::matmul_rule(), test_arch(), {.symbolic_hint = 16});
  for (const policies::Candidate &c : small.proposal.candidates)
    EXPECT_LE(dynamic_cast<const rules::MatmulConfig &>(*c.config).block_m, 16) << c.config->str();
  Proposed large = propose(w.func, rules::matmul_rule(), test_arch(), {.symbolic_hint = 4096});
  ASSERT_FALSE(large.proposal.candidates.empty());
  EXPECT_GT(dynamic_cast<const rules::MatmulConfig &>(*large.proposal.candidates[0].config).block_m, 16);
}

}  // namespace
}  // namespace tessera::test
