//===- tests/dispatch/KernelPlanTest.cpp - Plans and packages without a GPU ===//
//
// The dispatch library's pure half: launch extents, cells, the symbols read
// from the arguments' shapes, JSON round trips and the refusals of damaged
// plans; kernel packages written, read back, and refused when truncated,
// altered, of another format or missing; DLPack tensors checked against the
// parameters they are bound to. The plans are built by hand (the cubins are
// bytes no GPU runs), so nothing here needs the compiler.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/ExpectError.h"
#include "../support/ScratchDir.h"
#include "tessera/dispatch/Dispatcher.h"
#include "tessera/dispatch/KernelPlan.h"
#include "tessera/dispatch/Package.h"
#include "tessera/support/Error.h"

namespace tessera::dispatch {
namespace {

using Op = SizeProgram::Op;

SizeProgram sym(int s) { return SizeProgram::from_steps({{Op::Sym, s}}, 2); }

/// A plan of `y[m, n] = f(x[m, n])` over symbols m and n: two cells of m
/// ([1, 64], [65, 4096]) times one of n; the first cell's kernel is one step
/// of ceil(m * n / 256) blocks, the second's two steps with a workspace of
/// m float32s.
KernelPlan two_cell_plan() {
  KernelPlan p;
  p.name = "scale";
  p.target = "sm_90";
  p.arch = "h100_sxm/sm_90/132sm";
  p.symbols = {"m", "n"};
  p.lows = {1, 1};
  p.ends = {{64, 4096}, {8192}};
  p.cells.assign({0, 1});
  for (const char *name : {"x", "y"})
    p.arguments.push_back({{name, {sym(0), sym(1)}, 16}, "float16", std::string(name) == "y"});
  // ceil(m * n / 256) = (m * n + 255) // 256
  SizeProgram blocks = SizeProgram::from_steps(
      {{Op::Sym, 0}, {Op::Sym, 1}, {Op::Mul}, {Op::Const, 255}, {Op::Add}, {Op::Const, 256}, {Op::FloorDiv}}, 2);
  KernelStep one;
  one.entry = "scale_kernel";
  one.target = "sm_90";
  one.cubin = {0x7f, 'E', 'L', 'F', 1};
  one.params = {{"x", -1, 0, 0, -1}, {"y", -1, 0, 1, -1}, {"m", 0, 4}, {"n", 1, 8}};
  one.grid[0] = blocks;
  one.block[0] = SizeProgram::constant(256);
  p.kernels.push_back({{one}, {}});
  KernelStep first = one, second = one;
  first.entry = "rows_kernel";
  first.params = {{"x", -1, 0, 0, -1}, {"sums", -1, 0, -1, 0}, {"m", 0, 4}};
  second.entry = "normalize_kernel";
  second.cubin = {0x7f, 'E', 'L', 'F', 2, 3};
  second.params = {{"sums", -1, 0, -1, 0}, {"y", -1, 0, 1, -1}};
  p.kernels.push_back({{first, second}, {{"sums", {sym(0)}, 32}}});
  p.validate();
  return p;
}

std::vector<uint8_t> no_cubin(const Json &) { return {}; }

TEST(SizeProgram, StepsEvaluateAndReadBack) {
  SizeProgram p = SizeProgram::from_steps({{Op::Sym, 1}, {Op::Const, 7}, {Op::FloorMod}}, 2);
  int64_t v[] = {0, -3};
  EXPECT_EQ(p.eval(v), 4) << "floor modulo";
  EXPECT_EQ(p.symbol(), -1);
  EXPECT_EQ(sym(1).symbol(), 1);
  EXPECT_EQ(SizeProgram::constant(5).constant_value(), 5);
  EXPECT_EQ(p.constant_value(), std::nullopt);
  EXPECT_EQ(SizeProgram::from_json(p.to_json(), 2).eval(v), 4);
  EXPECT_EQ(p.to_json().dump(), R"([["sym",1],["const",7],"floormod"])");
  EXPECT_ERROR(SizeProgram::from_steps({{Op::Add}}, 0), "has too few operands");
  EXPECT_ERROR(SizeProgram::from_steps({{Op::Const, 1}, {Op::Const, 2}}, 0), "leaves 2 values");
  EXPECT_ERROR(SizeProgram::from_steps({{Op::Sym, 2}}, 2), "symbol slot 2 of 2");
  EXPECT_ERROR(SizeProgram::from_json(Json::parse(R"(["add", 1])"), 1), "damaged");
  std::vector<SizeProgram::Step> deep(SizeProgram::kMaxDepth + 1, {Op::Const, 1});
  EXPECT_ERROR(SizeProgram::from_steps(deep, 0), "nested too deeply");
}

TEST(KernelPlan, SelectsTheCellAndEvaluatesItsLaunches) {
  KernelPlan p = two_cell_plan();
  EXPECT_EQ(p.cell_count(), 2u);
  int64_t small[] = {37, 100};
  KernelLaunch a = p.select(small);
  EXPECT_EQ(a.cell, 0);
  EXPECT_EQ(a.kernel, 0);
  ASSERT_EQ(a.steps, 1);
  EXPECT_EQ(a.step[0].grid.x, (37u * 100 + 255) / 256);
  EXPECT_EQ(a.step[0].block.x, 256u);
  int64_t large[] = {65, 1};
  KernelLaunch b = p.select(large);
  EXPECT_EQ(b.cell, 1);
  EXPECT_EQ(b.kernel, 1);
  EXPECT_EQ(b.steps, 2);
  EXPECT_EQ(p.kernels[1].workspace[0].bytes(large), 65 * 4);
  int64_t empty[] = {64, 0};
  EXPECT_ERROR(p.select(empty), "n = 0 is outside the planned range 1:8192");
  int64_t past[] = {4097, 1};
  EXPECT_ERROR(p.select(past), "m = 4097 is outside the planned range 1:4096");
}

TEST(KernelPlan, SymbolsComeFromTheArgumentsShapes) {
  KernelPlan p = two_cell_plan();
  EXPECT_EQ(p.sizes_of({{37, 100}, {37, 100}}), (std::vector<int64_t>{37, 100}));
  EXPECT_ERROR(p.sizes_of({{37, 100}, {37, 99}}), "argument 1 ('y') of 'scale' has shape (37, 99); the others make it (37, 100)");
  EXPECT_ERROR(p.sizes_of({{37, 100}}), "'scale' takes 2 arguments, not 1");
  EXPECT_ERROR(p.sizes_of({{37, 100}, {37}}), "argument 1 ('y') of 'scale' has 1 dimensions, not 2");
  // A symbol that is no argument's dimension alone cannot be read off.
  KernelPlan q = two_cell_plan();
  q.arguments[0].buffer.shape[1] = q.arguments[1].buffer.shape[1] =
      SizeProgram::from_steps({{Op::Sym, 1}, {Op::Const, 2}, {Op::Mul}}, 2);
  EXPECT_ERROR(q.sizes_of({{37, 200}, {37, 200}}), "the size 'n' of 'scale' is no dimension of an argument");
}

TEST(KernelPlan, BindsArgumentsWithoutADevice) {
  KernelPlan p = two_cell_plan();
  // One workspace for the plan: the second kernel's m float32s at the largest m.
  KernelPlan::WorkspaceLayout layout = p.workspace_layout();
  EXPECT_EQ(layout.bytes, 4096u * 4);
  ASSERT_EQ(layout.spans.size(), 2u);
  EXPECT_TRUE(layout.spans[0].empty());
  EXPECT_EQ(layout.spans[1], (std::vector<std::pair<size_t, int64_t>>{{0, 4096 * 4}}));
  const uint64_t buffers[] = {0x1000, 0x2000}, workspace = 0x9000;
  uint64_t v[KernelPlan::kMaxParams];
  int64_t sizes[] = {-2, 3};  // a 4-byte scalar is its low 4 bytes; an 8-byte one whole
  EXPECT_EQ(p.bind_values(0, 0, sizes, buffers, 2, workspace, layout, v), 4);
  EXPECT_EQ(std::vector<uint64_t>(v, v + 4), (std::vector<uint64_t>{0x1000, 0x2000, 0xfffffffeu, 3}));
  int64_t large[] = {100, 1};
  EXPECT_EQ(p.bind_values(1, 0, large, buffers, 2, workspace, layout, v), 3);
  EXPECT_EQ(std::vector<uint64_t>(v, v + 3), (std::vector<uint64_t>{0x1000, 0x9000, 100}));
  EXPECT_EQ(p.bind_values(1, 1, large, buffers, 2, workspace, layout, v), 2);
  EXPECT_EQ(std::vector<uint64_t>(v, v + 2), (std::vector<uint64_t>{0x9000, 0x2000}));
  EXPECT_ERROR(p.bind_values(0, 0, sizes, buffers, 1, workspace, layout, v),
               "launch: 1 buffers for kernel scale_kernel, which reads buffer 2 ('y')");
  KernelPlan::WorkspaceLayout small = layout;
  small.spans[1][0].second = 64;
  EXPECT_ERROR(p.bind_values(1, 0, large, buffers, 2, workspace, small, v),
               "the workspace buffer 'sums' needs 400 bytes at these sizes, more than its largest at the cells' edges (64)");
}

TEST(KernelPlan, JsonRoundTripKeepsEverythingButTheCubinsBytes) {
  KernelPlan p = two_cell_plan();
  Json j = p.to_json();
  EXPECT_FALSE(j.dump().find("cubin\":[") != std::string::npos) << "no bytes in the JSON";
  int served = 0;
  KernelPlan q = KernelPlan::from_json(j, [&](const Json &step) {
    ++served;
    return step.at("entry") == "normalize_kernel" ? std::vector<uint8_t>{9} : std::vector<uint8_t>{8, 8};
  });
  EXPECT_EQ(served, 3);
  EXPECT_EQ(q.to_json(), j);
  EXPECT_EQ(q.kernels[1].steps[1].cubin, (std::vector<uint8_t>{9}));
  EXPECT_EQ(q.arguments[1].written, true);
  EXPECT_EQ(q.arguments[0].dtype, "float16");
}

TEST(KernelPlan, DamagedPlansAreRefusedWithWhatIsWrong) {
  Json good = two_cell_plan().to_json();
  auto cubin = [](const Json &) { return std::vector<uint8_t>{1}; };
  auto refused = [&](const std::function<void(Json &)> &damage, const std::string &fragment) {
    Json j = good;
    damage(j);
    EXPECT_ERROR(KernelPlan::from_json(j, cubin), fragment);
  };
  refused([](Json &j) { j["cells"] = {0, 2}; }, "cell 1 names no kernel");
  refused([](Json &j) { j["cells"] = {0}; }, "1 cells for 2 ranges");
  refused([](Json &j) { j["kernels"][0]["steps"][0]["params"][0]["buffer"] = 5; },
          "parameter 'x' of scale_kernel names no symbol, buffer or workspace slot");
  refused([](Json &j) { j["kernels"][0]["steps"][0]["params"][2]["bytes"] = 2; }, "names no symbol");
  refused([](Json &j) { j["kernels"][0]["steps"][0]["grid"][0] = Json::array({{"sym", 3}}); }, "symbol slot 3 of 2");
  refused([](Json &j) { j["ends"][0] = {4096, 64}; }, "are not ascending ranges");
  refused([](Json &j) { j.erase("arguments"); }, "a kernel plan is malformed");
  refused([](Json &j) { j["kernels"][1]["steps"] = Json::array(); }, "a kernel of 0 steps");
  EXPECT_ERROR(KernelPlan::from_json(good, no_cubin), "kernel scale_kernel has no cubin");
}

TEST(Package, SavedAndLoadedBack) {
  const std::filesystem::path dir = test::scratch_dir("tessera_dispatch_test");
  std::filesystem::create_directories(dir);
  Package out{"cuda", std::make_shared<KernelPlan>(two_cell_plan()), {{"script", "# the function"}}};
  const std::string path = (dir / "scale.tsk").string();
  save_package(path, out);
  Package in = load_package(path);
  EXPECT_EQ(in.kind, "cuda");
  EXPECT_EQ(in.meta.at("script"), "# the function");
  ASSERT_TRUE(in.plan);
  EXPECT_EQ(in.plan->to_json(), out.plan->to_json());
  for (size_t k = 0; k < 2; ++k)
    for (size_t s = 0; s < out.plan->kernels[k].steps.size(); ++s)
      EXPECT_EQ(in.plan->kernels[k].steps[s].cubin, out.plan->kernels[k].steps[s].cubin);
  // Nothing of the temporary file is left beside it.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
  // A CPU package has no plan.
  save_package(path, {"cpu", nullptr, {{"script", "x"}}});
  EXPECT_EQ(load_package(path).plan, nullptr);
}

TEST(Package, DamagedFilesAreRefusedNeverRun) {
  const std::filesystem::path dir = test::scratch_dir("tessera_dispatch_test");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "scale.tsk").string();
  save_package(path, {"cuda", std::make_shared<KernelPlan>(two_cell_plan()), {}});
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    bytes = s.str();
  }
  auto with = [&](const std::string &content) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
    return path;
  };
  EXPECT_ERROR(load_package(with(bytes.substr(0, bytes.size() - 1))), "the cubin of normalize_kernel is cut short");
  EXPECT_ERROR(load_package(with(bytes.substr(0, bytes.size() / 2))), "truncated");
  std::string flipped = bytes;
  flipped.back() ^= 1;
  EXPECT_ERROR(load_package(with(flipped)), "the cubin of normalize_kernel does not read back as written");
  EXPECT_ERROR(load_package(with("not a package\n")), "not a whole tessera kernel package");
  EXPECT_ERROR(load_package(with("")), "no header line");
  std::string newer = bytes;
  newer.replace(newer.find(" 1 "), 3, " 9 ");
  EXPECT_ERROR(load_package(with(newer)), "a kernel package of format 9; this tessera reads format 1");
  std::string bad_json = bytes;
  bad_json[bad_json.find('{') + 1] = '#';
  EXPECT_ERROR(load_package(with(bad_json)), "its description is not JSON");
  EXPECT_ERROR(load_package((dir / "missing.tsk").string()), "cannot read the kernel package");
  EXPECT_ERROR(save_package((dir / "no" / "such" / "dir.tsk").string(), {"cpu", nullptr, {}}),
               "cannot write the kernel package");
}

