//===- tests/codegen/CudaFunctionTest.cpp - PrimFunc to cubin (nvrtc) -------===//
//
// Label `nvrtc`: runtime::CudaFunction builds without a device (lower,
// codegen, NVRTC), evaluates symbolic launch extents from the arguments, and
// rejects arguments that do not fit the function before anything reaches a
// device.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "Kernels.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/Interpreter.h"

using namespace tessera;
using tessera::test::load_kernel;

namespace {

std::string error_of(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const UserError &e) {
    return e.what();
  }
  return "";
}

TEST(CudaFunction, BuildsWithoutADevice) {
  runtime::CudaFunction fn = runtime::CudaFunction::build(load_kernel("matmul_tail_f32"), {.arch = "sm_80"});
  EXPECT_EQ(fn.arch(), "sm_80");
  EXPECT_EQ(fn.kernel_name(), "main_kernel");
  EXPECT_NE(fn.source().find("extern \"C\" __global__"), std::string::npos);
  EXPECT_FALSE(fn.compiled().cubin.empty());
  ASSERT_NE(fn.compiled().find_kernel("main_kernel"), nullptr);
  EXPECT_EQ(fn.compiled().find_kernel("main_kernel")->shared_bytes, 2 * 64 * 16 * 4);
}

TEST(CudaFunction, DefaultArchIsTheDevicesOrSm90) {
  runtime::CudaFunction fn = runtime::CudaFunction::build(load_kernel("symbolic_elementwise"));
  if (runtime::driver_status() == runtime::DriverStatus::Ok)
    EXPECT_EQ(fn.arch(), runtime::query_device(0).arch());
  else
    EXPECT_EQ(fn.arch(), "sm_90");
}

TEST(CudaFunction, BuildsForSeveralArchsInParallel) {
  auto fns = runtime::CudaFunction::build_for_archs(load_kernel("gemv"), {"sm_80", "sm_90"});
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].arch(), "sm_80");
  EXPECT_EQ(fns[1].arch(), "sm_90");
  EXPECT_NE(fns[0].compiled().cubin, fns[1].compiled().cubin);
}

TEST(CudaFunction, MalformedArchIsAUserError) {
  EXPECT_NE(error_of([] { runtime::CudaFunction::build(load_kernel("gemv"), {.arch = "sm9"}); })
                .find("malformed architecture 'sm9'"),
            std::string::npos);
}

TEST(CudaFunction, LaunchExtentsFollowTheSymbolicShape) {
  ir::PrimFunc f = load_kernel("matmul_tail_f32");
  runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = "sm_90"});
  auto at = [&](int64_t m) { return fn.launch_dims(runtime::make_random_args(f, {{"m", m}}, 0)).at(0); };
  runtime::LaunchDims d = at(130);
  EXPECT_EQ(d.grid.str(), "(4, 3, 1)");
  EXPECT_EQ(d.block.str(), "(256, 1, 1)");
  EXPECT_TRUE(d.has_work);
  EXPECT_EQ(at(128).grid.str(), "(4, 2, 1)");
  EXPECT_FALSE(at(0).has_work);
}

TEST(CudaFunction, ArgumentsThatDoNotFitAreRejected) {
  ir::PrimFunc f = load_kernel("matmul_tail_f32");
  runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = "sm_90"});
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"m", 10}}, 0);

  auto few = args;
  few.pop_back();
  EXPECT_NE(error_of([&] { fn.launch_dims(few); }).find("takes 3 arguments, got 2"), std::string::npos);

  auto wrong_dtype = args;
  wrong_dtype[1] = runtime::NDArray(ir::DataType::float16(), {200, 200});
  EXPECT_NE(error_of([&] { fn.launch_dims(wrong_dtype); }).find("buffer 'B' has dtype float32"), std::string::npos);

  auto wrong_shape = args;
  wrong_shape[2] = runtime::NDArray(ir::DataType::float32(), {11, 200});
  std::string msg = error_of([&] { fn.launch_dims(wrong_shape); });
  EXPECT_NE(msg.find("shape mismatch for buffer 'C' dimension 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got 11"), std::string::npos) << msg;
}

TEST(CudaFunction, ShapeVariablesInsideDimensionsAreSolvedOrNamed) {
  // n appears only in `n * 2`: solved from the array (8 = 4 * 2), as the
  // interpreter does. With two unknowns in one dimension nothing determines them.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def twice(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n * 2,), "float32")
    for i in T.thread_binding(n * 2, thread="threadIdx.x"):
        with T.block("A"):
            vi = T.axis.spatial(n * 2, i)
            A[vi] = T.float32(1)
)",
                                      "twice.py");
  runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = "sm_90"});
  std::vector<runtime::NDArray> args{runtime::NDArray(ir::DataType::float32(), {8})};
  std::vector<runtime::LaunchDims> dims = fn.launch_dims(args);
  ASSERT_EQ(dims.size(), 1u);
  EXPECT_EQ(dims[0].block.x, 8u);
  ir::PrimFunc g = script::parse_func(R"(
@T.prim_func
def product(a: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n * m,), "float32")
    for i in T.thread_binding(n * m, thread="threadIdx.x"):
        with T.block("A"):
            vi = T.axis.spatial(n * m, i)
            A[vi] = T.float32(1)
)",
                                      "product.py");
  runtime::CudaFunction gn = runtime::CudaFunction::build(g, {.arch = "sm_90"});
  std::string msg = error_of([&] { gn.launch_dims(args); });
  EXPECT_NE(msg.find("which no argument determines"), std::string::npos) << msg;
}

TEST(CudaFunction, SeveralNestsBuildOneKernelEachWithWorkspace) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def rows(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n, 32), "float32")
    B = T.match_buffer(b, (n,), "float32")
    S = T.alloc_buffer((n,))
    for i in T.thread_binding(n, thread="blockIdx.x"):
        for k in range(32):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]
    for i in T.thread_binding(n, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = S[vi] * T.float32(2)
)",
                                      "rows.py");
  runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = "sm_90"});
  ASSERT_EQ(fn.kernels().size(), 2u);
  ASSERT_EQ(fn.workspace().size(), 1u);
  EXPECT_EQ(fn.kernels()[0].name, "rows_0_kernel");
  EXPECT_NE(fn.source().find("rows_1_kernel"), std::string::npos);
  auto dims = fn.launch_dims(runtime::make_random_args(f, {{"n", 100}}, 0));
  ASSERT_EQ(dims.size(), 2u);
  EXPECT_EQ(dims[0].grid.str(), "(100, 1, 1)");
  EXPECT_EQ(dims[1].block.str(), "(100, 1, 1)");
}

TEST(CudaFunction, RunWithoutADriverIsAnErrorNotACrash) {
  if (runtime::driver_status() == runtime::DriverStatus::Ok) GTEST_SKIP() << "a device is present";
  ir::PrimFunc f = load_kernel("symbolic_elementwise");
  runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = "sm_90"});
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"n", 100}}, 0);
  EXPECT_THROW(fn.run(args), runtime::RuntimeError);
}

}  // namespace
