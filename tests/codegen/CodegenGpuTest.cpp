//===- tests/codegen/CodegenGpuTest.cpp - Every kernel on the GPU (gpu) -----===//
//
// Label `gpu`: every scheduled kernel in kernels/*.py is built for the
// device's architecture, run on random inputs and compared with the
// interpreter on the same inputs (runtime::matches_reference at the dtype's
// default tolerance). Functions with symbolic dimensions run at sizes that do
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

/// The interpreter's results for one kernel: per size of sizes_for, the
/// arguments after interpreting on make_random_args(f, dims, 7).
using Reference = std::vector<std::vector<runtime::NDArray>>;

/// Every kernel's reference, all computed at the first request, each on its
/// own thread: the interpreter runs a scheduled 512^3 matmul in about a minute,
/// so one after the other they would dominate the GPU run (seen on an H100
/// host: 3 minutes for this binary; in parallel it takes the slowest one).
std::shared_future<Reference> reference_for(const std::string &name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_future<Reference>> all;
  std::lock_guard<std::mutex> lock(mutex);
  if (all.empty())
    for (const std::string &n : kernel_names())
      all[n] = std::async(std::launch::async, [n] {
                 ir::PrimFunc f = load_kernel(n);
                 Reference r;
                 for (const runtime::DimBindings &dims : sizes_for(f)) {
                   r.push_back(runtime::make_random_args(f, dims, /*seed=*/7));
                   runtime::interpret(f, r.back());
                 }
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
    const std::vector<runtime::NDArray> &want = reference.get().at(s);
    int outputs = 0;
    for (size_t i = 0; i < f.params().size(); ++i) {
      ir::Buffer b = f.buffer_of(f.params()[i]);
      if (!b.defined() || !ir::stores_to(f.body(), b)) continue;
      ++outputs;
      double rtol = runtime::default_rtol(b.dtype());
      EXPECT_TRUE(runtime::matches_reference(got[i], want[i], rtol))
          << "output " << b.name() << ": max_scaled_error " << runtime::max_scaled_error(got[i], want[i]) << " > "
          << rtol << " (max_rel_error " << runtime::max_rel_error(got[i], want[i]) << ")\n"
          << fn.source();
    }
    EXPECT_GT(outputs, 0) << "the kernel writes no parameter";
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, GpuKernelTest, ::testing::ValuesIn(kernel_names()),
                         [](const auto &info) { return info.param; });



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
