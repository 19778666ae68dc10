//===- tests/tune/DynamicKernelTest.cpp - Kernels for size ranges, kept -----===//
//
// tune/DynamicKernel.h (label nvrtc: it compiles): a cold start builds the
// plan's kernels and writes its manifest; a warm start reads them back and
// builds nothing (counters); a damaged manifest or cubin is rebuilt;
// select() agrees with the plan's cells and with the lowered launch; the
// kernel it picks matches the float64 reference in the interpreter; a
// kernel fed and stored by TMA records its tensor maps (buffer, shape
// programs, box), reads them back warm and encodes them per size.
//
//===----------------------------------------------------------------------===//
#include "tessera/tune/DynamicKernel.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <sys/wait.h>
#include <unistd.h>

#include "../support/ScratchDir.h"
#include "AvgPoolProgram.h"
#include "HopperPlan.h"
#include "Workloads.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/Op.h"
#include "tessera/lower/Lower.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Verify.h"
#include "tessera/support/Error.h"
#include "tessera/tune/PlanKernel.h"

namespace tessera::tuning {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir() { return test::scratch_dir("tessera_dynamic_kernel_test"); }

/// Every cubin of the plan, kernel by kernel and step by step.
std::vector<std::vector<uint8_t>> cubins(const DynamicKernel &k) {
  std::vector<std::vector<uint8_t>> out;
  for (const PlannedKernel &pk : k.kernels())
    for (const dispatch::KernelStep &st : pk.steps) out.push_back(st.cubin);
  return out;
}

/// matmul_nn_f16 with N = 45, K = 40: M in [1, 64] is the one symbol.
ir::PrimFunc gemm() {
  return analysis::specialize(test::load_func(test::find_entry("matmul_nn_f16")), {{"n", 45}, {"k", 40}});
}

DynamicSpec spec() {
  DynamicSpec s{.symbols = {SymbolRange::parse("m=1:64")}, .max_kernels = 3};
  s.symbols[0].hot = {1};
  return s;
}

TEST(SizeProgram, EvaluatesAndReadsBack) {
  ir::Var m("m", ir::DataType::int32()), n("n", ir::DataType::int32());
  ir::Expr e = ir::floordiv(m + ir::make_int(m.dtype(), 127), ir::make_int(m.dtype(), 128)) *
               ir::min(n, ir::make_int(n.dtype(), 3));
  dispatch::SizeProgram p = compile_size_program(e, {"m", "n"});
  int64_t v[] = {129, 7};
  EXPECT_EQ(p.eval(v), 2 * 3);
  int64_t w[] = {1, 2};
  EXPECT_EQ(p.eval(w), 2);
  dispatch::SizeProgram q = dispatch::SizeProgram::from_json(p.to_json(), 2);
  EXPECT_EQ(q.eval(v), 6);
  EXPECT_THROW(dispatch::SizeProgram::from_json(p.to_json(), 1), UserError) << "symbol slot 1 of 1";
  EXPECT_THROW(dispatch::SizeProgram::from_json(rules::Json::parse(R"([["const", 1], "add"])"), 1), UserError);
  EXPECT_THROW(dispatch::SizeProgram::from_json(rules::Json::parse(R"([["jump", 1]])"), 1), UserError);
  EXPECT_THROW(compile_size_program(m, {"n"}), UserError) << "m is not a symbol of the plan";
}

TEST(DynamicKernel, AWarmStartBuildsNothing) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  runtime::KernelCache cache(fresh_dir());
  const Arch arch = Arch::by_name("h100");
  DynamicKernel cold = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  const DynamicKernelCounters &c = cold.counters();
  EXPECT_FALSE(c.warm);
  EXPECT_GE(c.kernels, 1);
  EXPECT_EQ(c.nvrtc_compiles, c.kernels) << c.str();
  EXPECT_GT(c.rule_applications, 0);
  EXPECT_GT(c.policy_calls, 0);

