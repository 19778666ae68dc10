//===- tests/rules/GemvTest.cpp - The gemv rule -------------------------------===//
//
// What the rule matches and why it declines the rest; every schedule shape
// (staged inner reduction through rfactor, masked inner reduction, one
// thread per row, serial and cross-thread outer reductions, low batch,
// epilogues, int4 dequantisation, symbolic sizes) gives the interpreter's
// answer on random inputs, including sizes that divide no tile; configs
// round-trip through JSON and validate against the Arch.
//
//===----------------------------------------------------------------------===//
#include "GemvPrograms.h"
#include "RuleTestUtil.h"
#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/rules/Gemv.h"
#include "tessera/script/Parser.h"
#include "tessera/schedule/Trace.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

using rules::GemvConfig;

const rules::Rule &gemv() { return rules::gemv_rule(); }

GemvConfig cfg(int64_t tx, int64_t ty, int64_t vector, int64_t step, bool unroll, bool x_shared) {
  GemvConfig c;
  c.threads_x = tx, c.threads_y = ty, c.vector = vector, c.reduce_step = step, c.unroll = unroll;
  c.x_in_shared = x_shared;
  return c;
}

/// Schedules `f` with `c` and compares with the interpreter; returns the
/// scheduled text.
std::string check(const Entry &e, const ir::PrimFunc &f, const GemvConfig &c, const runtime::DimBindings &dims = {}) {
  SCOPED_TRACE(e.name + " " + c.str());
  auto m = gemv().match(f, test_arch());
  EXPECT_TRUE(m) << m.reason();
  if (!m) return "";
  EXPECT_NO_THROW(c.validate(test_arch()));
  schedule::Schedule sch = gemv().apply(f, **m, c);
  EXPECT_TRUE(analysis::analyze(sch.func()).is_scheduled);
  schedule::Schedule replay(f);
  replay.replay(sch.trace().to_json());
  EXPECT_TRUE(ir::structural_equal(replay.func(), sch.func()));
  expect_same_results(e, f, sch.func(), dims);
  return script::print(sch.func());
}

Entry custom(const std::string &name) {
  Entry e;
  e.name = name;
  return e;
}

TEST(GemvRule, MatchesTheGemvWorkloads) {
  for (const char *name : {"gemv_f16", "gemv_int4"}) {
    SmallWorkload w = small_workload(find_entry(name));
    auto m = gemv().match(w.func, test_arch());
    ASSERT_TRUE(m) << name << ": " << m.reason();
    EXPECT_NE((*m)->describe().find("inner-reduction gemv 'acc'"), std::string::npos) << (*m)->describe();
  }
  auto m = gemv().match(small_workload(find_entry("gemv_int4")).func, test_arch());
  EXPECT_NE((*m)->describe().find("8 weights per Wq element"), std::string::npos) << (*m)->describe();
  EXPECT_NE((*m)->describe().find("1 prologue block(s) inlined"), std::string::npos) << (*m)->describe();
  // Symbolic sizes match too.
  EXPECT_TRUE(gemv().match(load_func(find_entry("gemv_f16")), test_arch()));
}

TEST(GemvRule, DeclinesOtherWorkloadsWithTheReason) {
  const std::map<std::string, std::string> why = {
      {"add_f16", "no reduction block"},
      {"reduce_sum_f32", "adds a value that is not a product"},
      {"softmax_f16", "reduction blocks; a gemv has one"},
      {"matmul_nn_f16", "is a matmul"},
      {"matmul_nt_f32", "is a matmul"},
      {"bmm_symbolic_m_f16", "bmm"},
      {"conv2d_nhwc_f16", "with expressions"},
      {"prefix_sum", "statements outside blocks"},
  };
  for (const auto &[name, fragment] : why) {
    auto m = gemv().match(small_workload(find_entry(name)).func, test_arch());
    ASSERT_FALSE(m) << name;
    EXPECT_NE(m.reason().find(fragment), std::string::npos) << name << ": " << m.reason();
  }
  auto dot = gemv().match(script::parse_func(kDot), test_arch());
  ASSERT_FALSE(dot);
  EXPECT_NE(dot.reason().find("dot product"), std::string::npos) << dot.reason();
  auto big_batch = gemv().match(script::parse_func(batch_gemv(16, 37, 40)), test_arch());
  ASSERT_FALSE(big_batch);
  EXPECT_NE(big_batch.reason().find("is a matmul"), std::string::npos) << big_batch.reason();
  auto maxprod = gemv().match(script::parse_func(kMaxProduct), test_arch());
  ASSERT_FALSE(maxprod);
  EXPECT_NE(maxprod.reason().find("reduces with max"), std::string::npos) << maxprod.reason();
}

