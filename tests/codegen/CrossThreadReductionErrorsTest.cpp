//===- tests/codegen/CrossThreadReductionErrorsTest.cpp - What the pass refuses ===//
//
// Every LowerError of lower_cross_thread_reduction: the programs whose
// reduction it cannot make parallel safely, each refused with a message that
// names the block and the loop (the passing cases: CrossThreadReductionTest.cpp).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <string>

#include "tessera/lower/Lower.h"
#include "tessera/script/Parser.h"

using namespace tessera;

namespace {

/// The message of the LowerError that lowering `text` throws ("" if none).
std::string lower_error(const std::string &text) {
  try {
    lower::lower(script::parse_func(text));
  } catch (const lower::LowerError &e) {
    return e.what();
  }
  return "";
}

/// A warp reduction over k_1 (threadIdx.x) of block "B" with the given
/// update right-hand side and init statement.
std::string reduction_text(const std::string &update, const std::string &init = "B[vi] = T.float32(0)") {
  return R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            for k_0 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(64, k_0 * 32 + k_1)
                    with T.init():
                        )" + init + R"(
                    B[vi] = )" + update + "\n";
}

void expect_names_block_and_loop(const std::string &msg, const std::string &fragment,
                                 const std::string &loop = "k_1") {
  ASSERT_FALSE(msg.empty()) << "expected a LowerError";
  EXPECT_NE(msg.find("block 'B'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'" + loop + "'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
}

TEST(CrossThreadReductionErrors, UnknownCombiner) {
  expect_names_block_and_loop(lower_error(reduction_text("B[vi] - A[vi, vk]")), "cannot recognise the combiner");
  expect_names_block_and_loop(lower_error(reduction_text("B[vi] + B[vi] * A[vi, vk]")),
                              "cannot recognise the combiner");
  expect_names_block_and_loop(lower_error(reduction_text("B[vi] + A[vi, vk]", "B[0] = T.float32(0)")),
                              "its init must store");
}

TEST(CrossThreadReductionErrors, ReduceThreadLoopFeedsASpatialIterVar) {
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((32, 64), "float32"), B: T.Buffer((32,), "float32")):
    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
        for k_0 in range(2):
            with T.block("B"):
                vi = T.axis.spatial(32, k_1)
                vk = T.axis.reduce(64, k_0 * 32 + k_1)
                B[vi] = B[vi] + A[vi, vk]
)"),
                              "reduce loop 'k_1' also feeds spatial iter var 'vi'");
}

TEST(CrossThreadReductionErrors, ThreadsDivergeAroundTheReduction) {
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    for y in T.thread_binding(4, thread="threadIdx.y"):
        if y < 2:
            for k_1 in T.thread_binding(32, thread="threadIdx.x"):
                for k_0 in range(2):
                    with T.block("B"):
                        vi = T.axis.spatial(4, y)
                        vk = T.axis.reduce(64, k_0 * 32 + k_1)
                        B[vi] = B[vi] + A[vi, vk]
)"),
                              "`if y < 2` which differs between threads");
}

TEST(CrossThreadReductionErrors, SymbolicThreadExtent) {
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(a: T.handle, B: T.Buffer((4,), "float32")):
    n = T.int32()
    A = T.match_buffer(a, (4, n), "float32")
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_1 in T.thread_binding(n, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(n, k_1)
                B[vi] = B[vi] + A[vi, vk]
)"),
                              "symbolic extent n");
}

TEST(CrossThreadReductionErrors, SpatialLoopWhoseRangeDependsOnAReduceLoop) {
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
        for k_0 in range(2):
            for i in range(k_0 + 1):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(64, k_0 * 32 + k_1)
                    B[vi] = B[vi] + A[vi, vk]
)"),
                              "reduce loop 'k_0' also feeds the range of loop 'i'");
}