  DynamicKernel warm = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  const DynamicKernelCounters &w = warm.counters();
  EXPECT_TRUE(w.warm) << w.str();
  EXPECT_EQ(w.nvrtc_compiles, 0);
  EXPECT_EQ(w.rule_applications, 0);
  EXPECT_EQ(w.policy_calls, 0);
  EXPECT_EQ(w.cache_reads, c.kernels);
  ASSERT_EQ(warm.kernels().size(), cold.kernels().size());
  EXPECT_EQ(cubins(warm), cubins(cold));
  EXPECT_EQ(warm.plan().dump(), cold.plan().dump());
  for (int64_t m = 1; m <= 64; ++m) {
    KernelLaunch a = cold.select({m}), b = warm.select({m});
    EXPECT_EQ(a.kernel, b.kernel);
    EXPECT_EQ(a.step[0].grid.str(), b.step[0].grid.str());
  }
  // Another spec is another manifest: built, not read.
  DynamicSpec other = spec();
  other.max_kernels = 1;
  EXPECT_FALSE(DynamicKernel::create(gemm(), other, arch, {.cache = &cache}).counters().warm);
}

TEST(DynamicKernel, SelectAgreesWithThePlanTheLaunchAndTheReference) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  ir::PrimFunc f = gemm();
  DynamicKernel k = DynamicKernel::create(f, spec(), Arch::by_name("h100"));
  const rules::Json &cells = k.plan().at("cells");
  for (int64_t m : {1, 2, 5, 8, 9, 33, 48, 49, 64}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    KernelLaunch l = k.select({m});
    ASSERT_GE(l.cell, 0);
    const rules::Json &cell = cells.at(size_t(l.cell));
    EXPECT_LE(cell.at("bounds").at("m").at(0).get<int64_t>(), m);
    EXPECT_GE(cell.at("bounds").at("m").at(1).get<int64_t>(), m);
    EXPECT_EQ(l.kernel, cell.at("config").get<int>());
    // The grid, as the lowered kernel states it.
    lower::LoweredFunc lowered = lower::lower(k.scheduled(l.kernel));
    ASSERT_EQ(l.steps, 1);
    unsigned got[3] = {l.step[0].grid.x, l.step[0].grid.y, l.step[0].grid.z};
    for (int d = 0; d < 3; ++d) {
      if (!lowered.launch.grid[d].defined()) continue;
      ir::Expr e = lowered.launch.grid[d];
      std::vector<std::pair<ir::Var, ir::Expr>> at;
      for (const lower::KernelParam &p : lowered.params)
        if (!p.is_buffer()) at.push_back({p.var, ir::make_int(p.var.dtype(), m)});
      EXPECT_EQ(int64_t(got[d]), ir::as_const_int(arith::simplify(ir::substitute(e, at))).value_or(-1)) << d;
    }
    // The kernel it picks computes the product.
    std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"m", m}}, 7);
    runtime::Reference want = runtime::compute_reference(f, args);
    runtime::interpret(k.scheduled(l.kernel), args);
    for (const runtime::OutputCheck &c : runtime::check_outputs(f, args, want)) EXPECT_TRUE(c.ok) << c.str();
  }
  // Launching needs load(device) first (no lock on the launch path).
  int64_t m = 5;
  uint64_t ptrs[3] = {0, 0, 0};
  try {
    k.bind(&m, ptrs, 3);
    FAIL() << "bound a launch before load()";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("after load(device)"), std::string::npos) << e.what();
  }
  try {
    k.select({65});
    FAIL() << "selected outside the range";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("m = 65 is outside the planned range 1:64"), std::string::npos) << e.what();
  }
}

