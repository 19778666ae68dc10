//===- tests/tune/FastTuneTest.cpp - fast_tune up to the cubin --------------===//
//
// Without a device fast_tune must still match, propose, schedule, generate and
// compile every candidate, pick the policy's best-ranked candidate that
// compiled, and say that nothing was measured. (On a device the gpu test
// FastTuneGpuTest checks verification and timing.)
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdlib>

#include "tessera/script/Parser.h"

#include "../workloads/Workloads.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/runtime/Sass.h"
#include "tessera/tune/FastTune.h"
#include "tessera/tune/Reference.h"
#include "Measure.h"  // lib/tune: the private sizing helpers

namespace tessera::tuning {
namespace {


/// The interpreter's outputs of `g` on f's inputs are within the bounds of
/// f's float64 reference.
void expect_same_answer(const ir::PrimFunc &f, const ir::PrimFunc &g) {
  auto got = runtime::make_random_args(f, {}, 7);
  runtime::Reference want = runtime::compute_reference(f, got);
  runtime::interpret(g, got);
  for (const runtime::OutputCheck &c : runtime::check_outputs(f, got, want)) EXPECT_TRUE(c.ok) << c.str();
}

TEST(FastTune, CompilesEveryCandidateAndPicksThePolicysFirstWithoutADevice) {
  ir::PrimFunc f = test::workload_at_size("matmul_nn_f32");
  TuneOptions o{.topk = 6, .measure = false};
  std::vector<std::string> phases;
  o.progress = [&](const std::string &phase, int done, int total) {
    EXPECT_LE(done, total);
    phases.push_back(phase);
  };
  TuneResult r = fast_tune(f, Arch::by_name("h100"), o);
  EXPECT_EQ(r.rule, "matmul");
  EXPECT_FALSE(r.measured);
  EXPECT_EQ(r.why_unmeasured, "measuring was turned off");
  ASSERT_GE(r.candidates.size(), 2u);
  EXPECT_LE(r.candidates.size(), 7u);  // top-6 and the default unless proposed
  ASSERT_GE(r.default_index, 0);
  EXPECT_NE(r.candidates[r.default_index].origin.find("default"), std::string::npos);
  // The winner is the first candidate (in the policy's order) that compiled.
  for (int i = 0; i < r.best; ++i) EXPECT_NE(r.candidates[i].status, CandidateStatus::Ok) << i;
  const CandidateReport &w = r.winner();
  EXPECT_EQ(w.status, CandidateStatus::Ok);
  EXPECT_FALSE(w.measured);
  ASSERT_EQ(w.cubins.size(), 1u);
  EXPECT_EQ(std::string(w.cubins[0].begin(), w.cubins[0].begin() + 4), "\x7f" "ELF");
  EXPECT_NE(w.sources[0].find("__global__"), std::string::npos);
  EXPECT_GT(w.registers, 0);
  EXPECT_GT(r.phases.nvrtc_ms, 0);
  EXPECT_GT(r.phases.compile_wall_ms, 0);
  EXPECT_GE(r.phases.total_ms, r.phases.compile_wall_ms);
  EXPECT_FALSE(phases.empty());
  EXPECT_EQ(phases.back(), "compile");
  // Every candidate that compiled is a correct schedule of the function.
  for (const CandidateReport &c : r.candidates)
    if (c.status == CandidateStatus::Ok) expect_same_answer(f, c.func);
  EXPECT_TRUE(ir::structural_equal(r.best_func, w.func));
}

// A bug in tessera while scheduling one candidate (planted by the test hook)
// fails that candidate alone, as internal_error with the message, counted
// apart from the configs the rule refused; the tune goes on.
TEST(FastTune, AnInternalErrorFailsOneCandidateAndIsCountedApart) {
  ir::PrimFunc f = test::workload_at_size("matmul_nn_f32");
  setenv("TESSERA_PLANT_INTERNAL_ERROR", "1", 1);
  TuneResult r;
  try {
    r = fast_tune(f, Arch::by_name("h100"), TuneOptions{.topk = 4, .measure = false});
  } catch (...) {
    unsetenv("TESSERA_PLANT_INTERNAL_ERROR");
    throw;
  }
  unsetenv("TESSERA_PLANT_INTERNAL_ERROR");
  ASSERT_GE(r.candidates.size(), 3u);
  EXPECT_EQ(r.candidates[1].status, CandidateStatus::InternalError);
  EXPECT_STREQ(to_string(r.candidates[1].status), "internal_error");
  EXPECT_NE(r.candidates[1].error.find("internal error (a bug in tessera): planted by TESSERA_PLANT_INTERNAL_ERROR=1"),
            std::string::npos)
      << r.candidates[1].error;
  int internal = 0;
  for (const CandidateReport &c : r.candidates) internal += c.status == CandidateStatus::InternalError;
  EXPECT_EQ(internal, 1);
  EXPECT_EQ(r.winner().status, CandidateStatus::Ok);
}

TEST(FastTune, ForcedRuleAndAlreadyScheduledFunctions) {
  ir::PrimFunc f = test::workload_at_size("reduce_sum_f32");
  TuneResult r = fast_tune(f, Arch::by_name("a100"), {.topk = 3, .rule = "fallback", .measure = false});
  EXPECT_EQ(r.rule, "fallback");
  expect_same_answer(f, r.best_func);
  // A scheduled function is compiled as it is: one candidate, no rule.
  TuneResult again = fast_tune(r.best_func, Arch::by_name("a100"), {.measure = false});
  EXPECT_EQ(again.rule, "");
  ASSERT_EQ(again.candidates.size(), 1u);
  EXPECT_TRUE(ir::structural_equal(again.best_func, r.best_func));
}

TEST(FastTune, ErrorsNameTheProblem) {
  ir::PrimFunc f = test::workload_at_size("copy_f16");
  try {
    fast_tune(f, Arch::by_name("h100"), {.rule = "no_such_rule", .measure = false});
    FAIL() << "expected a TuneError";
  } catch (const TuneError &e) {
    EXPECT_NE(std::string(e.what()).find("no_such_rule"), std::string::npos) << e.what();
  }
  try {
    fast_tune(f, Arch::by_name("h100"), {.rule = "matmul", .measure = false});
    FAIL() << "expected a TuneError";
  } catch (const TuneError &e) {
    // The reason the rule declined is part of the message.
    EXPECT_NE(std::string(e.what()).find("matmul:"), std::string::npos) << e.what();
  }
}

TEST(FastTune, JsonReportListsEveryCandidate) {
  ir::PrimFunc f = test::workload_at_size("softmax_f16");
  TuneResult r = fast_tune(f, Arch::by_name("h100"), {.topk = 4, .measure = false});
  auto j = to_json(r);
  EXPECT_EQ(j["rule"], "general_reduction");
  EXPECT_EQ(j["measured"], false);
  ASSERT_EQ(j["candidates"].size(), r.candidates.size());
  EXPECT_EQ(j["candidates"][0]["config"]["rule"], "general_reduction");
  EXPECT_EQ(j["best"], r.best);
  EXPECT_GT(j["phases_ms"]["nvrtc"].get<double>(), 0);
}

// With cuobjdump, every candidate that built carries its SASS summary, in the
// report and in the JSON; read_sass = false (or no tool) leaves them out.
TEST(FastTuneSass, EveryBuiltCandidateCarriesItsSassSummary) {
  if (!runtime::find_disassembler()) GTEST_SKIP() << runtime::kNoDisassemblerHint;
  ir::PrimFunc f = test::workload_at_size("softmax_f16");
  TuneResult r = fast_tune(f, Arch::by_name("h100"), {.topk = 4, .measure = false});
  EXPECT_FALSE(r.sass_tool.empty());
  EXPECT_EQ(r.sass_note, "");
  EXPECT_GT(r.phases.sass_ms, 0);
  auto j = to_json(r);
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const CandidateReport &c = r.candidates[i];
    if (c.status != CandidateStatus::Ok) continue;
    ASSERT_TRUE(c.sass) << c.origin << ": " << c.sass_error;
    EXPECT_GT(c.sass->instructions, 0);
    EXPECT_GT(c.sass->widest_global_load(), 0) << c.sass->str();
    EXPECT_EQ(c.sass_error, "");
    // The warning, when there is one, is the config's vector against the code.
    if (!c.sass_warning.empty()) {
      EXPECT_TRUE(c.sass_warning.starts_with("sass: asks for vector ")) << c.sass_warning;
    }
    EXPECT_EQ(j["candidates"][i]["sass"]["summary"], c.sass->str());
    EXPECT_EQ(j["candidates"][i]["sass_warning"], c.sass_warning);
  }
  TuneResult off = fast_tune(f, Arch::by_name("h100"), {.topk = 2, .measure = false, .read_sass = false});
  EXPECT_EQ(off.sass_tool, "");
  for (const CandidateReport &c : off.candidates) EXPECT_FALSE(c.sass);
  EXPECT_TRUE(to_json(off)["candidates"][0]["sass"].is_null());
}

}  // namespace
}  // namespace tessera::tuning