TEST(CrossThreadReductionErrors, CoupledTupleReduction) {
  // argmax: the index follows the value, so the two parts cannot be reduced
  // one after the other.
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), I: T.Buffer((4,), "int32"), V: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            for k_0 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(64, k_0 * 32 + k_1)
                    with T.init():
                        I[vi] = -1
                        V[vi] = T.float32(-3.4e38)
                    v_I: T.int32 = T.Select(V[vi] >= A[vi, vk], I[vi], vk)
                    v_V: T.float32 = T.Select(V[vi] >= A[vi, vk], V[vi], A[vi, vk])
                    I[vi] = v_I
                    V[vi] = v_V
)"),
                              "cannot recognise the combiner of `I[...]");
}

TEST(CrossThreadReductionErrors, InitNotAtTheFirstIteration) {
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(32, 31 - k_1)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
)"),
                              "its init would not run first");
}

TEST(CrossThreadReductionErrors, LoopsInsideASerialReduceLoopAroundOtherStatements) {
  // (The serial reduce loop itself may enclose other statements:
  // CrossThreadReductionTest.cpp.) A serial loop there that is not a reduce
  // loop would fold several outputs into one partial.
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4, 32), "float32")):
    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
        for k_0 in range(2):
            for j in range(4):
                with T.block("C"):
                    vj, vc = T.axis.remap("SS", [j, k_1])
                    C[vj, vc] = T.float32(1)
                with T.block("B"):
                    vj = T.axis.spatial(4, j)
                    vk = T.axis.reduce(64, k_0 * 32 + k_1)
                    B[vj] = B[vj] + A[vj, vk]
)"),
                              "'j' encloses other statements too and is not one of its reduce loops");
  // A threadIdx loop inside it would have to be left before combining.
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((2, 32), "float32")):
    for k_0 in range(2):
        for c in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("C"):
                vc0, vc1 = T.axis.remap("SS", [k_0, c])
                C[vc0, vc1] = T.float32(1)
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vk = T.axis.reduce(64, k_0 * 32 + k_1)
                B[0] = B[0] + A[0, vk]
)"),
                              "lies inside its reduce loop 'k_0', which encloses other statements too", "k_1");
  // A thread axis of the kernel (threadIdx.y, bound elsewhere) not around it:
  // its threads would have to be added around the loop and what else it holds.
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((2, 32), "float32"), D: T.Buffer((4,), "float32")):
    for y in T.thread_binding(4, thread="threadIdx.y"):
        with T.block("D"):
            vy = T.axis.spatial(4, y)
            D[vy] = T.float32(1)
    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
        for k_0 in range(2):
            with T.block("C"):
                vc0, vc1 = T.axis.remap("SS", [k_0, k_1])
                C[vc0, vc1] = T.float32(1)
            with T.block("B"):
                vk = T.axis.reduce(64, k_0 * 32 + k_1)
                B[0] = B[0] + A[0, vk]
)"),
                              "the kernel's threadIdx.y loop is not around its reduce loop 'k_0'");
}

TEST(CrossThreadReductionErrors, ThreadLoopEnclosesAReadOfTheHalfReducedOutput) {
  expect_names_block_and_loop(lower_error(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((32,), "float32")):
    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
        for k_0 in range(2):
            with T.block("B"):
                vk = T.axis.reduce(64, k_0 * 32 + k_1)
                B[0] = B[0] + A[0, vk]
        with T.block("C"):
            vc = T.axis.spatial(32, k_1)
            C[vc] = B[0]
)"),
                              "encloses other statements that access 'B'");
}

TEST(CrossThreadReductionErrors, ReductionAcrossThreadBlocks) {
  std::string msg = lower_error(R"(
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((1,), "float32")):
    for k in T.thread_binding(64, thread="blockIdx.x"):
        with T.block("B"):
            vk = T.axis.reduce(64, k)
            B[0] = B[0] + A[vk]
)");
  expect_names_block_and_loop(msg, "across thread blocks", "k");
}

}  // namespace