TEST(DynamicKernel, DamagedEntriesAreRebuilt) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  runtime::KernelCache cache(fresh_dir());
  const Arch arch = Arch::by_name("h100");
  DynamicKernel first = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  fs::path manifest;
  for (const auto &e : fs::directory_iterator(cache.dir() / "dynamic")) manifest = e.path();
  ASSERT_FALSE(manifest.empty());
  // A truncated manifest: rebuilt cold (its cubins come from the cache), then warm again.
  fs::resize_file(manifest, fs::file_size(manifest) / 2);
  DynamicKernel again = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  EXPECT_FALSE(again.counters().warm);
  EXPECT_EQ(again.counters().nvrtc_compiles, 0) << "the cubins themselves were whole";
  EXPECT_TRUE(DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache}).counters().warm);
  // A missing cubin: that kernel compiled again.
  fs::remove(cache.dir() / first.kernels()[0].steps[0].target / (first.kernels()[0].steps[0].cache_key + ".cubin"));
  DynamicKernel rebuilt = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  EXPECT_FALSE(rebuilt.counters().warm);
  EXPECT_EQ(rebuilt.counters().nvrtc_compiles, 1) << rebuilt.counters().str();
}

TEST(DynamicKernel, ProcessesFillingOneCacheAtOnceLeaveItValid) {
  // Three processes (fork) start cold on one empty cache directory at the
  // same moment: each builds and writes the same cubins and manifest. The
  // directory they leave must serve a warm start whole.
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  const fs::path dir = fresh_dir();
  const Arch arch = Arch::by_name("h100");
  std::vector<pid_t> children;
  for (int i = 0; i < 3; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      int status = 0;
      try {
        runtime::KernelCache cache(dir);
        DynamicKernel k = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache, .threads = 1});
        status = k.kernels().empty() ? 2 : 0;
      } catch (...) {
        status = 1;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = -1;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "a child died of a signal";
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  runtime::KernelCache cache(dir);
  DynamicKernel warm = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  EXPECT_TRUE(warm.counters().warm) << warm.counters().str();
  EXPECT_EQ(warm.counters().nvrtc_compiles, 0);
  DynamicKernel cold = DynamicKernel::create(gemm(), spec(), arch);  // no cache: built here
  ASSERT_EQ(warm.kernels().size(), cold.kernels().size());
  EXPECT_EQ(cubins(warm), cubins(cold));
  // No temporary file left behind.
  for (const auto &e : fs::recursive_directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

TEST(DynamicKernel, ManyAtOnceInOneWave) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  runtime::KernelCache cache(fresh_dir());
  const Arch arch = Arch::by_name("h100");
  ir::PrimFunc other =
      analysis::specialize(test::load_func(test::find_entry("matmul_nn_f16")), {{"n", 96}, {"k", 64}});
  // One built alone first: in the wave it is read back, the other compiled.
  DynamicKernel alone = DynamicKernel::create(gemm(), spec(), arch, {.cache = &cache});
  std::vector<DynamicKernel> both = DynamicKernel::create_many({{gemm(), spec()}, {other, spec()}}, arch, {.cache = &cache});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_TRUE(both[0].counters().warm);
  EXPECT_FALSE(both[1].counters().warm);
  EXPECT_EQ(both[1].counters().nvrtc_compiles, both[1].counters().kernels);
  EXPECT_EQ(cubins(both[0]), cubins(alone));
  // Each one's cubins are its own (a wave hands every kernel its result).
  for (int64_t m : {1, 40}) {
    KernelLaunch l = both[1].select({m});
    EXPECT_FALSE(both[1].kernels()[size_t(l.kernel)].steps[0].cubin.empty());
  }
  std::vector<DynamicKernel> again = DynamicKernel::create_many({{gemm(), spec()}, {other, spec()}}, arch, {.cache = &cache});
  EXPECT_TRUE(again[0].counters().warm && again[1].counters().warm);
  // A request the plan refuses fails the call, naming it.
  ir::PrimFunc unranged = analysis::specialize(test::load_func(test::find_entry("matmul_nn_f16")), {{"k", 40}});
  EXPECT_THROW(DynamicKernel::create_many({{gemm(), spec()}, {unranged, spec()}}, arch, {.cache = &cache}), UserError);
}

TEST(DynamicKernel, EverySymbolNeedsARange) {
  ir::PrimFunc f = analysis::specialize(test::load_func(test::find_entry("matmul_nn_f16")), {{"k", 40}});
  try {
    DynamicKernel::create(f, spec(), Arch::by_name("h100"));
    FAIL() << "created with 'n' unranged";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("symbolic size 'n'"), std::string::npos) << e.what();
  }
}

