//===- tests/rules/GemvSimtTest.cpp - Gemv kernels on the SIMT emulator -----===//
//
// The interpreter runs thread loops one after another, so it cannot see what
// only the GPU's parallel execution gets wrong. Here every schedule shape of
// the gemv rule is lowered to its kernel and run by the SIMT emulator
// (tests/codegen/SimtEmulator.h: one CPU thread per GPU thread, real
// barriers and warp shuffles, race and uninitialised-read checks), and must
// match the interpreter on the unscheduled program.
//
//===----------------------------------------------------------------------===//
#include "../codegen/SimtEmulator.h"
#include "GemvPrograms.h"
#include "RuleTestUtil.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/rules/Gemv.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

using rules::GemvConfig;

GemvConfig cfg(int64_t tx, int64_t ty, int64_t vector, int64_t step, bool unroll, bool x_shared) {
  GemvConfig c;
  c.threads_x = tx, c.threads_y = ty, c.vector = vector, c.reduce_step = step, c.unroll = unroll;
  c.x_in_shared = x_shared;
  return c;
}

Entry entry(const std::string &name) {
  for (const Entry &e : workload_entries())
    if (e.name == name) return e;
  Entry e;
  e.name = name;
  return e;
}

/// Schedules `f` with `c` (the default config when null), lowers it and
/// emulates the kernel on random inputs; outputs must match the interpreter.
void expect_emulation_matches(const Entry &e, const ir::PrimFunc &f, const GemvConfig *c) {
  const rules::Rule &rule = rules::gemv_rule();
  auto m = rule.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  std::unique_ptr<rules::Config> def = rule.default_config(**m, test_arch());
  const GemvConfig &config = c ? *c : static_cast<const GemvConfig &>(*def);
  SCOPED_TRACE(e.name + " " + config.str());
  ir::PrimFunc scheduled = rule.apply(f, **m, config).func();
  lower::LoweredFunc kernel = lower::lower(scheduled);
  std::mt19937_64 rng(5);
  std::vector<runtime::NDArray> expected = runtime::make_random_args(f, {}, 9);
  prepare_inputs(e, expected, rng);
  std::vector<runtime::NDArray> actual = expected;
  runtime::Reference reference = runtime::compute_reference(f, expected);
  std::vector<runtime::NDArray *> args;
  for (runtime::NDArray &a : actual) args.push_back(&a);
  try {
    simt::emulate(kernel, args);
  } catch (const simt::EmulationError &err) {
    FAIL() << err.what() << "\n" << codegen::codegen_cuda(kernel);
  }
  for (const runtime::OutputCheck &c : runtime::check_outputs(f, actual, reference))
    EXPECT_TRUE(c.ok) << c.str() << "\n" << codegen::codegen_cuda(kernel);
}

TEST(GemvSimt, WorkloadsAtTheirSmallSizes) {
  for (const char *name : {"gemv_f16", "gemv_int4"}) {
    Entry e = entry(name);
    ir::PrimFunc f = small_workload(e).func;
    expect_emulation_matches(e, f, nullptr);
    GemvConfig masked = cfg(32, 4, 8, 2, true, true), per_row = cfg(1, 16, 8, 2, true, true);
    expect_emulation_matches(e, f, &masked);
    expect_emulation_matches(e, f, &per_row);
  }
}

TEST(GemvSimt, StagedInnerReduction) {
  Entry f16 = entry("gemv_f16");
  ir::PrimFunc f = analysis::specialize(load_func(f16), {{"m", 37}, {"k", 256}});
  for (const GemvConfig &c : {cfg(8, 4, 8, 2, true, true), cfg(16, 2, 4, 4, false, false), cfg(64, 2, 2, 1, true, true)})
    expect_emulation_matches(f16, f, &c);
  Entry int4 = entry("gemv_int4");
  ir::PrimFunc g = analysis::specialize(load_func(int4), {{"m", 13}, {"k", 512}});
  for (const GemvConfig &c : {cfg(4, 4, 32, 2, true, true), cfg(8, 2, 8, 1, true, false)})
    expect_emulation_matches(int4, g, &c);
}

TEST(GemvSimt, LowBatchOuterAndEpilogue) {
  ir::PrimFunc batch40 = script::parse_func(batch_gemv(3, 37, 40)), batch64 = script::parse_func(batch_gemv(3, 19, 64));
  GemvConfig c1 = cfg(8, 2, 4, 2, true, true), c2 = cfg(1, 8, 4, 1, true, false);
  for (const ir::PrimFunc &f : {batch40, batch64}) {
    expect_emulation_matches(entry("gemv_batch"), f, nullptr);
    expect_emulation_matches(entry("gemv_batch"), f, &c1);
    expect_emulation_matches(entry("gemv_batch"), f, &c2);
  }
  ir::PrimFunc outer = script::parse_func(outer_gemv(45, 37));
  GemvConfig serial = cfg(16, 1, 4, 3, true, true), split = cfg(8, 4, 2, 2, false, false);
  expect_emulation_matches(entry("gemv_outer"), outer, nullptr);
  expect_emulation_matches(entry("gemv_outer"), outer, &serial);
  expect_emulation_matches(entry("gemv_outer"), outer, &split);
  ir::PrimFunc outer_batch = script::parse_func(outer_batch_gemv(2, 21, 19));
  GemvConfig ob = cfg(8, 4, 1, 1, true, true);
  expect_emulation_matches(entry("gemv_outer_batch"), outer_batch, &ob);
  ir::PrimFunc bias = script::parse_func(bias_gemv(29, 72));
  GemvConfig staged = cfg(4, 2, 2, 3, true, true), masked = cfg(8, 4, 4, 1, true, false);
  expect_emulation_matches(entry("gemv_bias"), bias, &staged);
  expect_emulation_matches(entry("gemv_bias"), bias, &masked);
}

TEST(GemvSimt, UnitBatchAxesAsRelaxPrintsThem) {
  ir::PrimFunc inner = script::parse_func(decode_gemv(40, 96)), outer = script::parse_func(decode_gemv(40, 96, true));
  GemvConfig cross = cfg(8, 4, 4, 1, true, false), split = cfg(8, 4, 2, 2, false, false);
  expect_emulation_matches(entry("decode_gemv"), inner, nullptr);
  expect_emulation_matches(entry("decode_gemv"), inner, &cross);
  expect_emulation_matches(entry("decode_gemv"), outer, nullptr);
  expect_emulation_matches(entry("decode_gemv"), outer, &split);
}

}  // namespace
}  // namespace tessera::test
