//===- tests/codegen/CodegenGpuTest.cpp - Every kernel on the GPU (gpu) -----===//
//
// Label `gpu`: every scheduled kernel in kernels/*.py is built for the
// device's architecture, run on random inputs and checked against the
// kernel's float64 reference on the same inputs (runtime/Verify.h), or its
// unscheduled program's (originals/<name>.py) where the kernel uses
// instructions the reference cannot widen (ldmatrix, mma.sync, cp.async).
// Functions with symbolic dimensions run at sizes that do
// not divide their tiles (1, 130, 257). Every test skips itself without a
// usable CUDA driver.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <future>
#include <map>
#include <mutex>

#include "Kernels.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"

using namespace tessera;
using tessera::test::kernel_names;
using tessera::test::load_kernel;

namespace {

#define TESSERA_REQUIRE_GPU()                                                                  \
  do {                                                                                         \
    if (runtime::driver_status() != runtime::DriverStatus::Ok)                                 \
      GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();                         \
  } while (0)

/// The dimension bindings to run `f` at: one run for a static function, else
/// every symbolic dimension at 1, 130 and 257 together (small enough for
/// the interpreter, which runs scheduled matmuls at about 1 µs per multiply-add).
std::vector<runtime::DimBindings> sizes_for(const ir::PrimFunc &f) {
  if (f.shape_vars().empty()) return {{}};
  std::vector<runtime::DimBindings> out;
  for (int64_t n : {1, 130, 257}) {
    runtime::DimBindings d;
    for (const ir::Var &v : f.shape_vars()) d[v.name()] = n;
    out.push_back(d);
  }
  return out;
}

/// The float64 references of one kernel (runtime/Verify.h): per size of
/// sizes_for, the reference on make_random_args(f, dims, 7).
using Reference = std::vector<runtime::Reference>;

/// Every kernel's reference, all computed at the first request, each on its
/// own thread. The interpreter repeats a cooperative shared-memory fetch once
/// per thread it runs serially, so a scheduled matmul costs it far more than
/// its multiply-adds: one after the other the references took 3 minutes on an
/// H100 host (the matmul kernels were 512^3 then; they are 256^3 now).
std::shared_future<Reference> reference_for(const std::string &name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_future<Reference>> all;
  std::lock_guard<std::mutex> lock(mutex);
  if (all.empty())
    for (const std::string &n : kernel_names())
      all[n] = std::async(std::launch::async, [n] {
                 // A kernel whose instructions have no float64 model (the
                 // tensor-core intrinsics) is judged by its unscheduled
                 // program, originals/<name>.py, which takes the same arguments.
                 std::filesystem::path original = test::codegen_test_dir() / "originals" / (n + ".py");
                 ir::PrimFunc f = std::filesystem::exists(original)
                                      ? script::parse_func(test::read_text_file(original), original.string())
                                      : load_kernel(n);
                 Reference r;
                 for (const runtime::DimBindings &dims : sizes_for(f))
                   r.push_back(runtime::compute_reference(f, runtime::make_random_args(f, dims, /*seed=*/7)));
                 return r;
               }).share();
  return all.at(name);
}

class GpuKernelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuKernelTest, MatchesInterpreter) {
  TESSERA_REQUIRE_GPU();
  std::shared_future<Reference> reference = reference_for(GetParam());
  ir::PrimFunc f = load_kernel(GetParam());
  runtime::CudaFunction fn = runtime::CudaFunction::build(f);
  std::vector<runtime::DimBindings> sizes = sizes_for(f);
  for (size_t s = 0; s < sizes.size(); ++s) {
    const runtime::DimBindings &dims = sizes[s];
    std::string at;
    for (const auto &[k, v] : dims) at += " " + k + "=" + std::to_string(v);
    SCOPED_TRACE(GetParam() + at);
    std::vector<runtime::NDArray> got = runtime::make_random_args(f, dims, /*seed=*/7);
    fn.run(got);
    const runtime::Reference &want = reference.get().at(s);
    std::vector<runtime::OutputCheck> checks = runtime::check_outputs(f, got, want);
    for (const runtime::OutputCheck &c : checks) EXPECT_TRUE(c.ok) << c.str() << "\n" << fn.source();
    int outputs = int(checks.size());
    EXPECT_GT(outputs, 0) << "the kernel writes no parameter";
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, GpuKernelTest, ::testing::ValuesIn(kernel_names()),
                         [](const auto &info) { return info.param; });



/// Hopper's wgmma (tests/codegen/hopper/wgmma_nt_{f16,s8}.py, sm_90a) on
/// the device against the float64 reference of their plain programs
/// (hopper/originals/): the layouts, the descriptors and the accumulator
/// map the interpreter models (WgmmaTest) are the hardware's. Needs compute
/// capability 9.0.
TEST(GpuKernelWgmma, HopperKernelsMatchThePlainProduct) {
  TESSERA_REQUIRE_GPU();
  if (runtime::query_device(0).arch() != "sm_90") GTEST_SKIP() << "wgmma needs an sm_90 device";
  const std::filesystem::path dir = test::codegen_test_dir() / "hopper";
  for (const char *name : {"wgmma_nt_f16", "wgmma_nt_s8"}) {
    SCOPED_TRACE(name);
    ir::PrimFunc f = script::parse_func(test::read_text_file(dir / (std::string(name) + ".py")));
    ir::PrimFunc plain = script::parse_func(test::read_text_file(dir / "originals" / (std::string(name) + ".py")));
    runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = "sm_90a"});
    std::vector<runtime::NDArray> args = runtime::make_random_args(plain, {}, /*seed=*/3);
    runtime::Reference want = runtime::compute_reference(plain, args);
    fn.run(args);
    for (const runtime::OutputCheck &c : runtime::check_outputs(plain, args, want)) EXPECT_TRUE(c.ok) << c.str();
  }
}