TEST(DynamicKernel, AFunctionOfSeveralKernelsIsOnePlanKernelOfSeveralSteps) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  runtime::KernelCache cache(fresh_dir());
  const Arch arch = Arch::by_name("h100");
  ir::PrimFunc f = test::avg_pool_dynamic_batch();
  DynamicSpec spec{.symbols = {SymbolRange::parse("n=1:12")}, .max_kernels = 2};
  DynamicKernel cold = DynamicKernel::create(f, spec, arch, {.cache = &cache});
  ASSERT_FALSE(cold.kernels().empty());
  int64_t steps = 0;
  for (const PlannedKernel &pk : cold.kernels()) {
    ASSERT_GE(pk.steps.size(), 2u);
    steps += int64_t(pk.steps.size());
    // The window sums, n × 8 × 10 × 10 float32, are the workspace the steps share.
    ASSERT_EQ(pk.workspace.size(), 1u);
    for (int64_t n : {1, 12}) EXPECT_EQ(pk.workspace[0].bytes(&n), n * 8 * 10 * 10 * 4);
    // The first step writes it and the second reads it: both take it, in
    // the workspace slot, and the input and output by their places.
    for (const dispatch::KernelStep &st : pk.steps) {
      int workspace = 0;
      for (const dispatch::KernelParam &p : st.params) {
        workspace += p.workspace == 0;
        if (p.buffer >= 0) EXPECT_EQ(p.name, (std::vector<std::string>{"x", "pool_avg"}[size_t(p.buffer)]));
      }
      EXPECT_EQ(workspace, 1) << st.entry;
    }
  }
  EXPECT_EQ(cold.counters().nvrtc_compiles, steps);
  // Warm: the same steps and workspace, read back, nothing built.
  DynamicKernel warm = DynamicKernel::create(f, spec, arch, {.cache = &cache});
  EXPECT_TRUE(warm.counters().warm);
  EXPECT_EQ(warm.counters().nvrtc_compiles, 0);
  EXPECT_EQ(warm.counters().cache_reads, steps);
  EXPECT_EQ(cubins(warm), cubins(cold));
  for (int64_t n = 1; n <= 12; ++n) {
    KernelLaunch a = cold.select({n}), b = warm.select({n});
    ASSERT_EQ(a.steps, int(cold.kernels()[size_t(a.kernel)].steps.size()));
    ASSERT_EQ(a.steps, b.steps);
    for (int s = 0; s < a.steps; ++s) EXPECT_EQ(a.step[s].grid.str(), b.step[s].grid.str());
    EXPECT_EQ(warm.kernels()[size_t(b.kernel)].workspace[0].bytes(&n), n * 8 * 10 * 10 * 4);
  }
  // Each plan kernel, run whole by the interpreter at the edges of its
  // cells, matches the float64 reference.
  for (int64_t n : {1, 2, 5, 12}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"n", n}}, 3);
    runtime::Reference want = runtime::compute_reference(f, args);
    runtime::interpret(warm.scheduled(warm.select({n}).kernel), args);
    for (const runtime::OutputCheck &c : runtime::check_outputs(f, args, want)) EXPECT_TRUE(c.ok) << c.str();
  }
}

