//===- tests/tune/DynamicPlanTest.cpp - Kernels for ranges of symbolic sizes ===//
//
// tune/DynamicPlan.h: the cells partition each range (hot values exact), the
// plan is deterministic and within max_kernels, it predicts no worse than
// its baselines, and every chosen kernel, applied to the symbolic function
// and run by the interpreter at the edges of each of its cells, matches the
// float64 reference.
//
//===----------------------------------------------------------------------===//
#include "tessera/tune/DynamicPlan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "Workloads.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/support/Error.h"

namespace tessera::tuning {
namespace {

using test::find_entry;
using test::load_func;

TEST(DynamicPlan, CellsPartitionTheRangeWithHotValuesExact) {
  DynamicSpec spec;
  SymbolRange m = SymbolRange::parse("m=1:4096");
  m.hot = {1, 100};
  auto cells = symbol_cells(m, spec);
  ASSERT_FALSE(cells.empty());
  EXPECT_EQ(cells.front().first, 1);
  EXPECT_EQ(cells.back().second, 4096);
  for (size_t i = 0; i < cells.size(); ++i) {
    EXPECT_LE(cells[i].first, cells[i].second);
    if (i) {
      EXPECT_EQ(cells[i].first, cells[i - 1].second + 1) << "a gap or an overlap at cell " << i;
    }
  }
  auto has = [&](int64_t a, int64_t b) { return std::count(cells.begin(), cells.end(), std::pair{a, b}) == 1; };
  EXPECT_TRUE(has(1, 1));
  EXPECT_TRUE(has(100, 100)) << "hot 100 is a cell of its own";
  EXPECT_TRUE(has(97, 99) && has(101, 128));
  EXPECT_TRUE(has(3073, 4096)) << "two cells per octave: (2048, 3072], (3072, 4096]";
  // Four per octave, a range not starting at 1, an upper end inside an octave.
  spec.cells_per_octave = 4;
  auto c4 = symbol_cells(SymbolRange::parse("m=40:200"), spec);
  EXPECT_TRUE((c4.front() == std::pair<int64_t, int64_t>{40, 40}));
  EXPECT_TRUE((c4.back() == std::pair<int64_t, int64_t>{193, 200}));
  // Bad ranges say what is wrong.
  EXPECT_THROW(SymbolRange::parse("m=0:10"), UserError);
  EXPECT_THROW(SymbolRange::parse("m=10:5"), UserError);
  EXPECT_THROW(SymbolRange::parse("m=1:x"), UserError);
  EXPECT_THROW(SymbolRange::parse("1:4096"), UserError);
  SymbolRange out = SymbolRange::parse("m=1:64");
  out.hot = {65};
  EXPECT_THROW(symbol_cells(out, spec), UserError);
}

/// matmul_nn_f16 with N and K bound: M is the one symbol.
ir::PrimFunc gemm(int64_t n, int64_t k) {
  return analysis::specialize(load_func(find_entry("matmul_nn_f16")), {{"n", n}, {"k", k}});
}

TEST(DynamicPlan, DeterministicWithinItsKernelsAndNoWorseThanItsBaselines) {
  const Arch arch = Arch::by_name("h100");
  ir::PrimFunc f = gemm(4096, 4096);
  DynamicSpec spec{.symbols = {SymbolRange::parse("m=1:4096")}, .max_kernels = 6};
  spec.symbols[0].hot = {1};
  DynamicPlan a = plan_dynamic(f, spec, arch), b = plan_dynamic(f, spec, arch);
  EXPECT_EQ(a.to_json().dump(), b.to_json().dump());
  EXPECT_EQ(a.rule, "matmul_tensor_core");
  EXPECT_LE(a.configs.size(), 6u);
  EXPECT_GE(a.configs.size(), 2u) << "one tile cannot be best from M = 1 to 4096";
  for (const Cell &c : a.cells) {
    ASSERT_GE(c.config, 0);
    ASSERT_LT(c.config, int(a.configs.size()));
    EXPECT_GE(c.regret(), 1.0);
  }
  ASSERT_EQ(a.baselines.size(), 2u);
  for (const PlanBaseline &base : a.baselines) {
    SCOPED_TRACE(base.name);
    EXPECT_LE(a.geomean_regret(), base.geomean_regret + 1e-12);
  }
  EXPECT_GT(a.baselines[0].geomean_regret, 1.05) << "one kernel sized for M = 4096 is far from best at small M";
  // Every size maps to exactly one cell; outside the range, none.
  for (int64_t m : {1, 2, 37, 100, 4095, 4096}) EXPECT_GE(a.cell_of({m}), 0) << m;
  EXPECT_EQ(a.cell_of({4097}), -1);
  EXPECT_EQ(a.cell_of({0}), -1);
  // One kernel: every cell shares it.
  spec.max_kernels = 1;
  DynamicPlan one = plan_dynamic(f, spec, arch);
  ASSERT_EQ(one.configs.size(), 1u);
  for (const Cell &c : one.cells) EXPECT_EQ(c.config, 0);
  EXPECT_GE(one.geomean_regret(), a.geomean_regret());
}

TEST(DynamicPlan, TwoSymbols) {
  // A GEMM with symbolic M and N: the cells are the product of both ranges.
  ir::PrimFunc f = analysis::specialize(load_func(find_entry("matmul_nn_f16")), {{"k", 1024}});
  DynamicSpec spec{.symbols = {SymbolRange::parse("m=1:512"), SymbolRange::parse("n=256:2048")}, .max_kernels = 8};
  DynamicPlan p = plan_dynamic(f, spec, Arch::by_name("h100"));
  size_t m_cells = symbol_cells(spec.symbols[0], spec).size(), n_cells = symbol_cells(spec.symbols[1], spec).size();
  EXPECT_EQ(p.cells.size(), m_cells * n_cells);
  EXPECT_LE(p.configs.size(), 8u);
  EXPECT_GE(p.cell_of({37, 1000}), 0);
  EXPECT_TRUE(p.cells[p.cell_of({37, 1000})].contains({37, 1000}));
}

TEST(DynamicPlan, SoftmaxOverTwoSymbolsIsOneKernelPerCell) {
  // Rows (tokens) and columns (the context so far) both symbolic: one
  // general_reduction kernel per cell. Every candidate is scored at every
  // cell, so the baselines have an estimate everywhere (a config the
  // policy would not propose at a cell is still judged there).
  ir::PrimFunc f = load_func(find_entry("softmax_f16"));
  const Arch arch = Arch::by_name("h100");
  DynamicSpec spec{.symbols = {SymbolRange::parse("rows=1:4096"), SymbolRange::parse("cols=16:4096")},
                   .max_kernels = 8};
  DynamicPlan p = plan_dynamic(f, spec, arch);
  EXPECT_EQ(p.rule, "general_reduction");
  EXPECT_LE(p.configs.size(), 8u);
  ASSERT_EQ(p.baselines.size(), 2u);
  for (const PlanBaseline &base : p.baselines) {
    SCOPED_TRACE(base.name);
    EXPECT_LT(base.max_regret, 100.0) << "a cell without an estimate for the baseline's kernel";
    EXPECT_LE(p.geomean_regret(), base.geomean_regret + 1e-12);
  }
  EXPECT_LT(p.max_regret(), 1.5);
  // The interpreter runs each kernel at a small size in its cells' range.
  const rules::Rule &rule = *rules::find_rule(p.rule);
  auto m = rule.match(f, arch);
  ASSERT_TRUE(m) << m.reason();
  for (const std::vector<int64_t> &at : {std::vector<int64_t>{1, 16}, {3, 17}, {2, 100}, {5, 300}}) {
    int cell = p.cell_of(at);
    ASSERT_GE(cell, 0);
    ir::PrimFunc k = rule.apply(f, **m, *p.configs[size_t(p.cells[size_t(cell)].config)]).func();
    runtime::DimBindings dims{{"rows", at[0]}, {"cols", at[1]}};
    std::vector<runtime::NDArray> args = runtime::make_random_args(f, dims, 5);
    runtime::Reference want = runtime::compute_reference(f, args);
    runtime::interpret(k, args);
    for (const runtime::OutputCheck &c : runtime::check_outputs(f, args, want)) EXPECT_TRUE(c.ok) << c.str();
  }
}

TEST(DynamicPlan, EveryKernelMatchesTheReferenceAtTheEdgesOfItsCells) {
  // Small sizes the interpreter runs quickly: M in [1, 40], N = 45, K = 40.
  ir::PrimFunc f = schedule::unique_block_names(gemm(45, 40));
  const Arch arch = Arch::by_name("h100");
  DynamicSpec spec{.symbols = {SymbolRange::parse("m=1:40")}, .max_kernels = 3};
  DynamicPlan p = plan_dynamic(f, spec, arch);
  const rules::Rule &rule = *rules::find_rule(p.rule);
  auto m = rule.match(f, arch);
  ASSERT_TRUE(m) << m.reason();
  std::vector<ir::PrimFunc> kernels;
  for (const auto &c : p.configs) kernels.push_back(rule.apply(f, **m, *c).func());
  int runs = 0;
  for (const Cell &c : p.cells)
    for (int64_t size : {c.bounds[0].first, c.bounds[0].second}) {
      SCOPED_TRACE("M = " + std::to_string(size) + ", kernel " + std::to_string(c.config));
      std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"m", size}}, 5);
      runtime::Reference want = runtime::compute_reference(f, args);
      runtime::interpret(kernels[static_cast<size_t>(c.config)], args);
      for (const runtime::OutputCheck &k : runtime::check_outputs(f, args, want)) EXPECT_TRUE(k.ok) << k.str();
      ++runs;
    }
  EXPECT_GE(runs, 2 * int(p.cells.size()) - 1);
}

