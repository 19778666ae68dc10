//===- tests/rules/RulesTest.cpp - Every workload gets a correct schedule ---===//
//
// For every workload of the corpus at its small size (shapes that divide no
// tile): apply_default_schedule picks a rule (the expected one where that rule
// exists, else one before the fallback or the fallback), the result is
// scheduled (thread-bound), and the interpreter gives the unscheduled
// program's answer on the same inputs. The fallback never refuses.
//
//===----------------------------------------------------------------------===//
#include "../support/SameBits.h"
#include "RuleTestUtil.h"
#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/rules/Fallback.h"
#include "tessera/schedule/Trace.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

class WorkloadRuleTest : public ::testing::TestWithParam<Entry> {};

TEST_P(WorkloadRuleTest, DefaultScheduleIsScheduledAndCorrect) {
  const Entry &e = GetParam();
  SmallWorkload w = small_workload(e);
  rules::DefaultSchedule s = rules::apply_default_schedule(w.func, test_arch());
  ASSERT_FALSE(s.rule.empty());
  std::string declined;
  for (const auto &[rule, why] : s.declined) declined += "\n  " + rule + ": " + why;
  if (rules::find_rule(e.rule)) {
    EXPECT_EQ(s.rule, e.rule) << declined;
  }
  EXPECT_TRUE(analysis::analyze(s.func).is_scheduled) << script::print(s.func);
  EXPECT_EQ(s.config["rule"], s.rule);
  if (s.rule == "matmul_tensor_core") {
    // Built from the match, not by primitives (an empty trace): the rule
    // applied again at the recorded config gives the same function.
    EXPECT_TRUE(s.trace.empty() || s.trace.size() == 0) << s.trace.dump();
    const rules::Rule *r = rules::find_rule(s.rule);
    auto m = r->match(w.func, test_arch());
    ASSERT_TRUE(m) << m.reason();
    EXPECT_TRUE(ir::structural_equal(r->apply(w.func, **m, *r->config_from_json(s.config)).func(), s.func));
  } else {
    // The trace replays to the same function.
    schedule::Schedule replay(w.func);
    replay.replay(s.trace.dump());
    EXPECT_TRUE(ir::structural_equal(replay.func(), s.func));
  }
  expect_same_results(e, w.func, s.func, w.dims);
}

INSTANTIATE_TEST_SUITE_P(Corpus, WorkloadRuleTest, ::testing::ValuesIn(workload_entries()),
                         [](const auto &info) { return info.param.name; });

/// The elementwise rule at configs other than the default, including ones
/// whose block does not divide the size.
TEST(ElementwiseRule, OtherConfigsGiveTheSameAnswer) {
  const rules::Rule &rule = rules::elementwise_rule();
  for (const Entry &e : workload_entries()) {
    if (e.rule != "elementwise") continue;
    SmallWorkload w = small_workload(e);
    auto m = rule.match(w.func, test_arch());
    ASSERT_TRUE(m) << e.name << ": " << m.reason();
    for (auto [threads, vector, per_thread, unroll] :
         {std::tuple{128, 2, 3, true}, std::tuple{96, 1, 1, false}, std::tuple{32, 4, 2, false}}) {
      rules::ElementwiseConfig c;
      c.threads = threads, c.vector = vector, c.per_thread = per_thread, c.unroll = unroll;
      c.validate(test_arch());
      schedule::Schedule sch = rule.apply(w.func, **m, c);
      SCOPED_TRACE(e.name + " " + c.str());
      expect_same_results(e, w.func, sch.func(), w.dims);
    }
  }
}

/// The fallback alone, at thread counts other than the default, on every
/// workload (it must give any valid program a correct schedule).
TEST(FallbackRule, EveryWorkloadAtOtherThreadCounts) {
  const rules::Rule &rule = rules::fallback_rule();
  for (const Entry &e : workload_entries()) {
    SmallWorkload w = small_workload(e);
    auto m = rule.match(w.func, test_arch());
    ASSERT_TRUE(m) << e.name << ": " << m.reason();
    for (int64_t threads : {1, 33}) {
      rules::FallbackConfig c;
      c.threads = threads;
      c.validate(test_arch());
      SCOPED_TRACE(e.name + " " + c.str());
      schedule::Schedule sch = rule.apply(w.func, **m, c);
      expect_same_results(e, w.func, sch.func(), w.dims);
    }
  }
}

TEST(ApplyDefaultSchedule, SaysWhyEachEarlierRuleDeclined) {
  for (const Entry &e : workload_entries()) {
    if (e.name != "prefix_sum") continue;
    rules::DefaultSchedule s = rules::apply_default_schedule(load_func(e), test_arch());
    EXPECT_EQ(s.rule, "fallback");
    ASSERT_FALSE(s.declined.empty());
    auto it = std::find_if(s.declined.begin(), s.declined.end(), [](const auto &d) { return d.first == "elementwise"; });
    ASSERT_NE(it, s.declined.end());
    EXPECT_NE(it->second.find("statements outside blocks"), std::string::npos) << it->second;
  }
}

TEST(ApplyDefaultSchedule, LeavesScheduledFunctionsAlone) {
  for (const Entry &e : workload_entries()) {
    if (e.name != "copy_f16") continue;
    SmallWorkload w = small_workload(e);
    rules::DefaultSchedule once = rules::apply_default_schedule(w.func, test_arch());
    rules::DefaultSchedule twice = rules::apply_default_schedule(once.func, test_arch());
    EXPECT_TRUE(twice.func.same_as(once.func));
    EXPECT_EQ(twice.rule, "");
  }
}