namespace tessera::tuning {
namespace {

TEST(FastTuneMeasure, SizesOfArgumentsAndLoopsWithSymbolicDimensions) {
  ir::PrimFunc f;
  for (const test::Entry &e : test::load_manifest())
    if (e.name == "matmul_nn_f32") f = test::load_func(e);
  ASSERT_TRUE(f.defined());
  // Unbound dimensions take the hint: A, B and C are 3 x 8 x 8 float32.
  runtime::DimBindings dims = complete_dims(f, {{"k", 8}}, 8);
  EXPECT_EQ(dims.at("m"), 8);
  EXPECT_EQ(dims.at("k"), 8);
  EXPECT_DOUBLE_EQ(argument_bytes(f, dims), 3 * 8 * 8 * 4);
  // The default hint would ask for 3 x 4096^2 floats: 201 MB.
  EXPECT_NEAR(argument_bytes(f, complete_dims(f, {}, 4096)), 3.0 * 4096 * 4096 * 4, 1);
  // Stores counted where they stand, but a block's init only through its
  // body: the init runs once per output, not once per step of k.
  EXPECT_EQ(loop_iterations(f, {{"m", 4}, {"n", 5}, {"k", 6}}), 4 * 5 * 6);
  // Symbolic loops count as unbounded.
  EXPECT_EQ(loop_iterations(f, {}), std::numeric_limits<int64_t>::max());
  // An extent that depends on the loops around it counts at its largest, a
  // negative one as none; an unbound scalar parameter at 8, make_random_args'
  // largest value; an extent read from a buffer at its type's largest.
  ir::PrimFunc g = script::parse_func(R"(@T.prim_func
def main(a: T.Buffer((16,), "float32"), idx: T.Buffer((4,), "int32"), n: T.int32) -> None:
    for i in range(8):
        for j in range(i + 8):
            a[j] = a[i] * T.float32(2)
        for j in range(i - 20):
            a[j] = T.float32(0)
    for i in range(n):
        a[i] = T.float32(1)
)");
  EXPECT_EQ(loop_iterations(g, {}), 8 * 15 + 0 + 8);
  EXPECT_EQ(loop_iterations(g, {{"n", 3}}), 8 * 15 + 3);
  ir::PrimFunc h = script::parse_func(R"(@T.prim_func
def main(a: T.Buffer((16,), "float32"), idx: T.Buffer((4,), "int32")) -> None:
    for i in range(idx[0]):
        a[i] = T.float32(1)
)");
  EXPECT_EQ(loop_iterations(h, {}), std::numeric_limits<int32_t>::max());
  // A scalar parameter that also sizes buffers (TVM's `n: T.int64` in
  // `(8, n * 32)`) takes its value from `dims` for both.
  ir::PrimFunc p = script::parse_func(R"(@T.prim_func
def main(x: T.handle, n: T.int64) -> None:
    X = T.match_buffer(x, (T.int64(8), n * 32), "float32")
    for i, k in T.grid(T.int64(8), n * 32):
        with T.block("X"):
            vi, vk = T.axis.remap("SS", [i, k])
            X[vi, vk] = T.float32(1)
)");
  EXPECT_DOUBLE_EQ(argument_bytes(p, {{"n", 2}}), 8 * 64 * 4);
  EXPECT_EQ(loop_iterations(p, {{"n", 2}}), 8 * 64);
}

}  // namespace
}  // namespace tessera::tuning
