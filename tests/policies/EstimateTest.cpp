//===- tests/policies/EstimateTest.cpp - policies::estimate ---------------===//
//
// policies::estimate scores given configs at given sizes (what a dynamic-shape
// plan asks at every cell): it must give exactly propose()'s scores for the
// configs propose() returns, and a finite estimate at other sizes for
// configs proposed elsewhere, on every workload of the corpus (its symbolic
// sizes kept symbolic, as a dynamic plan sees them).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>

#include "../rules/RuleTestUtil.h"

#include "tessera/policies/Policy.h"
#include "tessera/rules/Fallback.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

/// The rules whose policy has the score_only hook (the others fall back to
/// their proposal at the sizes asked).
bool scores_any_config(const std::string &rule) { return rule != "conv2d" && rule != "fallback"; }

TEST(PolicyEstimate, AgreesWithProposeAndScoresConfigsProposedElsewhere) {
  for (const Entry &e : workload_entries())
    for (const char *arch_name : {"h100", "a100"}) {
      SCOPED_TRACE(e.name + " on " + arch_name);
      Arch arch = Arch::by_name(arch_name);
      ir::PrimFunc f = load_func(e);
      rules::RuleChoice choice = rules::choose_rule(f, arch);  // what a dynamic plan uses
      ASSERT_NE(choice.rule, nullptr) << choice.why_declined();
      const rules::Rule *rule = choice.rule;
      const rules::Match &m = *choice.match;
      policies::ProposeOptions at_hint;
      policies::Proposal p = policies::propose(f, *rule, m, arch, at_hint);
      std::vector<const rules::Config *> configs;
      for (const policies::Candidate &c : p.candidates) configs.push_back(c.config.get());
      std::vector<double> again = policies::estimate(f, *rule, m, arch, configs, at_hint);
      ASSERT_EQ(again.size(), configs.size());
      for (size_t i = 0; i < configs.size(); ++i)
        EXPECT_DOUBLE_EQ(again[i], p.candidates[i].score) << configs[i]->str();
      // Every symbolic size at 16: the hint's configs still get estimates,
      // and the sizes reach the model (some estimate changes).
      if (!scores_any_config(rule->name())) continue;
      policies::ProposeOptions small;
      for (const auto &[v, size] : e.full) small.sizes[v] = 16;
      std::vector<double> there = policies::estimate(f, *rule, m, arch, configs, small);
      bool changed = false;
      for (size_t i = 0; i < configs.size(); ++i) {
        EXPECT_TRUE(std::isfinite(there[i])) << configs[i]->str();
        changed |= there[i] != again[i];
      }
      bool any_symbolic = false;
      for (const auto &[v, size] : e.full) any_symbolic |= script::print(f).find(v + " = T.int") != std::string::npos;
      if (any_symbolic) EXPECT_TRUE(changed);
    }
}

TEST(PolicyEstimate, AnotherRulesConfigHasNoEstimate) {
  const Entry &e = find_entry("softmax_f16");
  Arch arch = Arch::by_name("h100");
  ir::PrimFunc f = load_func(e);
  const rules::Rule &rule = *rules::find_rule("general_reduction");
  auto m = rule.match(f, arch);
  ASSERT_TRUE(m) << m.reason();
  rules::FallbackConfig other;
  std::vector<double> s = policies::estimate(f, rule, **m, arch, {&other});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(std::isnan(s[0]));
}

}  // namespace
}  // namespace tessera::test