// TVM prints a function whose only block is named "root" (the root block's
// own name): that block is renamed like a repeated name, the rules schedule
// it, and the result keeps the function's numbers (it was a segfault).
TEST(ApplyDefaultSchedule, AComputeBlockNamedRoot) {
  for (const char *text : {R"(
# from tvm.script import tir as T

@T.prim_func
def relu(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")) -> None:
    T.func_attr({"tir.noalias": True})
    for i in range(1024):
        with T.block("root"):
            vi = T.axis.spatial(1024, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = T.max(A[vi], T.float32(0))
)",
                           R"(
# from tvm.script import tir as T

@T.prim_func
def relu(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")) -> None:
    T.func_attr({"tir.noalias": True})
    with T.block("root"):
        for i in range(1024):
            with T.block("root"):
                vi = T.axis.spatial(1024, i)
                B[vi] = T.max(A[vi], T.float32(0))
)"}) {
    ir::PrimFunc f = script::parse_func(text);
    rules::DefaultSchedule s = rules::apply_default_schedule(f, test_arch());
    EXPECT_EQ(s.rule, "elementwise");
    std::vector<runtime::NDArray> want = runtime::make_random_args(f, {}, 3), got = want;
    runtime::Reference ref = runtime::compute_reference(f, want);
    runtime::interpret(s.func, got);
    expect_outputs_match("relu", f, got, ref);
    schedule::Schedule sch(f);
    try {
      sch.get_block("root");
      FAIL() << "'root' names two blocks";
    } catch (const schedule::ScheduleError &e) {
      EXPECT_NE(std::string(e.what()).find("several blocks are named 'root'; the schedule calls them 'root', 'root_1'"),
                std::string::npos)
          << e.what();
    }
    EXPECT_NO_THROW(sch.get_loops(sch.get_block("root_1")));
  }
}

TEST(ApplyDefaultSchedule, ScopedIntermediatesTheKernelsShareBecomeGlobal) {
  // A cache_read into "shared" in an unscheduled program (as TVM's
  // cache_read tests leave it): the rule's kernels write it in one kernel and
  // read it in another, which shared memory does not survive.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    B = T.alloc_buffer((64, 64))
    B_shared = T.alloc_buffer((64, 32, 2), scope="shared")
    for i, j in T.grid(64, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(64, 64):
        with T.block("B_shared"):
            vi, vj = T.axis.remap("SS", [i, j])
            B_shared[vj, vi // 2, vi % 2] = B[vi, vj]
    for i, j in T.grid(64, 64):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B_shared[vj, vi // 2, vi % 2] + T.float32(1)
)");
  rules::DefaultSchedule s = rules::apply_default_schedule(f, test_arch());
  for (const ir::Buffer &b : s.func.root_block().allocs)
    EXPECT_EQ(b.scope(), "global") << b.name() << "\n" << script::print(s.func);
  expect_same_bits(f, s.func);
  // The trace holds the change: it replays to the same function.
  schedule::Schedule replay(f);
  replay.replay(s.trace.dump());
  EXPECT_TRUE(ir::structural_equal(replay.func(), s.func));
}

TEST(ApplyDefaultSchedule, ATriangularNestKeepsItsInnerLoops) {
  // j runs to i: the elementwise rule, which fuses every loop, declines; the
  // fallback spreads i over threads and leaves j and k inside.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((16, 16, 8), "float32"), B: T.Buffer((16, 16, 8), "float32")) -> None:
    for i in range(16):
        for j, k in T.grid(i, 8):
            with T.block("B"):
                vi = T.axis.spatial(16, i)
                vj = T.axis.spatial(i, j)
                vk = T.axis.spatial(8, k)
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
)");
  rules::DefaultSchedule s = rules::apply_default_schedule(f, test_arch());
  EXPECT_EQ(s.rule, "fallback");
  bool said = false;
  for (const auto &[rule, why] : s.declined)
    said = said || (rule == "elementwise" && why.find("the nest is not rectangular") != std::string::npos);
  EXPECT_TRUE(said);
  expect_same_bits(f, s.func);
}

TEST(Fallback, PrefixSumRunsAsOneSerialThread) {
  for (const Entry &e : workload_entries()) {
    if (e.name != "prefix_sum") continue;
    rules::DefaultSchedule s = rules::apply_default_schedule(load_func(e), test_arch());
    std::string text = script::print(s.func);
    EXPECT_NE(text.find("T.thread_binding(1, thread=\"blockIdx.x\")"), std::string::npos) << text;
    EXPECT_NE(text.find("T.thread_binding(1, thread=\"threadIdx.x\")"), std::string::npos) << text;
  }
}

TEST(Fallback, ParallelOuterLoopsAreSpreadOverThreads) {
  for (const Entry &e : workload_entries()) {
    if (e.name != "if_nest") continue;
    rules::DefaultSchedule s = rules::apply_default_schedule(load_func(e), test_arch());
    std::string text = script::print(s.func);
    EXPECT_NE(text.find("T.thread_binding(256, thread=\"threadIdx.x\")"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace tessera::test
