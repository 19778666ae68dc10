//===- tests/tune/ApplyBestTest.cpp - Scheduling by the stored best config -===//
#include <gtest/gtest.h>

#include "IRTestUtil.h"
#include "TuneTestUtil.h"

#include "tessera/ir/StructuralEqual.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/tune/ApplyBest.h"

namespace tessera::test {
namespace {

using tuning::Database;
using tuning::TuningKey;

/// `func` scheduled by the elementwise rule with `threads` threads, directly.
ir::PrimFunc scheduled_directly(const ir::PrimFunc &func, const Arch &arch, int64_t threads) {
  const rules::Rule &rule = rules::elementwise_rule();
  auto match = rule.match(func, arch);
  EXPECT_TRUE(match) << match.reason();
  rules::ElementwiseConfig config;
  config.threads = threads;
  return rule.apply(func, **match, config).func();
}

class ApplyBest : public ::testing::Test {
 protected:
  ApplyBest() : db_(Database::open(dir_.file("db.jsonl"))) {}

  ScratchDir dir_;
  Database db_;
  ir::PrimFunc func_ = add_func({.rows = 8, .cols = 64});
  Arch h100_ = Arch::by_name("h100"), a100_ = Arch::by_name("a100");
};

TEST_F(ApplyBest, ReappliesTheFastestStoredConfig) {
  TuningKey key = TuningKey::of(func_, h100_);
  db_.append({ok_record(key, 256, 6.0), ok_record(key, 64, 2.0), ok_record(key, 128, 4.0)});

  std::optional<tuning::AppliedRecord> best = tuning::apply_best(func_, h100_, Database::open(db_.path()));
  ASSERT_TRUE(best);
  EXPECT_EQ(best->record.config["threads"], 64);
  EXPECT_EQ(best->record.time_us, 2.0);
  EXPECT_TRUE(
      structurally_equal_with_diff(best->func, scheduled_directly(func_, h100_, 64), "apply_best", "direct"));
  // Not the default schedule (256 threads) by accident.
  EXPECT_FALSE(ir::structural_equal(best->func, scheduled_directly(func_, h100_, 256)));
}

TEST_F(ApplyBest, NeverUsesAnotherGpusOrShapesRecord) {
  db_.append({ok_record(TuningKey::of(func_, h100_), 64, 2.0)});
  EXPECT_FALSE(tuning::apply_best(func_, a100_, db_));
  EXPECT_FALSE(tuning::apply_best(add_func({.rows = 8, .cols = 128}), h100_, db_));
  EXPECT_FALSE(tuning::apply_best(add_func({.dtype = "float16", .rows = 8, .cols = 64}), h100_, db_));
  tuning::Toolchain older = tuning::Toolchain::current();
  older.nvrtc = "12.0";
  EXPECT_FALSE(tuning::apply_best(func_, h100_, db_, older));

  // The a100's own record, faster than the h100's, is used only on the a100.
  db_.append({ok_record(TuningKey::of(func_, a100_), 512, 1.0)});
  EXPECT_EQ(tuning::apply_best(func_, a100_, db_)->record.config["threads"], 512);
  EXPECT_EQ(tuning::apply_best(func_, h100_, db_)->record.config["threads"], 64);
}

TEST_F(ApplyBest, FailedRecordsAreNeverApplied) {
  tuning::Record failed = ok_record(TuningKey::of(func_, h100_), 64, 1.0);
  failed.status = tuning::RecordStatus::LaunchError;
  failed.time_us.reset();
  db_.append({failed});
  EXPECT_FALSE(tuning::apply_best(func_, h100_, db_));
}

TEST_F(ApplyBest, ARecordThatNoLongerAppliesIsAnErrorNamingIt) {
  TuningKey key = TuningKey::of(func_, h100_);
  tuning::Record unknown = ok_record(key, 64, 1.0);
  unknown.rule = "nonesuch";
  tuning::Record bad_config = ok_record(key, 64, 1.0);
  bad_config.config["threads"] = 4096;
  std::vector<std::pair<tuning::Record, std::string>> cases = {{unknown, "tessera has no rule of that name"},
                                                             {bad_config, "threads = 4096"}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto &[record, why] = cases[i];
    Database db = Database::open(dir_.file("case" + std::to_string(i) + ".jsonl"));
    db.append({record});
    try {
      tuning::apply_best(func_, h100_, db);
      FAIL() << "applied " << record.rule;
    } catch (const tuning::DatabaseError &e) {
      std::string what = e.what();
      EXPECT_NE(what.find("the best record of " + key.str() + " (rule '" + record.rule + "'"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find(why), std::string::npos) << what;
    }
  }
}

}  // namespace
}  // namespace tessera::test
