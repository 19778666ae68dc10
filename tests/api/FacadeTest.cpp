//===- tests/api/FacadeTest.cpp - tessera/tessera.h as a program uses it ---===//
//
// The CPU target end to end through the facade: tune, run on host arrays and
// on DLPack tensors (in place: the output lands in the caller's memory),
// check against the float64 reference within its bound, save, load back, the
// same bits; the refusals (an empty kernel, wrong arguments, a damaged
// package, a CPU dynamic plan). The GPU target up to the cubin (NVRTC, no
// device): tune compiles, the kernel's plan is the winner's, saved and read
// back by the dispatch library alone.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "../support/ExpectError.h"
#include "../support/ScratchDir.h"
#include "tessera/dispatch/Package.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Verify.h"
#include "tessera/tessera.h"

namespace tessera {
namespace {

const char *kSoftmax = R"(# from tvm.script import tir as T

@T.prim_func
def softmax(var_A: T.handle, var_B: T.handle) -> None:
    T.func_attr({"tir.noalias": True})
    rows = T.int64()
    A = T.match_buffer(var_A, (rows, T.int64(128)), "float32")
    B = T.match_buffer(var_B, (rows, T.int64(128)), "float32")
    A_max = T.alloc_buffer((rows,), "float32")
    A_exp = T.alloc_buffer((rows, T.int64(128)), "float32")
    A_sum = T.alloc_buffer((rows,), "float32")
    for i, k in T.grid(rows, T.int64(128)):
        with T.block("max"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                A_max[v_i] = T.min_value("float32")
            A_max[v_i] = T.max(A_max[v_i], A[v_i, v_k])
    for i, j in T.grid(rows, T.int64(128)):
        with T.block("exp"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            A_exp[v_i, v_j] = T.exp(A[v_i, v_j] - A_max[v_i])
    for i, k in T.grid(rows, T.int64(128)):
        with T.block("sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                A_sum[v_i] = T.float32(0)
            A_sum[v_i] = A_sum[v_i] + A_exp[v_i, v_k]
    for i, j in T.grid(rows, T.int64(128)):
        with T.block("normalize"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = A_exp[v_i, v_j] / A_sum[v_i]
)";

/// B checked against the function's float64 reference on A.
void expect_verified(const ir::PrimFunc &f, std::vector<runtime::NDArray> &args) {
  std::vector<runtime::NDArray> inputs = args;
  runtime::Reference want = runtime::compute_reference(f, inputs);
  for (const runtime::OutputCheck &c : runtime::check_outputs(f, args, want)) EXPECT_TRUE(c.ok) << c.str();
}

DLTensor host_tensor(runtime::NDArray &a, std::vector<int64_t> &shape) {
  shape = a.shape();
  return DLTensor{a.data(), {kDLCPU, 0}, int(shape.size()), {kDLFloat, 32, 1}, shape.data(), nullptr, 0};
}

TEST(Facade, TargetsByName) {
  EXPECT_TRUE(Target::cpu().is_cpu());
  EXPECT_TRUE(Target::parse("cpu").is_cpu());
  EXPECT_EQ(Target::parse("h100").arch().name, "h100_sxm");
  EXPECT_EQ(Target::gpu("a100").str(), "a100_sxm4_80gb (sm_80)");
  EXPECT_ERROR(Target::cpu().arch(), "the CPU target has no GPU description");
  EXPECT_ERROR(Target::parse("v100"), "unknown GPU 'v100'");
  if (runtime::driver_status() != runtime::DriverStatus::Ok) {
    EXPECT_TRUE(Target::detect().is_cpu());
    Target t = Target::detect_gpu("a100");
    EXPECT_EQ(t.arch().name, "a100_sxm4_80gb");
    EXPECT_EQ(t.note(), "no CUDA device, scheduling for a100 (pass --arch)");
  }
}

TEST(Facade, CpuKernelRunsOnArraysAndTensorsSavesAndLoads) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without the LLVM JIT";
  const int64_t rows = 37;
  Kernel k = tune(kSoftmax, Target::cpu(), {.dims = {{"rows", rows}}}, "softmax.py");
  EXPECT_EQ(k.name(), "softmax");
  EXPECT_TRUE(k.target().is_cpu());
  EXPECT_TRUE(k.symbols().empty()) << "rows was bound";
  EXPECT_TRUE(k.cuda_source().empty());
  EXPECT_NE(k.script().find("def softmax"), std::string::npos);
  ASSERT_EQ(k.parameters().size(), 2u);
  EXPECT_EQ(k.parameters()[0].name, "A");
  EXPECT_EQ(k.parameters()[0].dtype, "float32");
  EXPECT_FALSE(k.parameters()[0].written);
  EXPECT_TRUE(k.parameters()[1].written);
  const Report &r = k.report();
  EXPECT_EQ(r.rule, "cpu");
  EXPECT_TRUE(r.measured);
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_EQ(r.ranked[0].status, "ok");
  EXPECT_GT(r.ranked[0].time_us, 0);
  EXPECT_NE(r.table().find("rank"), std::string::npos);

  ir::PrimFunc f = parse(kSoftmax).funcs.at(0);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"rows", rows}}, 5);
  k.run(args);
  expect_verified(f, args);