TEST(DynamicKernel, TmaKernelsRecordTheirTensorMapsAndEncodeThemPerSize) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  runtime::KernelCache cache(fresh_dir());
  const Arch arch = Arch::by_name("h100");
  // C = float16(A B^T): A (m, 128), B (128, 128), C (m, 128).
  ir::PrimFunc f =
      analysis::specialize(test::load_func(test::find_entry("matmul_nt_f16")), {{"n", 128}, {"k", 128}});
  DynamicSpec spec{.symbols = {SymbolRange::parse("m=1:512")}, .max_kernels = 1};
  DynamicPlan plan = test::tma_plan(f, spec, arch);
  DynamicKernel cold = DynamicKernel::create_many({{f, spec, &plan}}, arch, {.cache = &cache}).at(0);
  ASSERT_EQ(cold.kernels().size(), 1u);
  const dispatch::KernelStep &st = cold.kernels()[0].steps.at(0);
  EXPECT_EQ(st.target, "sm_90a");
  // A and B copied in (128 x 64 boxes), C stored out (16 x 64: 128 bytes of float16).
  ASSERT_EQ(st.tensor_maps.size(), 3u);
  std::vector<std::pair<int, std::vector<int64_t>>> maps;
  for (const dispatch::TensorMapParam &m : st.tensor_maps) {
    maps.emplace_back(m.buffer, m.box.extent);
    EXPECT_EQ(m.box.swizzle_bytes, 128);
    EXPECT_EQ(m.box.data_type, runtime::TensorMapDataType::Float16);
    EXPECT_EQ(m.box.element_bytes, 2);
  }
  EXPECT_EQ(maps, (std::vector<std::pair<int, std::vector<int64_t>>>{
                      {0, {128, 64}}, {1, {128, 64}}, {2, {16, 64}}}));
  // Encoded at each size from the shape programs: rows = M.
  for (int64_t m : {1, 77, 512}) {
    std::vector<runtime::TensorMapEncoding> e = cold.tensor_map_encodings(0, 0, &m);
    ASSERT_EQ(e.size(), 3u);
    EXPECT_EQ(e[0].global_dim, (std::vector<uint64_t>{128, uint64_t(m)})) << "A, innermost first";
    EXPECT_EQ(e[1].global_dim, (std::vector<uint64_t>{128, 128})) << "B";
    EXPECT_EQ(e[2].global_dim, (std::vector<uint64_t>{128, uint64_t(m)})) << "C";
    EXPECT_EQ(e[2].global_strides, (std::vector<uint64_t>{256}));
    EXPECT_EQ(e[2].box_dim, (std::vector<uint32_t>{64, 16}));
  }
  EXPECT_THROW(cold.tensor_map_encodings(0, 1, nullptr), UserError) << "no second step";
  // Warm: the same maps, read back from the manifest.
  DynamicKernel warm = DynamicKernel::create_many({{f, spec, &plan}}, arch, {.cache = &cache}).at(0);
  EXPECT_TRUE(warm.counters().warm);
  const dispatch::KernelStep &ws = warm.kernels()[0].steps.at(0);
  ASSERT_EQ(ws.tensor_maps.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ws.tensor_maps[i].buffer, st.tensor_maps[i].buffer);
    EXPECT_EQ(ws.tensor_maps[i].box.extent, st.tensor_maps[i].box.extent);
    EXPECT_EQ(ws.tensor_maps[i].tensor.name, st.tensor_maps[i].tensor.name);
  }
  int64_t m = 300;
  EXPECT_EQ(warm.tensor_map_encodings(0, 0, &m)[0].global_dim, cold.tensor_map_encodings(0, 0, &m)[0].global_dim);
  // The policy, planning alone, may choose such kernels for dynamic plans
  // now; a symbolic K (a stride unknown until launch) keeps it from them.
  ir::PrimFunc symbolic_k = analysis::specialize(test::load_func(test::find_entry("matmul_nt_f16")), {{"n", 128}});
  DynamicSpec both{.symbols = {SymbolRange::parse("m=1:512"), SymbolRange::parse("k=64:512")}, .max_kernels = 2};
  DynamicPlan k_plan = plan_dynamic(symbolic_k, both, arch);
  EXPECT_EQ(k_plan.rule, "matmul_tensor_core");
  for (const auto &c : k_plan.configs)
    if (const auto *tc = dynamic_cast<const rules::TensorCoreConfig *>(c.get())) EXPECT_FALSE(tc->tma) << c->str();
}

}  // namespace
}  // namespace tessera::tuning
