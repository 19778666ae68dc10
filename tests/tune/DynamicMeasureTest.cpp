//===- tests/tune/DynamicMeasureTest.cpp - A dynamic kernel's cells by measurement ===//
//
// DynamicKernel::measure with a timer standing in for the GPU's (label
// nvrtc: the kernels are compiled): each measured cell takes the fastest of
// its kernel and the close runners-up, the exact cells first; a kernel whose
// timing fails is never chosen and its record says why; the budget stops
// it; every measurement is a database record keyed by the function at the
// cell's sizes, with the cell; the manifest keeps the measured assignment
// for the next start; a KernelStore serves every start of a process and
// keeps what was measured; with `background` the cells past the budget are
// measured on a thread while select() keeps serving, and destroying the
// kernel stops it. device_timer() is exercised by DynamicKernelGpuTest.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <set>

#include "../support/ScratchDir.h"
#include "Workloads.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/support/Error.h"
#include "tessera/tune/DynamicKernel.h"
#include "tessera/tune/KernelStore.h"

namespace tessera::tuning {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir() {
  fs::path dir = test::scratch_dir("tessera_dynamic_measure_test");
  fs::create_directories(dir);
  return dir;
}

/// matmul_nn_f16 with N = K = 4096: M in [1, 4096] takes several kernels
/// (nothing runs them here: the timer stands in for the GPU).
ir::PrimFunc gemm() {
  return analysis::specialize(test::load_func(test::find_entry("matmul_nn_f16")), {{"n", 4096}, {"k", 4096}});
}

DynamicSpec spec() {
  DynamicSpec s{.symbols = {SymbolRange::parse("m=1:4096")}, .max_kernels = 4};
  s.symbols[0].hot = {1};
  return s;
}

/// A fresh kernel cache and tuning database, and the GEMM's dynamic kernel
/// built into them on the h100 preset.
struct Started {
  fs::path dir = fresh_dir();
  runtime::KernelCache cache{dir / "kernels"};
  Database db = Database::open((dir / "tuning.jsonl").string());
  Arch arch = Arch::by_name("h100");
  DynamicKernel k = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
};

const std::vector<int64_t> kSizes = {1, 2, 3, 4, 5, 17, 33, 100, 257, 1000, 2049, 4096};

TEST(DynamicMeasure, EachCellTakesTheFastestAndTheNextStartKeepsIt) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  Started started;
  auto &[dir, cache, db, arch, k] = started;
  ASSERT_GE(k.kernels().size(), 2u) << "the test needs a plan with several kernels";
  const int last = int(k.kernels().size()) - 1;
  // The last kernel is the fastest everywhere (the others slower by index).
  std::vector<std::pair<int, std::vector<int64_t>>> calls;
  KernelTimerFn timer = [&](int kernel, const std::vector<int64_t> &sizes) {
    calls.emplace_back(kernel, sizes);
    return kernel == last ? 5.0 : 10.0 + kernel;
  };
  int64_t planned_elsewhere = 0;
  for (int64_t m : kSizes) planned_elsewhere += k.select({m}).kernel != last;
  ASSERT_GT(planned_elsewhere, 0);
  DynamicMeasureReport r = k.measure(timer, {.runner_up_within = 1e9, .db = &db, .cache = &cache});
  EXPECT_EQ(r.cells_measured, r.cells) << r.str();
  EXPECT_EQ(r.failed, 0);
  EXPECT_GT(r.reassigned, 0);
  EXPECT_GT(r.geomean_gain, 1.0);
  // Every kernel at every cell, once each, at the cell's upper end; the
  // exact cells (M = 1..4) first.
  EXPECT_EQ(r.measurements, int64_t(k.kernels().size()) * r.cells);
  std::set<std::pair<int, std::vector<int64_t>>> distinct(calls.begin(), calls.end());
  EXPECT_EQ(distinct.size(), calls.size());
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.front().second, std::vector<int64_t>{1});
  for (const auto &c : k.plan().at("cells")) EXPECT_TRUE(c.contains("measured_us")) << c.dump();
  for (int64_t m : kSizes) EXPECT_EQ(k.select({m}).kernel, last) << "M = " << m;
  // One record per measurement: the function at the cell's sizes, the cell.
  ASSERT_EQ(int64_t(db.records().size()), r.measurements);
  const Record &first = db.records().front();
  EXPECT_EQ(first.key, TuningKey::of(analysis::specialize(gemm(), {{"m", 1}}), arch));
  EXPECT_EQ(first.workload.at("dynamic_cell").at("m"), rules::Json({1, 1}));
  EXPECT_EQ(first.status, RecordStatus::Ok);
  EXPECT_EQ(Database::open((dir / "tuning.jsonl").string()).records().size(), db.records().size());
  // The next start reads the measured assignment back.
  DynamicKernel again = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  EXPECT_TRUE(again.counters().warm);
  for (int64_t m : kSizes) EXPECT_EQ(again.select({m}).kernel, last) << "M = " << m;
}