  // DLPack tensors: run in place, the output written into the caller's memory.
  std::vector<runtime::NDArray> again = runtime::make_random_args(f, {{"rows", rows}}, 5);
  std::vector<int64_t> sa, sb;
  DLTensor a = host_tensor(again[0], sa), b = host_tensor(again[1], sb);
  const uint8_t *where = again[1].data();
  k.run({&a, &b});
  EXPECT_EQ(again[1].data(), where);
  EXPECT_EQ(std::memcmp(again[1].data(), args[1].data(), args[1].nbytes()), 0) << "the same bits as on arrays";

  // Saved, loaded back: the same kernel, the same bits, the same report.
  const std::filesystem::path dir = test::scratch_dir("tessera_api_test");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "softmax.tsk").string();
  k.save(path);
  Kernel loaded = load(path);
  EXPECT_TRUE(loaded.target().is_cpu());
  EXPECT_EQ(loaded.script(), k.script());
  EXPECT_EQ(loaded.report().ranked.size(), r.ranked.size());
  std::vector<runtime::NDArray> third = runtime::make_random_args(f, {{"rows", rows}}, 5);
  loaded.run(third);
  EXPECT_EQ(std::memcmp(third[1].data(), args[1].data(), args[1].nbytes()), 0);
}

TEST(Facade, WrongArgumentsAndEmptyKernelsAreRefused) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without the LLVM JIT";
  Kernel k = tune(kSoftmax, Target::cpu(), {.dims = {{"rows", 8}}});
  std::vector<runtime::NDArray> one = {runtime::NDArray(ir::DataType::float32(), {8, 128})};
  EXPECT_ERROR(k.run(one), "'softmax' takes 2 arrays, not 1");
  std::vector<runtime::NDArray> typed = {runtime::NDArray(ir::DataType::float16(), {8, 128}),
                                         runtime::NDArray(ir::DataType::float32(), {8, 128})};
  EXPECT_ERROR(k.run(typed), "argument 0 ('A') of 'softmax' is float16; the kernel takes float32");
  std::vector<runtime::NDArray> shaped = {runtime::NDArray(ir::DataType::float32(), {9, 128}),
                                          runtime::NDArray(ir::DataType::float32(), {9, 128})};
  EXPECT_THROW(k.run(shaped), Error) << "rows is 8 in this kernel";
  EXPECT_ERROR(Kernel().report(), "an empty tessera::Kernel");
  EXPECT_ERROR(k.run(std::vector<uint64_t>{0x1000, 0x2000}, {}), "'softmax' is a CPU kernel: run it on arrays");
  EXPECT_ERROR(tune(kSoftmax, Target::cpu(), {.func = "nope"}, "softmax.py"), "softmax.py: no function named 'nope'");
  EXPECT_ERROR(tune("def broken(:\n", Target::cpu(), {}, "broken.py"), "broken.py:1:");
  EXPECT_ERROR(dynamic(parse(kSoftmax).funcs.at(0), Target::cpu(), {{"rows", {1, 64}}}),
               "tessera::dynamic plans GPU kernels");
  const std::filesystem::path dir = test::scratch_dir("tessera_api_test");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "damaged.tsk").string();
  std::ofstream(path) << "tessera-package 1 4\n{}";
  EXPECT_ERROR(load(path), "damaged.tsk");
}