/// Hopper's TMA (tests/codegen/hopper/tma_wgmma_nt_f16.py, sm_90a): the
/// host encodes the tensor maps of A and B (runtime/TensorMap.h) and the
/// kernel's copies, with zeros past the edges of both tensors, give the
/// float64 product of its plain program (hopper/originals/). Needs compute
/// capability 9.0 and a driver with cuTensorMapEncodeTiled.
TEST(GpuKernelTma, HopperTmaKernelMatchesThePlainProduct) {
  TESSERA_REQUIRE_GPU();
  if (runtime::query_device(0).arch() != "sm_90") GTEST_SKIP() << "TMA and wgmma need an sm_90 device";
  if (!runtime::driver_has_tensor_maps()) GTEST_SKIP() << "the driver lacks cuTensorMapEncodeTiled";
  const std::filesystem::path dir = test::codegen_test_dir() / "hopper";
  ir::PrimFunc f = script::parse_func(test::read_text_file(dir / "tma_wgmma_nt_f16.py"));
  ir::PrimFunc plain = script::parse_func(test::read_text_file(dir / "originals" / "tma_wgmma_nt_f16.py"));
  runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = "sm_90a"});
  std::vector<runtime::NDArray> args = runtime::make_random_args(plain, {}, /*seed=*/3);
  runtime::Reference want = runtime::compute_reference(plain, args);
  fn.run(args);
  std::vector<runtime::OutputCheck> checks = runtime::check_outputs(plain, args, want);
  EXPECT_FALSE(checks.empty());
  for (const runtime::OutputCheck &c : checks) EXPECT_TRUE(c.ok) << c.str() << "\n" << fn.source();
}

/// A launch the driver refuses (grid y beyond 65535) is a RuntimeError naming
/// the kernel and the grid.
TEST(GpuKernelErrors, OversizedGridNamesKernelAndGrid) {
  TESSERA_REQUIRE_GPU();
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def too_wide(A: T.Buffer((70000,), "float32")):
    for i in T.thread_binding(70000, thread="blockIdx.y"):
        with T.block("A"):
            vi = T.axis.spatial(70000, i)
            A[vi] = T.float32(1)
)",
                                      "too_wide.py");
  runtime::CudaFunction fn = runtime::CudaFunction::build(f);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 0);
  try {
    fn.run(args);
    FAIL() << "a grid of 70000 blocks in y launched";
  } catch (const runtime::RuntimeError &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("too_wide_kernel"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(1, 70000, 1)"), std::string::npos) << msg;
  }
}

TEST(GpuKernelTiming, MedianIsPositiveAndWithinMinMax) {
  TESSERA_REQUIRE_GPU();
  ir::PrimFunc f = load_kernel("elementwise_vectorized");
  runtime::CudaFunction fn = runtime::CudaFunction::build(f);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 0);
  runtime::TimingResult t = fn.time(args, {.warmup_ms = 5, .measure_ms = 20});
  EXPECT_GT(t.median_ms, 0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_GE(t.max_ms, t.median_ms);
  EXPECT_GE(t.repetitions, 10);
  EXPECT_GT(fn.attributes().registers, 0);
}

}  // namespace
