//===- tests/rules/ConfigTest.cpp - Configs: JSON, validation, errors -------===//
#include "RuleTestUtil.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/rules/Fallback.h"

namespace tessera::test {
namespace {

std::string config_error(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const rules::ConfigError &e) {
    return e.what();
  }
  return "";
}

TEST(RuleConfig, EveryRulesDefaultRoundTripsThroughJson) {
  for (const rules::Rule *rule : rules::all_rules()) {
    for (const Entry &e : workload_entries()) {
      SmallWorkload w = small_workload(e);
      auto m = rule->match(w.func, test_arch());
      if (!m) continue;
      std::unique_ptr<rules::Config> c = rule->default_config(**m, test_arch());
      EXPECT_NO_THROW(c->validate(test_arch())) << rule->name() << " " << e.name;
      EXPECT_EQ(c->rule(), std::string(rule->name()));
      std::unique_ptr<rules::Config> back = rule->config_from_json(c->to_json());
      EXPECT_EQ(back->to_json(), c->to_json()) << rule->name();
    }
  }
}

TEST(RuleConfig, MalformedJsonNamesTheField) {
  const rules::Rule &r = rules::elementwise_rule();
  rules::Json good = rules::ElementwiseConfig().to_json();
  auto with = [&](const std::string &key, const rules::Json &value) {
    rules::Json j = good;
    j[key] = value;
    return j;
  };
  EXPECT_EQ(config_error([&] { r.config_from_json(with("threads", "256")); }),
            "elementwise config: field 'threads': expected an integer, got \"256\"");
  EXPECT_EQ(config_error([&] { r.config_from_json(with("thread", 256)); }),
            "elementwise config: unknown field 'thread' (fields: threads, vector, per_thread, unroll, "
            "transpose_tile, tile_rows, transpose_pad, staged_bytes)");
  rules::Json missing = good;
  missing.erase("vector");
  EXPECT_EQ(config_error([&] { r.config_from_json(missing); }), "elementwise config: missing the field 'vector'");
  EXPECT_EQ(config_error([&] { r.config_from_json(rules::FallbackConfig().to_json()); }),
            "config is for rule 'fallback', not 'elementwise'");
  EXPECT_EQ(config_error([&] { r.config_from_json(rules::Json::array()); }),
            "elementwise config: expected a JSON object, got []");
}

TEST(RuleConfig, ValidateRejectsWhatTheArchCannotRun) {
  rules::ElementwiseConfig c;
  c.threads = 2048;
  EXPECT_NE(config_error([&] { c.validate(test_arch()); }).find("threads = 2048 is outside [1, 1024]"),
            std::string::npos);
  c.threads = 256;
  c.vector = 3;
  EXPECT_NE(config_error([&] { c.validate(test_arch()); }).find("vector = 3 is not a power of two"),
            std::string::npos);
  rules::FallbackConfig f;
  f.threads = 0;
  EXPECT_NE(config_error([&] { f.validate(test_arch()); }).find("fallback config: threads = 0"), std::string::npos);
}

TEST(RuleConfig, ApplyWithAnotherRulesConfigIsAConfigError) {
  for (const Entry &e : workload_entries()) {
    if (e.name != "copy_f16") continue;
    SmallWorkload w = small_workload(e);
    auto m = rules::elementwise_rule().match(w.func, test_arch());
    ASSERT_TRUE(m);
    EXPECT_NE(config_error([&] { rules::elementwise_rule().apply(w.func, **m, rules::FallbackConfig()); }), "");
  }
}

}  // namespace
}  // namespace tessera::test
