//===- tests/codegen/CrossThreadReductionAroundTest.cpp - Reductions in loops ===//
//
// lower_cross_thread_reduction where the reduction's loops enclose other
// statements: a threadIdx loop around loads (dlight's rmsnorm), a serial
// reduce loop that also fills shared tiles (TVM's reduction with shared
// prefetches: the partial is set before the loop and combined after it),
// and a shared result other threads read after a barrier. Each lowered
// kernel runs in the SIMT emulator against the interpreter's float64
// reference (the other cases: CrossThreadReductionTest.cpp).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "CrossThreadReductionUtil.h"
#include "tessera/script/Parser.h"

using namespace tessera;
using tessera::test::count;
using tessera::test::cuda_of;
using tessera::test::expect_matches_interpreter;

namespace {

TEST(CrossThreadReductionNumeric, ThreadLoopAroundOtherStatementsStaysInPlace) {
  // dlight's rmsnorm: each thread loads and squares its 8 elements, then the
  // sum over the thread loop that encloses it all; the result is local, and
  // every thread reads it after the loop.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(data: T.Buffer((3, 512), "float16"), out: T.Buffer((3, 512), "float32")):
    T.func_attr({"tir.is_scheduled": 1})
    sq_local = T.alloc_buffer((3, 512), scope="local")
    red_local = T.alloc_buffer((3,), scope="local")
    for row in T.thread_binding(3, thread="blockIdx.x"):
        for ax2_0 in T.thread_binding(64, thread="threadIdx.x"):
            for ax0 in range(8):
                with T.block("sq"):
                    v1 = T.axis.spatial(3, row)
                    v2 = T.axis.spatial(512, ax2_0 * 8 + ax0)
                    sq_local[v1, v2] = T.Cast("float32", data[v1, v2]) * T.Cast("float32", data[v1, v2])
            for ax0 in range(8):
                with T.block("red"):
                    v1 = T.axis.spatial(3, row)
                    vk = T.axis.reduce(512, ax2_0 * 8 + ax0)
                    with T.init():
                        red_local[v1] = T.float32(0)
                    red_local[v1] = red_local[v1] + sq_local[v1, vk]
        for ax0_0 in T.thread_binding(64, thread="threadIdx.x"):
            for ax0_1 in range(8):
                with T.block("norm"):
                    v1 = T.axis.spatial(3, row)
                    v2 = T.axis.spatial(512, ax0_0 * 8 + ax0_1)
                    out[v1, v2] = T.Cast("float32", data[v1, v2]) * T.rsqrt(red_local[v1] * T.float32(0.001953125) + T.float32(1e-06))
)");
  expect_matches_interpreter(f);
}

