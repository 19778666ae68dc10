//===- tests/codegen/SplitKernelsTest.cpp - One kernel per top-level nest ---===//
#include <gtest/gtest.h>

#include "tessera/lower/Lower.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::lower {
namespace {

ir::PrimFunc parse(const char *text) { return script::parse_func(text, "split.py"); }

TEST(SplitKernels, OneLaunchConfigurationStaysOneKernel) {
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for bx in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, bx * 128 + tx)
                B[vi] = A[vi]
)");
  KernelSplit s = split_kernels(f);
  ASSERT_EQ(s.kernels.size(), 1u);
  EXPECT_TRUE(s.kernels[0].same_as(f));
  EXPECT_TRUE(s.workspace.empty());
}

TEST(SplitKernels, GlobalIntermediateAndDifferentGridsMakeAKernelEach) {
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": True})
    S = T.alloc_buffer((64,))
    for i in T.thread_binding(64, thread="threadIdx.x"):
        for k in range(32):
            with T.block("S"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vk]
    B[0] = S[0]
    for i in T.thread_binding(63, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(63, i)
            B[vi + 1] = S[vi + 1] * T.float32(2)
)");
  KernelSplit s = split_kernels(f);
  ASSERT_EQ(s.kernels.size(), 3u);
  ASSERT_EQ(s.workspace.size(), 1u);
  EXPECT_EQ(s.workspace[0].name(), "S");
  EXPECT_EQ(s.kernels[0].name(), "main_0");
  // Every kernel takes A, B and the workspace S.
  for (const ir::PrimFunc &k : s.kernels) {
    ASSERT_EQ(k.params().size(), 3u);
    EXPECT_EQ(k.buffer_of(k.params()[2]).name(), "S");
    EXPECT_TRUE(k.root_block().allocs.empty());
  }
  // The statement outside any thread-bound loop runs as one thread.
  std::string middle = script::print(s.kernels[1]);
  EXPECT_NE(middle.find("T.thread_binding(1, thread=\"blockIdx.x\")"), std::string::npos) << middle;
  EXPECT_NE(middle.find("T.thread_binding(1, thread=\"threadIdx.x\")"), std::string::npos) << middle;
  for (const ir::PrimFunc &k : s.kernels) EXPECT_NO_THROW(lower(k)) << script::print(k);
}

TEST(SplitKernels, SharedMemoryUsedByTwoKernelsIsAnError) {
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    T.func_attr({"tir.noalias": True})
    S = T.alloc_buffer((64,), scope="shared")
    G = T.alloc_buffer((64,))
    for i in T.thread_binding(64, thread="threadIdx.x"):
        with T.block("S"):
            vi = T.axis.spatial(64, i)
            S[vi] = A[vi]
            G[vi] = A[vi]
    for i in T.thread_binding(32, thread="threadIdx.x"):
        with T.block("B"):
            vi = T.axis.spatial(32, i)
            B[vi] = S[vi] + G[vi]
)");
  try {
    split_kernels(f);
    FAIL() << "split a shared buffer across kernels";
  } catch (const LowerError &e) {
    EXPECT_NE(std::string(e.what()).find("the shared buffer 'S' is used by nests 0 and 1"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::lower