TEST(DynamicPlan, PredictedRegretCurve) {
  const Arch arch = Arch::by_name("h100");
  ir::PrimFunc f = gemm(4096, 4096);
  DynamicSpec spec{.symbols = {SymbolRange::parse("m=1:4096")}, .max_kernels = 6};
  std::vector<std::vector<int64_t>> sweep = regret_sweep(spec);
  ASSERT_GE(sweep.size(), 64u + 55u);
  for (int64_t m = 1; m <= 64; ++m) EXPECT_EQ(sweep[size_t(m - 1)][0], m);
  for (const auto &p : sweep) EXPECT_TRUE(p[0] >= 1 && p[0] <= 4096);
  DynamicPlan plan = plan_dynamic(f, spec, arch);
  RegretCurve c = predict_regret(f, spec, plan, arch, sweep);
  ASSERT_EQ(c.points.size(), sweep.size());
  for (const RegretPoint &p : c.points) {
    if (!std::isnan(p.plan)) {
      EXPECT_GE(p.plan, 1.0);
    }
    // At a cell's upper end the plan predicts what the cell says.
    int cell = plan.cell_of(p.sizes);
    if (p.sizes[0] == plan.cells[size_t(cell)].bounds[0].second) {
      EXPECT_NEAR(p.plan, plan.cells[size_t(cell)].regret(), 1e-9) << p.sizes[0];
    }
  }
  EXPECT_EQ(c.plan.unestimated, 0);
  EXPECT_LT(c.plan.geomean, c.one_kernel.geomean);
  EXPECT_LE(c.plan.geomean, c.pow2.geomean + 1e-12);
  // Two symbols: a log grid of up to 24 distinct values per symbol (fewer
  // where small values repeat) and 200 random points, all inside.
  DynamicSpec two{.symbols = {SymbolRange::parse("m=1:512"), SymbolRange::parse("n=256:2048")}};
  std::vector<std::vector<int64_t>> grid = regret_sweep(two);
  EXPECT_LE(grid.size(), 24u * 24u + 200u);
  EXPECT_GE(grid.size(), 20u * 24u + 200u);
  for (const auto &p : grid) EXPECT_TRUE(p[0] >= 1 && p[0] <= 512 && p[1] >= 256 && p[1] <= 2048);
}