TEST(TensorAddress, ChecksDeviceTypeAndLayout) {
  const Argument a{{"x", {sym(0), sym(1)}, 16}, "float16", false};
  int64_t shape[] = {4, 6};
  int64_t dense[] = {6, 1}, strided[] = {8, 1}, broadcast[] = {6, 1};
  alignas(16) uint16_t data[4 * 8];
  DLTensor t{data, {kDLCUDA, 0}, 2, {kDLFloat, 16, 1}, shape, nullptr, 32};
  EXPECT_EQ(tensor_address(t, a, 0, 0), uint64_t(reinterpret_cast<uintptr_t>(data)) + 32);
  t.strides = dense;
  EXPECT_NO_THROW(tensor_address(t, a, 0, 0));
  EXPECT_EQ(tensor_shape(t), (std::vector<int64_t>{4, 6}));
  EXPECT_ERROR(tensor_address(t, a, 0, 1), "argument 0 ('x') is not on CUDA device 1");
  EXPECT_ERROR(tensor_address(t, a, 0, -1), "is not in host memory");
  t.strides = strided;
  EXPECT_ERROR(tensor_address(t, a, 0, 0), "is not compact row-major: dimension 0 has stride 8 elements, not 6");
  t.strides = broadcast;
  t.dtype = {kDLFloat, 32, 1};
  EXPECT_ERROR(tensor_address(t, a, 0, 0), "argument 0 ('x') is float32; the kernel takes float16");
  t.dtype = {kDLBfloat, 16, 1};
  EXPECT_ERROR(tensor_address(t, a, 0, 0), "is bfloat16; the kernel takes float16");
  t.dtype = {kDLFloat, 16, 1};
  t.ndim = 1;
  EXPECT_ERROR(tensor_address(t, a, 0, 0), "has 1 dimensions, not 2");
  // bool parameters take one-byte booleans however the producer spells them.
  const Argument flags{{"mask", {sym(0)}, 8}, "bool", false};
  DLTensor m{data, {kDLCPU, 0}, 1, {kDLUInt, 8, 1}, shape, nullptr, 0};
  EXPECT_NO_THROW(tensor_address(m, flags, 0, -1));
  m.dtype = {6, 8, 1};
  EXPECT_NO_THROW(tensor_address(m, flags, 0, -1));
}

TEST(Dispatcher, WithoutADeviceItSaysWhy) {
  if (runtime::driver_status() == runtime::DriverStatus::Ok) GTEST_SKIP() << "a device is here";
  auto plan = std::make_shared<const KernelPlan>(two_cell_plan());
  try {
    Dispatcher d(plan, 0);
    ADD_FAILURE() << "loaded without a device";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(runtime::driver_message()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::dispatch