TEST(GemvRule, DefaultAndOtherConfigsOnTheWorkloads) {
  for (const char *name : {"gemv_f16", "gemv_int4"}) {
    Entry e = find_entry(name);
    SmallWorkload w = small_workload(e);
    auto m = gemv().match(w.func, test_arch());
    ASSERT_TRUE(m) << m.reason();
    auto def = gemv().default_config(**m, test_arch());
    check(e, w.func, static_cast<const GemvConfig &>(*def));
    // Non-dividing tiles (67 x 130, 37 x 300): masked cross-thread reduction.
    check(e, w.func, cfg(32, 4, 8, 2, true, false));
    check(e, w.func, cfg(8, 2, 16, 1, false, true));
    // One thread per row, weights staged in registers.
    check(e, w.func, cfg(1, 16, 8, 2, true, true));
  }
}

TEST(GemvRule, StagedInnerReductionWhenTheChunksDivideK) {
  // k = 256 (f16) and 512 (int4): the rfactor path with vector loads.
  Entry f16 = find_entry("gemv_f16");
  ir::PrimFunc f = analysis::specialize(load_func(f16), {{"m", 37}, {"k", 256}});
  std::string text = check(f16, f, cfg(8, 4, 8, 2, true, true));
  EXPECT_NE(text.find("acc_rf"), std::string::npos) << text;
  EXPECT_NE(text.find("T.vectorized(8)"), std::string::npos) << text;
  check(f16, f, cfg(16, 2, 4, 4, false, false));
  check(f16, f, cfg(32, 1, 8, 1, true, false));
  Entry int4 = find_entry("gemv_int4");
  ir::PrimFunc g = analysis::specialize(load_func(int4), {{"m", 13}, {"k", 512}});
  text = check(int4, g, cfg(4, 4, 32, 2, true, true));
  // The packed words come in with 16-byte vector loads (4 words = 32 weights).
  EXPECT_NE(text.find("Wq_local"), std::string::npos) << text;
  EXPECT_NE(text.find("T.vectorized(4)"), std::string::npos) << text;
  check(int4, g, cfg(8, 2, 8, 1, true, false));
}

TEST(GemvRule, LowBatch) {
  Entry e = custom("gemv_batch");
  for (auto [m, k] : {std::pair{37, 40}, std::pair{19, 64}}) {
    ir::PrimFunc f = script::parse_func(batch_gemv(3, m, k));
    auto match = gemv().match(f, test_arch());
    ASSERT_TRUE(match) << match.reason();
    EXPECT_NE((*match)->describe().find("batch 3"), std::string::npos) << (*match)->describe();
    check(e, f, static_cast<const GemvConfig &>(*gemv().default_config(**match, test_arch())));
    check(e, f, cfg(8, 2, 4, 2, true, true));   // 40: masked; 64: staged (rfactor) with every b per load
    check(e, f, cfg(1, 8, 4, 1, true, false));  // one thread per row
  }
}

TEST(GemvRule, UnitBatchAxesAsRelaxPrintsThem) {
  // x (1, 1, k) and the output (1, 1, n): the unit axes have no role; they
  // are fused into the row loop, whatever the layout and config.
  for (bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "W stored (k, n)" : "W stored (n, k)");
    Entry e = custom("decode_gemv");
    ir::PrimFunc f = script::parse_func(decode_gemv(40, 96, transposed));
    auto m = gemv().match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    EXPECT_NE((*m)->describe().find(transposed ? "outer-reduction" : "inner-reduction"), std::string::npos)
        << (*m)->describe();
    EXPECT_NE((*m)->describe().find("rows 40, k 96)"), std::string::npos) << (*m)->describe();
    std::string text = check(e, f, static_cast<const GemvConfig &>(*gemv().default_config(**m, test_arch())));
    EXPECT_EQ(text.find("for i0 in"), std::string::npos) << "the unit loops are fused away:\n" << text;
    check(e, f, transposed ? cfg(16, 1, 4, 3, true, true) : cfg(8, 4, 4, 1, true, false));
    check(e, f, transposed ? cfg(8, 4, 2, 2, false, false) : cfg(1, 8, 4, 1, true, false));
  }
}