TEST(DynamicMeasure, AFailingKernelIsNeverChosenAndTheBudgetStops) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  fs::path dir = fresh_dir();
  Database db = Database::open((dir / "tuning.jsonl").string());
  const Arch arch = Arch::by_name("h100");
  DynamicKernel k = DynamicKernel::create(gemm(), spec(), arch);
  ASSERT_GE(k.kernels().size(), 2u);
  std::vector<int> before;
  for (int64_t m : kSizes) before.push_back(k.select({m}).kernel);
  // Nothing within a zero budget.
  DynamicMeasureReport none = k.measure([](int, const std::vector<int64_t> &) { return 1.0; }, {.budget_ms = 0});
  EXPECT_EQ(none.measurements, 0);
  EXPECT_EQ(none.cells_measured, 0);
  // Kernel 0 fails (the fastest if it ran); the others give NaN at M > 256.
  KernelTimerFn timer = [](int kernel, const std::vector<int64_t> &sizes) -> double {
    if (kernel == 0) throw UserError("the launch failed: too many resources requested");
    return sizes[0] > 256 ? std::nan("") : 3.0 + kernel;
  };
  DynamicMeasureReport r = k.measure(timer, {.runner_up_within = 1e9, .db = &db});
  EXPECT_GT(r.failed, 0);
  for (size_t i = 0; i < kSizes.size(); ++i) {
    const int64_t m = kSizes[i];
    int now = k.select({m}).kernel;
    if (m > 256) EXPECT_EQ(now, before[i]) << "M = " << m << ": nothing ran, the plan's kernel stays";
    else EXPECT_NE(now, 0) << "M = " << m;
  }
  bool saw_failure = false;
  for (const Record &rec : db.records()) {
    if (rec.status != RecordStatus::LaunchError) continue;
    saw_failure = true;
    EXPECT_TRUE(rec.error.find("too many resources") != std::string::npos ||
                rec.error.find("the timer gave no time") != std::string::npos)
        << rec.error;
  }
  EXPECT_TRUE(saw_failure);
}

TEST(DynamicMeasure, TheCellsPastTheBudgetGoOnInTheBackground) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  Started started;
  auto &[dir, cache, db, arch, k] = started;
  ASSERT_GE(k.kernels().size(), 2u) << "the test needs a plan with several kernels";
  const int last = int(k.kernels().size()) - 1;
  std::atomic<int> timings{0};
  KernelTimerFn timer = [&](int kernel, const std::vector<int64_t> &) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ++timings;
    return kernel == last ? 5.0 : 10.0 + kernel;
  };
  // Nothing fits the budget: everything is left to the thread.
  DynamicMeasureReport now =
      k.measure(timer, {.budget_ms = 0, .runner_up_within = 1e9, .db = &db, .cache = &cache, .background = true});
  EXPECT_EQ(now.cells_measured, 0);
  EXPECT_EQ(now.background_cells, now.cells);
  EXPECT_NE(now.str().find("left to the background"), std::string::npos) << now.str();
  EXPECT_THROW(k.measure(timer, {}), UserError);
  // Meanwhile select() serves every size, the plan's kernel or the measured one.
  int served = 0;
  while (k.measuring()) {
    for (int64_t m : kSizes) {
      int kernel = k.select({m}).kernel;
      EXPECT_GE(kernel, 0);
      EXPECT_LT(kernel, int(k.kernels().size()));
      ++served;
    }
  }
  EXPECT_GT(served, 0);
  // The thread published every cell's fastest as it went.
  for (int64_t m : kSizes) EXPECT_EQ(k.select({m}).kernel, last) << "M = " << m;
  DynamicMeasureReport all = k.finish_measuring();
  EXPECT_EQ(all.cells_measured, all.cells) << all.str();
  EXPECT_EQ(all.background_cells, 0);
  EXPECT_EQ(all.measurements, timings.load());
  EXPECT_GT(all.reassigned, 0);
  EXPECT_EQ(int64_t(db.records().size()), all.measurements);
  for (const auto &c : k.plan().at("cells")) EXPECT_TRUE(c.contains("measured_us")) << c.dump();
  EXPECT_EQ(k.finish_measuring().cells, 0) << "nothing is left to finish";
  // The manifest has the background's assignment for the next start.
  DynamicKernel again = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  EXPECT_TRUE(again.counters().warm);
  for (int64_t m : kSizes) EXPECT_EQ(again.select({m}).kernel, last) << "M = " << m;
}