TEST(CrossThreadReductionNumeric, SerialReduceLoopAroundSharedPrefetchesFoldsThenCombinesAfterIt) {
  // A matmul whose K is split over two threads (threadIdx.x) and serial
  // tiles k_0, and whose k_0 loop also fills the tiles' shared memory, with
  // threadIdx loops of its own (as TVM prints such a schedule). The
  // partial is set before k_0, folded inside it, combined after it.
  const std::string text = R"(
@T.prim_func
def main(A: T.Buffer((8, 96), "float32"), B: T.Buffer((8, 96), "float32"), C: T.Buffer((8, 8), "float32")):
    C_local = T.alloc_buffer((8, 8), scope="local")
    A_shared = T.alloc_buffer((8, 96), scope="shared")
    B_shared = T.alloc_buffer((8, 96), scope="shared")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for ty in T.thread_binding(16, thread="threadIdx.y"):
            for tx in T.thread_binding(2, thread="threadIdx.x"):
                for k_0 in range(4):
                    for f_0 in range(3):
                        for f_1 in T.thread_binding(16, thread="threadIdx.y"):
                            for f_2 in T.thread_binding(2, thread="threadIdx.x"):
                                with T.block("A_shared"):
                                    v0 = T.axis.spatial(8, bx // 2 * 4 + (f_0 * 32 + f_1 * 2 + f_2) // 24)
                                    v1 = T.axis.spatial(96, k_0 * 24 + (f_0 * 32 + f_1 * 2 + f_2) % 24)
                                    T.reads(A[v0, v1])
                                    T.writes(A_shared[v0, v1])
                                    A_shared[v0, v1] = A[v0, v1]
                    for f_0 in range(3):
                        for f_1 in T.thread_binding(16, thread="threadIdx.y"):
                            for f_2 in T.thread_binding(2, thread="threadIdx.x"):
                                with T.block("B_shared"):
                                    v0 = T.axis.spatial(8, bx % 2 * 4 + (f_0 * 32 + f_1 * 2 + f_2) // 24)
                                    v1 = T.axis.spatial(96, k_0 * 24 + (f_0 * 32 + f_1 * 2 + f_2) % 24)
                                    T.reads(B[v0, v1])
                                    T.writes(B_shared[v0, v1])
                                    B_shared[v0, v1] = B[v0, v1]
                    for k_1 in range(12):
                        with T.block("C"):
                            v0 = T.axis.spatial(8, bx // 2 * 4 + ty // 4)
                            v1 = T.axis.spatial(8, bx % 2 * 4 + ty % 4)
                            v2 = T.axis.reduce(96, k_0 * 24 + k_1 * 2 + tx)
                            T.reads(A_shared[v0, v2], B_shared[v1, v2])
                            T.writes(C_local[v0, v1])
                            with T.init():
                                C_local[v0, v1] = T.float32(0)
                            C_local[v0, v1] = C_local[v0, v1] + A_shared[v0, v2] * B_shared[v1, v2]
            with T.block("C_local"):
                v0 = T.axis.spatial(8, bx // 2 * 4 + ty // 4)
                v1 = T.axis.spatial(8, bx % 2 * 4 + ty % 4)
                T.reads(C_local[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_local[v0, v1]
)";
  ir::PrimFunc f = script::parse_func(text);
  const std::string cuda = cuda_of(f);
  // One shuffle, after the k_0 loop; the partial set before it.
  EXPECT_EQ(count(cuda, "__shfl_xor_sync"), 1) << cuda;
  const size_t init = cuda.find("C_local_partial[0] = 0.0f;"), loop = cuda.find("for (int k_0 = 0;"),
               shuffle = cuda.find("__shfl_xor_sync");
  ASSERT_NE(init, std::string::npos) << cuda;
  EXPECT_LT(init, loop) << cuda;
  EXPECT_GT(shuffle, cuda.rfind("__syncthreads();")) << cuda;
  expect_matches_interpreter(f);
  // A global output (one thread writes it), the loop's other block a
  // write of its own, the reduction over 32 lanes and two serial steps.
  expect_matches_interpreter(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4, 2, 32), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            for k_0 in range(2):
                with T.block("C"):
                    vi, vc0, vc1 = T.axis.remap("SSS", [i, k_0, k_1])
                    C[vi, vc0, vc1] = A[vi, vc0 * 32 + vc1] * T.float32(2)
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(64, k_0 * 32 + k_1)
                    with T.init():
                        B[vi] = T.float32(0.5)
                    B[vi] = B[vi] + A[vi, vk]
)"));
}

TEST(CrossThreadReductionNumeric, SharedResultReadByOtherThreadsAfterABarrier) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4, 64), "float32")):
    total = T.alloc_buffer((4,), scope="shared")
    for y in T.thread_binding(4, thread="threadIdx.y"):
        for k_1 in T.thread_binding(16, thread="threadIdx.x"):
            for k_0 in range(4):
                with T.block("total"):
                    vy = T.axis.spatial(4, y)
                    vk = T.axis.reduce(64, k_0 * 16 + k_1)
                    with T.init():
                        total[vy] = T.float32(0)
                    total[vy] = total[vy] + A[vy, vk]
    for y in T.thread_binding(4, thread="threadIdx.y"):
        for x in T.thread_binding(16, thread="threadIdx.x"):
            for j in range(4):
                with T.block("B"):
                    vy = T.axis.spatial(4, y)
                    vx = T.axis.spatial(64, j * 16 + x)
                    B[vy, vx] = A[vy, vx] - total[3 - vy]
)");
  EXPECT_EQ(count(cuda_of(f), "__syncthreads();"), 1) << cuda_of(f);
  expect_matches_interpreter(f);
}

}  // namespace