TEST(GemvRule, OuterReduction) {
  Entry e = custom("gemv_outer");
  ir::PrimFunc f = script::parse_func(outer_gemv(45, 37));
  auto m = gemv().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  EXPECT_NE((*m)->describe().find("outer-reduction"), std::string::npos) << (*m)->describe();
  check(e, f, static_cast<const GemvConfig &>(*gemv().default_config(**m, test_arch())));
  check(e, f, cfg(16, 1, 4, 3, true, true));   // serial k per thread, 4 rows each (vector loads)
  check(e, f, cfg(8, 4, 2, 2, false, false));  // k over threadIdx.y too
  ir::PrimFunc b = script::parse_func(outer_batch_gemv(2, 21, 19));
  check(custom("gemv_outer_batch"), b, cfg(8, 1, 2, 2, true, false));
  check(custom("gemv_outer_batch"), b, cfg(8, 4, 1, 1, true, true));
}

TEST(GemvRule, EpilogueWithBias) {
  Entry e = custom("gemv_bias");
  ir::PrimFunc f = script::parse_func(bias_gemv(29, 72));
  auto m = gemv().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  EXPECT_NE((*m)->describe().find("2 epilogue block(s)"), std::string::npos) << (*m)->describe();
  check(e, f, cfg(8, 4, 4, 1, true, false));  // masked (72 % 64 != 0)
  check(e, f, cfg(4, 2, 2, 3, true, true));   // staged (72 = 3 * 24)
}

TEST(GemvRule, SymbolicSizes) {
  Entry e = find_entry("gemv_f16");
  ir::PrimFunc f = load_func(e);
  auto m = gemv().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  auto def = gemv().default_config(**m, test_arch());
  EXPECT_FALSE(static_cast<const GemvConfig &>(*def).x_in_shared);
  check(e, f, static_cast<const GemvConfig &>(*def), {{"m", 21}, {"k", 50}});
  check(e, f, cfg(1, 4, 8, 1, true, false), {{"m", 21}, {"k", 50}});
  // Symbolic rows, constant k: the staged path.
  ir::PrimFunc g = analysis::specialize(f, {{"k", 256}});
  auto mg = gemv().match(g, test_arch());
  ASSERT_TRUE(mg) << mg.reason();
  std::string text = check(e, g, static_cast<const GemvConfig &>(*gemv().default_config(**mg, test_arch())),
                           {{"m", 21}});
  EXPECT_NE(text.find("acc_rf"), std::string::npos) << text;
  check(e, g, cfg(8, 4, 8, 2, true, true), {{"m", 21}});
  // x cannot be staged in shared memory of a symbolic size.
  try {
    gemv().apply(f, **m, cfg(32, 4, 8, 1, true, true));
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const rules::ConfigError &err) {
    EXPECT_NE(std::string(err.what()).find("x_in_shared needs a constant k"), std::string::npos) << err.what();
  }
}

TEST(GemvRule, SharedMemoryBeyondTheArchIsAConfigError) {
  Entry e = find_entry("gemv_f16");
  ir::PrimFunc f = analysis::specialize(load_func(e), {{"m", 64}, {"k", 200000}});
  auto m = gemv().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  EXPECT_FALSE(static_cast<const GemvConfig &>(*gemv().default_config(**m, test_arch())).x_in_shared);
  try {
    gemv().apply(f, **m, cfg(32, 4, 8, 1, true, true));
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const rules::ConfigError &err) {
    EXPECT_NE(std::string(err.what()).find("400000 bytes of shared memory"), std::string::npos) << err.what();
  }
}

TEST(GemvConfig, JsonRoundTripAndErrors) {
  GemvConfig c = cfg(16, 8, 4, 2, false, true);
  rules::Json j = c.to_json();
  EXPECT_EQ(j.dump(), R"({"rule":"gemv","threads_x":16,"threads_y":8,"vector":4,"reduce_step":2,"unroll":false,)"
                      R"("x_in_shared":true})");
  EXPECT_EQ(gemv().config_from_json(j)->to_json(), j);
  auto error = [&](const rules::Json &bad) -> std::string {
    try {
      gemv().config_from_json(bad);
    } catch (const rules::ConfigError &e) {
      return e.what();
    }
    return "";
  };
  rules::Json missing = j;
  missing.erase("reduce_step");
  EXPECT_NE(error(missing).find("missing the field 'reduce_step'"), std::string::npos) << error(missing);
  rules::Json unknown = j;
  unknown["stages"] = 2;
  EXPECT_NE(error(unknown).find("unknown field 'stages'"), std::string::npos) << error(unknown);
  rules::Json mistyped = j;
  mistyped["x_in_shared"] = 1;
  EXPECT_NE(error(mistyped).find("'x_in_shared': expected true or false"), std::string::npos) << error(mistyped);
  rules::Json other = j;
  other["rule"] = "matmul";
  EXPECT_NE(error(other).find("config is for rule 'matmul'"), std::string::npos) << error(other);
}