TEST(DynamicMeasure, DestroyingTheKernelStopsItsBackgroundMeasurement) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  std::atomic<int> timings{0};
  const auto start = std::chrono::steady_clock::now();
  {
    DynamicKernel k = DynamicKernel::create(gemm(), spec(), Arch::by_name("h100"));
    k.measure(
        [&](int, const std::vector<int64_t> &) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          ++timings;
          return 1.0;
        },
        {.budget_ms = 0, .runner_up_within = 1e9, .background = true});
    EXPECT_TRUE(k.measuring());
  }
  // Stopped after the timing under way: far from the whole plan's.
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LE(timings.load(), 2);
  EXPECT_LT(ms, 20000.0);
}

TEST(KernelStore, OpenedPerProcessItServesEveryStartAndKeepsTheMeasurements) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  fs::path dir = fresh_dir();
  const Arch arch = Arch::by_name("h100");
  KernelStore::Paths paths{dir / "kernels", (dir / "db" / "tuning.jsonl").string()};
  std::vector<DynamicRequest> requests = {{gemm(), spec()},
                                          {analysis::specialize(test::load_func(test::find_entry("rmsnorm_f16")),
                                                                {{"cols", 4096}}),
                                           DynamicSpec::parse({"rows=1:4096"}, {"rows=1"}, 4)}};
  std::vector<int> measured;  // the kernel of each of kSizes after measuring
  {
    KernelStore store(paths);  // the first start
    ASSERT_NE(store.database(), nullptr);
    std::vector<DynamicKernel> ks = store.create(requests, arch);
    ASSERT_EQ(ks.size(), 2u);
    EXPECT_FALSE(ks[0].counters().warm);
    // The plan's kernel is the slowest wherever it is measured: every cell
    // with a runner-up is reassigned.
    const DynamicKernel &planned = ks[0];
    DynamicMeasureReport r = store.measure(ks[0], [&](int k, const std::vector<int64_t> &sizes) {
      return k == planned.select(sizes).kernel ? 2.0 : 1.0 + 0.01 * k;
    });
    EXPECT_EQ(r.failed, 0);
    EXPECT_EQ(int64_t(store.database()->records().size()), r.measurements);
    EXPECT_GT(r.reassigned, 0) << r.str();
    for (int64_t m : kSizes) measured.push_back(ks[0].select({m}).kernel);
  }
  KernelStore again(paths);  // a later start: nothing built, the measured kernels kept
  std::vector<DynamicKernel> ks = again.create(requests, arch);
  for (const DynamicKernel &k : ks) {
    EXPECT_TRUE(k.counters().warm) << k.counters().str();
    EXPECT_EQ(k.counters().nvrtc_compiles, 0);
  }
  for (size_t i = 0; i < kSizes.size(); ++i) EXPECT_EQ(ks[0].select({kSizes[i]}).kernel, measured[i]);
  EXPECT_FALSE(again.database()->records().empty());
  // No database: measurements change the cells but record nothing.
  KernelStore bare({dir / "kernels", ""});
  EXPECT_EQ(bare.database(), nullptr);
}

}  // namespace
}  // namespace tessera::tuning
