//===- tests/analysis/ThreadBindingsTest.cpp - Nested loops on one axis ----===//
//
// A loop bound to threadIdx.x inside another threadIdx.x loop is the same
// thread on the GPU. dlight's cooperative fetch (a copy) runs correctly as a
// loop on the CPU; a body that accumulates, depends on the thread or uses a
// thread-local buffer does not, and the CPU executors refuse it by name.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tessera/analysis/ThreadBindings.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"

namespace tessera::analysis {
namespace {

/// A 4 x 64 array's rows through shared memory, fetched by dlight's nested
/// threadIdx.x loop; thread tx of block bx then reads an element another
/// thread fetched. `fetch` is the statement in the fetch block.
std::string cooperative_fetch(const std::string &fetch, const std::string &extra_alloc = "") {
  return R"(from tvm.script import tir as T

@T.prim_func
def fetch(A: T.Buffer((4, 64), "float32"), C: T.Buffer((4, 16), "float32")) -> None:
    T.func_attr({"tir.is_scheduled": True})
    # with T.block("root"):
    A_shared = T.alloc_buffer((4, 64), scope="shared")
)" + extra_alloc + R"(    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            for ax0 in range(4):
                for ax1 in T.thread_binding(16, thread="threadIdx.x"):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(4, bx)
                        v1 = T.axis.spatial(64, ax0 * 16 + ax1)
                        T.reads(A[v0, v1])
                        T.writes(A_shared[v0, v1])
                        )" + fetch + R"(
            with T.block("C"):
                v0, v1 = T.axis.remap("SS", [bx, tx])
                T.reads(A_shared[v0, 63 - v1 * 4])
                T.writes(C[v0, v1])
                C[v0, v1] = A_shared[v0, 63 - v1 * 4] * T.float32(2)
)";
}

TEST(NestedThreadBinding, ACooperativeCopyRunsAsTheKernelDoes) {
  ir::PrimFunc f = script::parse_func(cooperative_fetch("A_shared[v0, v1] = A[v0, v1]"), "fetch.py");
  EXPECT_EQ(nested_thread_binding_refusal(f), std::nullopt);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 5);
  runtime::interpret(f, args);
  for (int64_t b = 0; b < 4; ++b)
    for (int64_t t = 0; t < 16; ++t)
      EXPECT_EQ(args[1].get(b * 16 + t), 2 * args[0].get(b * 64 + 63 - t * 4)) << b << ", " << t;
}

TEST(NestedThreadBinding, ABodyThatDependsOnTheThreadIsRefusedByName) {
  ir::PrimFunc f =
      script::parse_func(cooperative_fetch("A_shared[v0, v1] = A[v0, v1] + T.Cast(\"float32\", tx)"), "fetch.py");
  std::optional<std::string> why = nested_thread_binding_refusal(f);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("loop 'ax1' is bound to threadIdx.x inside loop 'tx'"), std::string::npos) << *why;
  EXPECT_NE(why->find("it uses 'tx', which differs between threads"), std::string::npos) << *why;
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 5);
  try {
    runtime::interpret(f, args);
    FAIL() << "interpreted a nest that a serial run gets wrong";
  } catch (const runtime::InterpretError &e) {
    EXPECT_NE(std::string(e.what()).find("cannot run function 'fetch' on the CPU: loop 'ax1'"), std::string::npos)
        << e.what();
  }
}

TEST(NestedThreadBinding, ABodyThatUsesAThreadLocalBufferIsRefused) {
  ir::PrimFunc f = script::parse_func(
      cooperative_fetch("A_shared[v0, v1] = A[v0, v1] + A_local[0]",
                        "    A_local = T.alloc_buffer((1,), scope=\"local\")\n"),
      "fetch.py");
  std::optional<std::string> why = nested_thread_binding_refusal(f);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("it uses 'A_local', a local buffer (each thread has its own)"), std::string::npos) << *why;
}

TEST(NestedThreadBinding, ABufferTheBodyAllocatesItselfIsItsOwn) {
  // A local staging buffer allocated in the fetch block: written and read
  // within one iteration, like a register.
  const std::string pad(24, ' ');
  ir::PrimFunc f = script::parse_func(
      cooperative_fetch("stage = T.alloc_buffer((1,), scope=\"local\")\n" + pad + "stage[0] = A[v0, v1]\n" + pad +
                        "A_shared[v0, v1] = stage[0]"),
      "fetch.py");
  EXPECT_EQ(nested_thread_binding_refusal(f), std::nullopt);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 5);
  runtime::interpret(f, args);
  EXPECT_EQ(args[1].get(17), 2 * args[0].get(64 + 63 - 4));
}

TEST(NestedThreadBinding, AnAccumulationIsRefused) {
  // On the GPU every B[tx] ends at 1 (tx2 = tx); as loops at 4.
  const char *text = R"(from tvm.script import tir as T

@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    T.func_attr({"tir.is_scheduled": True})
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(4, thread="threadIdx.x"):
            with T.block("init"):
                v = T.axis.spatial(4, tx)
                B[v] = T.float32(0)
            for tx2 in T.thread_binding(4, thread="threadIdx.x"):
                with T.block("acc"):
                    v = T.axis.spatial(4, tx2)
                    B[v] = B[v] + T.float32(1)
)";
  ir::PrimFunc f = script::parse_func(text, "acc.py");
  std::optional<std::string> why = nested_thread_binding_refusal(f);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("loop 'tx2' is bound to threadIdx.x inside loop 'tx'"), std::string::npos) << *why;
  EXPECT_NE(why->find("it reads 'B', which it also writes"), std::string::npos) << *why;
  EXPECT_THROW(runtime::Interpreter{f}, runtime::InterpretError);
}

TEST(NestedThreadBinding, SiblingLoopsOnOneAxisAndANestedBlockCopyRun) {
  const char *text = R"(from tvm.script import tir as T

@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for bx2 in T.thread_binding(8, thread="blockIdx.x"):
            with T.block("B"):
                v = T.axis.spatial(8, bx2)
                B[v] = A[v] * T.float32(3)
    for i in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("C0"):
            v = T.axis.spatial(8, i)
            C[v] = B[v]
    for i in T.thread_binding(8, thread="threadIdx.x"):
        with T.block("C1"):
            v = T.axis.spatial(8, i)
            C[v] = C[v] + T.float32(1)
)";
  ir::PrimFunc f = script::parse_func(text, "siblings.py");
  EXPECT_EQ(nested_thread_binding_refusal(f), std::nullopt);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 2);
  runtime::interpret(f, args);
  for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(args[2].get(i), float(args[0].get(i) * 3) + 1.0f) << i;
}

}  // namespace
}  // namespace tessera::analysis