TEST(DynamicPlan, ErrorsNameWhatIsWrong) {
  ir::PrimFunc f = gemm(64, 64);
  const Arch arch = Arch::by_name("h100");
  try {
    plan_dynamic(f, {.symbols = {SymbolRange::parse("q=1:64")}}, arch);
    FAIL() << "planned a symbol the function lacks";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("no symbolic size 'q' (it has: m)"), std::string::npos) << e.what();
  }
  try {
    plan_dynamic(f, {}, arch);
    FAIL() << "planned with M unranged";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("symbolic size 'm' of 'main' has no range"), std::string::npos) << e.what();
  }
  // No symbol at all: one cell, one kernel.
  DynamicPlan fixed = plan_dynamic(analysis::specialize(f, {{"m", 1}}), {}, arch);
  ASSERT_EQ(fixed.cells.size(), 1u);
  EXPECT_EQ(fixed.configs.size(), 1u);
  EXPECT_EQ(fixed.cell_of({}), 0);
  EXPECT_THROW(plan_dynamic(f, {.symbols = {SymbolRange::parse("m=1:64"), SymbolRange::parse("m=1:8")}}, arch),
               UserError);
  DynamicSpec tiny{.symbols = {SymbolRange::parse("m=1:4096")}, .max_cells = 8};
  EXPECT_THROW(plan_dynamic(f, tiny, arch), UserError);
}

}  // namespace
}  // namespace tessera::tuning
