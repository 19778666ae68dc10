//===- tests/runtime/BackendTest.cpp - One interface over three executors ---===//
//
// runtime/Backend.h: the names, the refusal of an unknown one and of a
// backend that cannot run here (with the reason), the interpreter and the
// LLVM JIT giving the same bits through it, timing, and the JIT's refusal of
// warp-level statements at build time.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/Backend.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/script/Parser.h"
#include "tessera/support/Error.h"

namespace tessera::runtime {
namespace {

const char *kRowSoftmax = R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 96), "float32")
    B = T.match_buffer(b, (n, 96), "float32")
    M = T.alloc_buffer((n,), "float32")
    S = T.alloc_buffer((n,), "float32")
    for i, k in T.grid(n, 96):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.min_value("float32")
            M[vi] = T.max(M[vi], A[vi, vk])
    for i, k in T.grid(n, 96):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + T.exp(A[vi, vk] - M[vi])
    for i, k in T.grid(n, 96):
        with T.block("norm"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = T.exp(A[vi, vk] - M[vi]) / S[vi]
)";

TEST(Backend, NamesAndRefusals) {
  EXPECT_EQ(backend_names(), (std::vector<std::string>{"interpreter", "llvm", "cuda"}));
  EXPECT_EQ(make_backend("cpu")->name(), "interpreter");
  try {
    make_backend("tpu");
    FAIL() << "made a tpu backend";
  } catch (const UserError &e) {
    EXPECT_STREQ(e.what(), "unknown backend 'tpu' (backends: interpreter, llvm, cuda)");
  }
  EXPECT_EQ(make_backend("interpreter")->unavailable(), "");
  EXPECT_EQ(make_backend("llvm")->unavailable().empty(), llvm_jit_available());
  // Without a device the cuda backend says why, and refuses to build.
  std::unique_ptr<Backend> cuda = make_backend("cuda");
  if (driver_status() != DriverStatus::Ok) {
    EXPECT_NE(cuda->unavailable().find("no CUDA device"), std::string::npos) << cuda->unavailable();
    EXPECT_THROW(cuda->build(script::parse_func(kRowSoftmax)), UserError);
  }
  EXPECT_NE(make_backend("cuda", {.device = 99})->unavailable(), "");
}

TEST(Backend, InterpreterAndLlvmGiveTheSameBitsAndTimes) {
  if (!llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  ir::PrimFunc f = script::parse_func(kRowSoftmax);
  std::vector<NDArray> a = make_random_args(f, {{"n", 37}}, 4), b = a;
  std::unique_ptr<Executable> interp = make_backend("interpreter")->build(f);
  std::unique_ptr<Executable> jit = make_backend("llvm")->build(f);
  EXPECT_EQ(interp->backend(), "interpreter");
  EXPECT_EQ(jit->backend(), "llvm");
  interp->run(a);
  jit->run(b);
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].nbytes(), b[i].nbytes());
    EXPECT_EQ(std::memcmp(a[i].data(), b[i].data(), a[i].nbytes()), 0) << "argument " << i;
  }
  TimingResult t = jit->time(b, {.measure_ms = 5, .min_reps = 3, .max_reps = 20});
  EXPECT_GE(t.repetitions, 3);
  EXPECT_LE(t.repetitions, 20);
  EXPECT_EQ(int(t.samples_ms.size()), t.repetitions);
  EXPECT_GT(t.median_ms, 0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_LE(t.median_ms, t.max_ms);
}

TEST(Backend, BothCpuBackendsRunAsynchronousStatements) {
  if (!llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("E"):
            v = T.axis.spatial(4, i)
            T.cp_async_commit_group()
            A[v] = T.float32(2)
)");
  for (const char *name : {"interpreter", "llvm"}) {
    std::vector<NDArray> args = make_random_args(f, {}, 1);
    make_backend(name)->build(f)->run(args);  // the JIT through the interpreter's code for the statement
    EXPECT_EQ(args[0].get(3), 2.0) << name;
  }
}

}  // namespace
}  // namespace tessera::runtime