TEST(GemvConfig, ValidateNamesTheField) {
  auto error = [](const GemvConfig &c) -> std::string {
    try {
      c.validate(test_arch());
    } catch (const rules::ConfigError &e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error(cfg(32, 4, 8, 2, true, true)), "");
  EXPECT_NE(error(cfg(0, 4, 8, 1, true, false)).find("threads_x = 0"), std::string::npos);
  EXPECT_NE(error(cfg(64, 32, 8, 1, true, false)).find("threads_x * threads_y = 2048 threads, more than the 1024"),
            std::string::npos)
      << error(cfg(64, 32, 8, 1, true, false));
  EXPECT_NE(error(cfg(32, 4, 6, 1, true, false)).find("vector = 6 is not a power of two"), std::string::npos);
  EXPECT_NE(error(cfg(32, 4, 8, 0, true, false)).find("reduce_step = 0"), std::string::npos);
  EXPECT_NE(error(cfg(32, 4, 64, 4, true, false)).find("stages reduce_step * vector = 256 elements"),
            std::string::npos)
      << error(cfg(32, 4, 64, 4, true, false));
  // A config of another rule.
  SmallWorkload w = small_workload(find_entry("gemv_f16"));
  auto m = gemv().match(w.func, test_arch());
  ASSERT_TRUE(m);
  EXPECT_THROW(gemv().apply(w.func, **m, rules::ElementwiseConfig()), rules::ConfigError);
}

}  // namespace
}  // namespace tessera::test

namespace tessera::test {
namespace {

/// Drops the last iteration of the first serial loop with a constant extent
/// above 1 that encloses a reduction block: in a gemv schedule, one K tile.
class SkipLastTile : public ir::IRMutator {
 public:
  bool done = false;
  using ir::IRMutator::mutate;
  ir::Stmt visit_(const ir::For *op, const ir::Stmt &self) override {
    auto extent = ir::as_const_int(op->extent);
    if (!done && op->for_kind == ir::ForKind::Serial && extent && *extent > 1 && encloses_reduction(op->body)) {
      done = true;
      return ir::For::make(op->loop_var, op->min, ir::make_int(op->extent.dtype(), *extent - 1), op->for_kind, op->body,
                           op->thread_tag, op->annotations);
    }
    return ir::IRMutator::visit_(op, self);
  }

 private:
  static bool encloses_reduction(const ir::Stmt &s) {
    struct Finder : ir::IRVisitor {
      bool found = false;
      void visit_(const ir::Block *b) override {
        for (const ir::IterVar &iv : b->iter_vars) found |= iv.kind == ir::IterKind::Reduce;
        ir::IRVisitor::visit_(b);
      }
    } f;
    f.visit(s);
    return f.found;
  }
};

/// Issue 12's acceptance case: a float16 gemv accumulating in float16 over
/// K = 4096 (tests/corpus/gemv_fp16_acc16.py) passes with the gemv rule's
/// schedule, which sums in another order, and fails when one K tile of the
/// schedule is skipped.
TEST(GemvRule, Float16AccumulationPassesAndASkippedTileFails) {
  ir::PrimFunc f = script::parse_file(std::string(TESSERA_TEST_DATA_DIR) + "/corpus/gemv_fp16_acc16.py").funcs.at(0);
  auto m = gemv().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  ir::PrimFunc scheduled = gemv().apply(f, **m, *gemv().default_config(**m, test_arch())).func();
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 3);
  runtime::Reference ref = runtime::compute_reference(f, args);

  std::vector<runtime::NDArray> got = args;
  runtime::interpret(scheduled, got);
  std::vector<runtime::OutputCheck> ok = runtime::check_outputs(f, got, ref);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_TRUE(ok[0].ok) << ok[0].str();

  SkipLastTile bug;
  ir::PrimFunc broken = scheduled.with_body(bug.mutate(scheduled.body()));
  ASSERT_TRUE(bug.done) << "no serial K-tile loop in\n" << script::print(scheduled);
  got = args;
  runtime::interpret(broken, got);
  std::vector<runtime::OutputCheck> wrong = runtime::check_outputs(f, got, ref);
  EXPECT_FALSE(wrong[0].ok) << wrong[0].str();
  EXPECT_GT(wrong[0].failures, 16) << wrong[0].str();  // of 256 rows
}

}  // namespace
}  // namespace tessera::test
