//===- tests/policies/MemoryPolicyTest.cpp - The memory-bound policies ------===//
//
// The elementwise/fallback, reduction/general_reduction and gemv policies on
// every corpus workload whose rule they serve, on every arch preset:
//   - the contract of Policy.h: candidates, none dropped (valid, unique), at
//     most top-k, sorted by (score, config text), the same list twice;
//   - what the scores must get right: a large elementwise kernel fills every
//     SM, a 4096-wide softmax puts at least 128 threads on a row, gemv and
//     reductions read coalesced and fill the GPU;
//   - every proposed config, applied by its rule at the workload's small size,
//     gives the interpreter's answer and lowers to CUDA C (including with one
//     extent kept symbolic: only configs the rule and lowering accept for any
//     value are proposed);
//   - the long-tail programs get fallback candidates.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>

#include "RuleTestUtil.h"

#include "tessera/analysis/BlockInfo.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/rules/Fallback.h"
#include "tessera/rules/Gemv.h"
#include "tessera/rules/GeneralReduction.h"
#include "tessera/rules/Reduction.h"

namespace tessera::test {
namespace {

constexpr int64_t kTopK = 20;

bool served_here(const std::string &rule) {
  return rule == "elementwise" || rule == "fallback" || rule == "reduction" || rule == "general_reduction" ||
         rule == "gemv";
}

std::vector<Entry> memory_entries() {
  std::vector<Entry> out;
  for (const Entry &e : workload_entries())
    if (served_here(e.rule)) out.push_back(e);
  return out;
}

const std::vector<Arch> &presets() {
  static const std::vector<Arch> all = Arch::presets();
  return all;
}

const rules::Rule &rule_of(const Entry &e) {
  const rules::Rule *r = rules::find_rule(e.rule);
  EXPECT_NE(r, nullptr) << e.rule;
  return *r;
}

/// propose() for `f` with its rule, asserting the contract.
policies::Proposal propose_checked(const Entry &e, const ir::PrimFunc &f, const Arch &arch) {
  SCOPED_TRACE(e.name + " on " + arch.name);
  const rules::Rule &rule = rule_of(e);
  auto m = rule.match(f, arch);
  EXPECT_TRUE(m) << m.reason();
  if (!m) return {};
  EXPECT_NE(policies::find_policy(e.rule), nullptr);
  policies::ProposeOptions options;
  options.topk = kTopK;
  policies::Proposal p = policies::propose(f, rule, **m, arch, options);
  EXPECT_FALSE(p.candidates.empty());
  EXPECT_LE(int64_t(p.candidates.size()), kTopK);
  for (const std::string &d : p.dropped) ADD_FAILURE() << "dropped: " << d;
  for (size_t i = 0; i < p.candidates.size(); ++i) {
    const policies::Candidate &c = p.candidates[i];
    EXPECT_EQ(std::string(c.config->rule()), e.rule);
    EXPECT_TRUE(std::isfinite(c.score)) << c.config->str();
    EXPECT_FALSE(c.why.empty());
    if (i == 0) continue;
    const policies::Candidate &prev = p.candidates[i - 1];
    EXPECT_LE(prev.score, c.score) << prev.config->str() << " before " << c.config->str();
    if (prev.score == c.score) {
      EXPECT_LT(prev.config->str(), c.config->str()) << "ties by config text";
    }
  }
  // Deterministic: the same list again.
  policies::Proposal again = policies::propose(f, rule, **m, arch, options);
  EXPECT_EQ(again.candidates.size(), p.candidates.size());
  for (size_t i = 0; i < std::min(again.candidates.size(), p.candidates.size()); ++i) {
    EXPECT_EQ(again.candidates[i].config->str(), p.candidates[i].config->str());
    EXPECT_EQ(again.candidates[i].score, p.candidates[i].score);
  }
  return p;
}

ir::PrimFunc full_func(const Entry &e) {
  return analysis::specialize(load_func(e), e.specialized(e.full));
}

/// Lowering takes the scheduled function (the interpreter does not see
/// lowering's limits, e.g. a cross-thread reduction over a symbolic extent):
/// every kernel prints as CUDA C.
void expect_lowers(const ir::PrimFunc &scheduled) {
  try {
    for (const ir::PrimFunc &kernel : lower::split_kernels(scheduled).kernels)
      EXPECT_FALSE(codegen::codegen_cuda(kernel, {.arch = "sm_90"}).empty());
  } catch (const UserError &err) {
    ADD_FAILURE() << "does not lower: " << err.what();
  }
}

template <typename C>
const C &config_as(const policies::Candidate &c) {
  return dynamic_cast<const C &>(*c.config);
}

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

class MemoryPolicyTest : public ::testing::TestWithParam<Entry> {};

/// The contract at the full size on every preset, and the same configs at
/// the small size give the interpreter's answer.
TEST_P(MemoryPolicyTest, ContractOnEveryPresetAndCorrectAtSmallSize) {
  const Entry &e = GetParam();
  const rules::Rule &rule = rule_of(e);
  ir::PrimFunc full = full_func(e);
  SmallWorkload small = small_workload(e);
  // Every config proposed for any preset, at the full and the small size,
  // applied once to the small function.
  std::map<std::string, std::unique_ptr<rules::Config>> configs;
  for (const Arch &arch : presets()) {
    for (const ir::PrimFunc *f : {&full, &small.func}) {
      policies::Proposal p = propose_checked(e, *f, arch);
      for (policies::Candidate &c : p.candidates) configs.emplace(c.config->str(), std::move(c.config));
    }
  }
  auto m = rule.match(small.func, test_arch());
  ASSERT_TRUE(m) << m.reason();
  for (const auto &[text, config] : configs) {
    SCOPED_TRACE(e.name + " " + text);
    schedule::Schedule sch = rule.apply(small.func, **m, *config);
    EXPECT_TRUE(analysis::analyze(sch.func()).is_scheduled);
    expect_same_results(e, small.func, sch.func(), small.dims);
    expect_lowers(sch.func());
  }
}

/// One shape variable kept symbolic at a time: the proposals (sized at the
/// hint) are only configs the rule accepts for any value, checked at the
/// small value of the variable.
TEST_P(MemoryPolicyTest, SymbolicExtentsGetConfigsValidForAnyValue) {
  const Entry &e = GetParam();
  const rules::Rule &rule = rule_of(e);
  ir::PrimFunc original = load_func(e);
  for (const ir::Var &v : original.shape_vars()) {
    SCOPED_TRACE(e.name + " with '" + v.name() + "' symbolic");
    Sizes others = e.specialized(e.small);
    others.erase(v.name());
    ir::PrimFunc f = analysis::specialize(original, others);
    runtime::DimBindings dims = {{v.name(), e.small.at(v.name())}};
    for (const std::string &s : e.symbolic) dims[s] = e.small.at(s);
    auto m = rule.match(f, test_arch());
    if (!m) continue;  // e.g. general_reduction declines a symbolic row length
    std::map<std::string, std::unique_ptr<rules::Config>> configs;
    for (const Arch &arch : presets()) {
      policies::Proposal p = propose_checked(e, f, arch);
      for (policies::Candidate &c : p.candidates) configs.emplace(c.config->str(), std::move(c.config));
    }
    for (const auto &[text, config] : configs) {
      SCOPED_TRACE(text);
      schedule::Schedule sch = rule.apply(f, **m, *config);
      expect_same_results(e, f, sch.func(), dims);
      expect_lowers(sch.func());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, MemoryPolicyTest, ::testing::ValuesIn(memory_entries()),
                         [](const auto &info) { return info.param.name; });

/// The best config of a large elementwise kernel gives every SM a block.
TEST(MemoryPolicySanity, LargeElementwiseFillsEverySm) {
  for (const std::string name : {"copy_f16", "add_f16"}) {
    Entry e = find_entry(name);
    int64_t elements = 1;
    for (const auto &[var, value] : e.full) elements *= value;
    for (const Arch &arch : presets()) {
      policies::Proposal p = propose_checked(e, full_func(e), arch);
      ASSERT_FALSE(p.candidates.empty());
      const auto &c = config_as<rules::ElementwiseConfig>(p.candidates[0]);
      int64_t grid = ceil_div(elements, c.threads * c.vector * c.per_thread);
      EXPECT_GE(grid, arch.compute.sm_count) << name << " on " << arch.name << ": " << c.str();
      EXPECT_GT(c.vector, 1) << name << " on " << arch.name << ": contiguous data, wide loads";
    }
  }
}

/// A 4096-wide softmax row is reduced by at least 128 threads, its rows in
/// enough blocks to cover every SM.
TEST(MemoryPolicySanity, WideSoftmaxRowGetsManyThreads) {
  Entry e = find_entry("softmax_f16");
  ASSERT_EQ(e.full.at("cols"), 4096);
  for (const Arch &arch : presets()) {
    policies::Proposal p = propose_checked(e, full_func(e), arch);
    ASSERT_FALSE(p.candidates.empty());
    const auto &c = config_as<rules::GeneralReductionConfig>(p.candidates[0]);
    EXPECT_GE(c.threads_x, 128) << arch.name << ": " << c.str() << " (" << p.candidates[0].why << ")";
    EXPECT_GE(ceil_div(e.full.at("rows"), c.rows_per_block), arch.compute.sm_count) << arch.name;
  }
}

/// Reductions read coalesced: a warp's loads cover whole sectors along the
/// contiguous axis (inner: threads per row times the vector; outer: threads
/// along the outputs), and inner ones read 16 bytes per thread per load.
TEST(MemoryPolicySanity, ReductionsReadCoalescedAndFillTheGpu) {
  for (const std::string name : {"reduce_sum_f32", "reduce_max_f16", "reduce_sum_outer_f32"}) {
    Entry e = find_entry(name);
    for (const Arch &arch : presets()) {
      policies::Proposal p = propose_checked(e, full_func(e), arch);
      ASSERT_FALSE(p.candidates.empty());
      const auto &c = config_as<rules::ReductionConfig>(p.candidates[0]);
      // Elements of one 32-byte sector.
      int64_t sector_elems = arch.memory.sector_bytes / (name == "reduce_max_f16" ? 2 : 4);
      bool outer = name == "reduce_sum_outer_f32";
      EXPECT_GE(c.threads_x * c.vector, sector_elems) << name << " on " << arch.name << ": " << c.str();
      EXPECT_EQ(c.vector * (name == "reduce_max_f16" ? 2 : 4), arch.memory.max_vector_bytes) << c.str();
      int64_t outputs = outer ? e.full.at("cols") : e.full.at("rows");
      int64_t grid = ceil_div(outputs, outer ? c.threads_x * c.vector : c.threads_y);
      EXPECT_GE(grid, arch.compute.sm_count) << name << " on " << arch.name << ": " << c.str();
    }
  }
}

/// Gemv: vector loads of whole k chunks (the staged path), a block per SM at least.
TEST(MemoryPolicySanity, GemvStagesVectorLoadsAndFillsTheGpu) {
  for (const std::string name : {"gemv_f16", "gemv_int4"}) {
    Entry e = find_entry(name);
    for (const Arch &arch : presets()) {
      policies::Proposal p = propose_checked(e, full_func(e), arch);
      ASSERT_FALSE(p.candidates.empty());
      const auto &c = config_as<rules::GemvConfig>(p.candidates[0]);
      SCOPED_TRACE(name + " on " + arch.name + ": " + c.str());
      EXPECT_EQ(e.full.at("k") % (c.threads_x * c.reduce_step * c.vector), 0);
      EXPECT_GT(c.vector, 1);
      EXPECT_GE(ceil_div(e.full.at("m"), c.threads_y), arch.compute.sm_count);
    }
  }
}

/// A symbolic reduce extent: the reduction policy splits it over threads as
/// it would the hint (every candidate applies: propose_checked); gemv keeps
/// a symbolic k in one thread.
TEST(MemoryPolicySanity, SymbolicReduceExtents) {
  struct Case {
    const char *workload, *reduce_var;
  };
  for (const Case &k :
       {Case{"reduce_sum_f32", "cols"}, Case{"reduce_sum_outer_f32", "rows"}, Case{"gemv_f16", "k"}}) {
    Entry e = find_entry(k.workload);
    Sizes sizes = e.specialized(e.full);
    sizes.erase(k.reduce_var);
    ir::PrimFunc f = analysis::specialize(load_func(e), sizes);
    for (const Arch &arch : presets()) {
      policies::Proposal p = propose_checked(e, f, arch);
      int64_t most_splitting = 0;
      for (const policies::Candidate &c : p.candidates) {
        if (const auto *r = dynamic_cast<const rules::ReductionConfig *>(c.config.get()))
          most_splitting = std::max(most_splitting, std::string(k.workload) == "reduce_sum_f32" ? r->threads_x : r->threads_y);
        if (const auto *g = dynamic_cast<const rules::GemvConfig *>(c.config.get())) {
          EXPECT_EQ(g->threads_x, 1) << g->str();
          EXPECT_FALSE(g->x_in_shared) << g->str();
        }
      }
      if (std::string(k.workload) != "gemv_f16") EXPECT_GT(most_splitting, 1) << arch.name;
    }
  }
}

/// The long-tail programs (rule: fallback) get candidates: several thread
/// counts when they have parallel loops, only the default for a scan.
TEST(MemoryPolicySanity, LongTailProgramsGetFallbackCandidates) {
  int seen = 0;
  for (const Entry &e : workload_entries()) {
    if (e.rule != "fallback") continue;
    ++seen;
    ir::PrimFunc f = load_func(e);
    for (const Arch &arch : presets()) {
      policies::Proposal p = propose_checked(e, f, arch);
      if (e.name == "prefix_sum") {
        EXPECT_EQ(p.candidates.size(), 1u) << "a scan runs serially whatever the threads";
      } else {
        EXPECT_GT(p.candidates.size(), 1u) << e.name;
      }
    }
  }
  EXPECT_GE(seen, 4);
}

/// A large parallel program through the fallback fills every SM.
TEST(MemoryPolicySanity, LargeProgramThroughTheFallbackFillsEverySm) {
  Entry e = find_entry("add_f16");
  e.rule = "fallback";
  int64_t elements = e.full.at("rows") * e.full.at("cols");
  for (const Arch &arch : presets()) {
    policies::Proposal p = propose_checked(e, full_func(e), arch);
    ASSERT_FALSE(p.candidates.empty());
    const auto &c = config_as<rules::FallbackConfig>(p.candidates[0]);
    EXPECT_GE(ceil_div(elements, c.threads), arch.compute.sm_count) << arch.name << ": " << c.str();
    EXPECT_GE(c.threads, arch.compute.warp_size) << arch.name;
  }
}

/// Proposing is fast (Policy.h: milliseconds for k = 20).
TEST(MemoryPolicySanity, ProposingTakesMilliseconds) {
  for (const Entry &e : memory_entries()) {
    if (e.rule == "fallback") continue;
    ir::PrimFunc f = full_func(e);
    const rules::Rule &rule = rule_of(e);
    auto m = rule.match(f, test_arch());
    ASSERT_TRUE(m);
    auto start = std::chrono::steady_clock::now();
    policies::Proposal p = policies::propose(f, rule, **m, test_arch());
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(ms, 500) << e.name;  // generous: sanitizer and debug builds
    EXPECT_FALSE(p.candidates.empty());
  }
}

}  // namespace
}  // namespace tessera::test
