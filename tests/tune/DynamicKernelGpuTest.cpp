//===- tests/tune/DynamicKernelGpuTest.cpp - Dynamic kernels on a device ----===//
//
// DynamicKernel::launch (label gpu; skips itself without a device): the
// kernel select() picks for each M, launched with device buffers, matches the
// float64 reference, at sizes inside different cells and at their edges;
// measure() with device_timer() within a budget, then every kernel of the
// plan at sizes across the range; on Hopper, a kernel fed and stored by TMA,
// its tensor maps encoded at each launch.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>
#include <set>

#include "AvgPoolProgram.h"
#include "HopperPlan.h"
#include "Workloads.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/DetectArch.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/tune/DynamicKernel.h"

namespace tessera::tuning {
namespace {

/// Random inputs at M = m and their float64 reference (the interpreter's: the
/// sizes stay small so that it takes a second, not minutes).
struct Case {
  std::vector<runtime::NDArray> args;
  runtime::Reference want;
};
Case make_case(const ir::PrimFunc &f, int64_t m) {
  Case c{runtime::make_random_args(f, {{"m", m}}, 11), {}};
  c.want = runtime::compute_reference(f, c.args);
  return c;
}

/// Runs `launch` (given the device addresses of f's arguments, in order) on
/// the case's inputs and checks the output against its reference.
void expect_launch_matches(const ir::PrimFunc &f, const Case &c,
                           const std::function<void(const std::vector<uint64_t> &)> &launch) {
  std::vector<runtime::NDArray> args = c.args;
  const runtime::Reference &want = c.want;
  std::vector<runtime::DeviceBuffer> dev;
  std::vector<uint64_t> ptrs;
  for (const runtime::NDArray &a : args) {
    dev.push_back(runtime::DeviceBuffer::from_host(a));
    ptrs.push_back(dev.back().ptr());
  }
  launch(ptrs);
  runtime::Device::get(0).synchronize();
  dev.back().copy_to(args.back());
  for (const runtime::OutputCheck &c : runtime::check_outputs(f, args, want)) EXPECT_TRUE(c.ok) << c.str();
}

TEST(DynamicKernelGpu, EveryCellsKernelMatchesTheReference) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok || runtime::device_count() == 0)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  const Arch arch = runtime::detect_arch();
  // N and K that no tile divides: every kernel masks its edges.
  ir::PrimFunc f = analysis::specialize(test::load_func(test::find_entry("matmul_nn_f16")), {{"n", 72}, {"k", 40}});
  DynamicSpec spec = DynamicSpec::parse({"m=1:1024"}, {"m=1"}, 4);
  DynamicKernel k = DynamicKernel::create(f, spec, arch);
  k.load(0);
  std::set<int> kernels_used;
  for (int64_t m : {1, 2, 7, 33, 100, 129, 511, 1024}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    expect_launch_matches(f, make_case(f, m), [&](const std::vector<uint64_t> &ptrs) { k.launch(ptrs, {m}); });
    kernels_used.insert(k.select({m}).kernel);
  }
  // How many kernels the plan keeps is the policy's call on this device;
  // what holds is that select() only answers with the plan's kernels.
  std::printf("# %zu of %zu kernels used\n", kernels_used.size(), k.kernels().size());
  EXPECT_LT(*kernels_used.rbegin(), int(k.kernels().size()));
}

TEST(DynamicKernelGpu, MeasuredOnTheDeviceEveryKernelStaysRight) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok || runtime::device_count() == 0)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  const Arch arch = runtime::detect_arch();
  ir::PrimFunc f = analysis::specialize(test::load_func(test::find_entry("matmul_nn_f16")), {{"n", 128}, {"k", 64}});
  DynamicSpec spec = DynamicSpec::parse({"m=1:1024"}, {"m=1"}, 4);
  DynamicKernel k = DynamicKernel::create(f, spec, arch);
  k.load(0);
  runtime::TimingOptions quick{.warmup_ms = 2, .measure_ms = 5, .min_reps = 5, .max_reps = 50};
  DynamicMeasureReport r = k.measure(k.device_timer(0, quick), {.budget_ms = 3000});
  std::printf("# %s\n", r.str().c_str());
  EXPECT_GT(r.cells_measured, 0) << r.str();
  EXPECT_EQ(r.failed, 0) << r.str();
  // Every kernel of the plan (bind_kernel), not only the cell's, at sizes
  // across the range: what measure() launched is right.
  for (int64_t m : {1, 5, 64, 300, 1024}) {
    const Case c = make_case(f, m);
    for (int kernel = 0; kernel < int(k.kernels().size()); ++kernel) {
      SCOPED_TRACE("M = " + std::to_string(m) + ", kernel " + std::to_string(kernel));
      expect_launch_matches(f, c, [&](const std::vector<uint64_t> &ptrs) {
        k.bind_kernel(kernel, &m, ptrs.data(), ptrs.size()).launch();
      });
    }
  }
}

TEST(DynamicKernelGpu, AFunctionOfTwoKernelsLaunchesBothWithItsWorkspace) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok || runtime::device_count() == 0)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  ir::PrimFunc f = test::avg_pool_dynamic_batch();
  DynamicKernel k = DynamicKernel::create(f, DynamicSpec::parse({"n=1:64"}, {}, 2), runtime::detect_arch());
  ASSERT_GE(k.kernels().at(0).steps.size(), 2u);
  k.load(0);
  for (int64_t n : {1, 3, 17, 64}) {
    Case c{runtime::make_random_args(f, {{"n", n}}, 5), {}};
    c.want = runtime::compute_reference(f, c.args);
    for (int kernel = 0; kernel < int(k.kernels().size()); ++kernel) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", kernel " + std::to_string(kernel));
      expect_launch_matches(f, c, [&](const std::vector<uint64_t> &ptrs) {
        k.bind_kernel(kernel, &n, ptrs.data(), ptrs.size()).launch();
      });
    }
    expect_launch_matches(f, c, [&](const std::vector<uint64_t> &ptrs) { k.launch(ptrs, {n}); });
  }
}

TEST(DynamicKernelGpu, TmaKernelsLaunchWithTheirTensorMaps) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok || runtime::device_count() == 0)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  const Arch arch = runtime::detect_arch();
  if (!arch.tensor_cores.wgmma || !arch.memory.tma) GTEST_SKIP() << arch.name << " has no wgmma and TMA";
  ir::PrimFunc f =
      analysis::specialize(test::load_func(test::find_entry("matmul_nt_f16")), {{"n", 128}, {"k", 128}});
  DynamicSpec spec = DynamicSpec::parse({"m=1:512"}, {}, 1);
  DynamicPlan plan = test::tma_plan(f, spec, arch);
  DynamicKernel k = DynamicKernel::create_many({{f, spec, &plan}}, arch).at(0);
  ASSERT_EQ(k.kernels().at(0).steps.at(0).tensor_maps.size(), 3u);
  k.load(0);
  for (int64_t m : {1, 37, 128, 300, 512}) {
    SCOPED_TRACE("M = " + std::to_string(m));
    expect_launch_matches(f, make_case(f, m), [&](const std::vector<uint64_t> &ptrs) { k.launch(ptrs, {m}); });
  }
}

}  // namespace
}  // namespace tessera::tuning