TEST(Facade, GpuKernelCompilesAndItsPackageReadsBackWithoutTheCompiler) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  if (runtime::driver_status() == runtime::DriverStatus::Ok) GTEST_SKIP() << "compile-only test; a device is here";
  Kernel k = tune(kSoftmax, Target::gpu("h100"), {.dims = {{"rows", 300}}, .topk = 4});
  EXPECT_TRUE(k.target().is_gpu());
  const Report &r = k.report();
  EXPECT_EQ(r.rule, "general_reduction");
  EXPECT_FALSE(r.measured);
  EXPECT_NE(r.why_unmeasured.find("no CUDA device"), std::string::npos) << r.why_unmeasured;
  ASSERT_FALSE(r.ranked.empty());
  EXPECT_EQ(r.ranked[0].status, "ok");
  EXPECT_NE(k.cuda_source().find("__global__"), std::string::npos);
  // Running needs a device, and says so.
  ir::PrimFunc f = parse(kSoftmax).funcs.at(0);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"rows", 300}}, 1);
  EXPECT_THROW(k.run(args), Error);

  const std::filesystem::path dir = test::scratch_dir("tessera_api_test");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "softmax.tsk").string();
  k.save(path);
  dispatch::Package p = dispatch::load_package(path);
  ASSERT_EQ(p.kind, "cuda");
  ASSERT_TRUE(p.plan);
  EXPECT_EQ(p.plan->target, "sm_90");
  EXPECT_TRUE(p.plan->symbols.empty());
  ASSERT_EQ(p.plan->kernels.size(), 1u);
  for (const dispatch::KernelStep &st : p.plan->kernels[0].steps) {
    ASSERT_GE(st.cubin.size(), 4u);
    EXPECT_EQ(std::memcmp(st.cubin.data(), "\x7f" "ELF", 4), 0) << st.entry;
    EXPECT_NE(k.cuda_source().find(st.entry), std::string::npos) << st.entry;
  }
  ASSERT_EQ(p.plan->arguments.size(), 2u);
  EXPECT_FALSE(p.plan->arguments[0].written);
  EXPECT_TRUE(p.plan->arguments[1].written);
  dispatch::KernelLaunch l = p.plan->select(nullptr);
  EXPECT_TRUE(l.has_work());
  // The facade reads it back as a GPU kernel with its report.
  Kernel loaded = load(path);
  EXPECT_TRUE(loaded.target().is_gpu());
  EXPECT_EQ(loaded.target().arch().name, "h100_sxm");
  EXPECT_EQ(loaded.cuda_source(), k.cuda_source());
  EXPECT_EQ(loaded.report().rule, "general_reduction");
}

TEST(Facade, ASymbolicGpuKernelServesTheSizesOfItsArguments) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  Kernel k = tune(kSoftmax, Target::gpu("a100"), {.topk = 2, .measure = false});
  EXPECT_EQ(k.symbols(), (std::vector<std::string>{"rows"}));
  const std::filesystem::path dir = test::scratch_dir("tessera_api_test");
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "softmax.tsk").string();
  k.save(path);
  dispatch::Package p = dispatch::load_package(path);
  for (int64_t rows : {1, 37, 5000}) {
    EXPECT_EQ(p.plan->sizes_of({{rows, 128}, {rows, 128}}), (std::vector<int64_t>{rows}));
    EXPECT_TRUE(p.plan->select(&rows).has_work());
  }
  EXPECT_ERROR(p.plan->sizes_of({{4, 128}, {5, 128}}), "has shape (5, 128); the others make it (4, 128)");
}

TEST(Facade, ADynamicKernelSavesItsCells) {
  if (!runtime::nvrtc_available()) GTEST_SKIP() << "NVRTC is not available";
  const std::filesystem::path dir = test::scratch_dir("tessera_api_test");
  ir::PrimFunc f = parse(kSoftmax).funcs.at(0);
  DynamicKernel d = dynamic(f, Target::gpu("h100"), {{"rows", {1, 4096, {1}}}},
                            {.max_kernels = 3, .kernel_cache = (dir / "kernels").string()});
  EXPECT_FALSE(d.warm());
  EXPECT_EQ(d.counters().nvrtc_compiles, d.counters().kernels);
  EXPECT_EQ(d.symbols(), (std::vector<std::string>{"rows"}));
  EXPECT_NE(d.plan().find("\"cells\""), std::string::npos);
  const std::string path = (dir / "softmax_dynamic.tsk").string();
  d.save(path);
  dispatch::Package p = dispatch::load_package(path);
  ASSERT_TRUE(p.plan);
  EXPECT_GT(p.plan->cell_count(), 10u);
  EXPECT_LE(p.plan->kernels.size(), 3u);
  // Every size selects the kernel the dynamic kernel selects.
  for (int64_t rows : {1, 2, 3, 17, 100, 1000, 4096}) EXPECT_EQ(p.plan->select(&rows).kernel, d.kernel_for({rows})) << rows;
  EXPECT_ERROR(d.kernel_for({5000}), "rows = 5000 is outside the planned range 1:4096");
  EXPECT_ERROR(d.kernel_for({1, 2}), "'softmax' has 1 symbolic sizes, not 2");
  // A second start reads everything back.
  DynamicKernel warm = dynamic(f, Target::gpu("h100"), {{"rows", {1, 4096, {1}}}},
                               {.max_kernels = 3, .kernel_cache = (dir / "kernels").string()});
  EXPECT_TRUE(warm.warm());
  EXPECT_EQ(warm.counters().nvrtc_compiles, 0);
  EXPECT_ERROR(dynamic(f, Target::gpu("h100"), {}), "has the symbolic size 'rows' but no range for it");
  EXPECT_ERROR(dynamic(f, Target::gpu("h100"), {{"rows", {1, 8}}, {"cols", {1, 8}}}), "has no symbolic size 'cols'");
  EXPECT_ERROR(d.measure(100), "no CUDA device");
}

}  // namespace
}  // namespace tessera
