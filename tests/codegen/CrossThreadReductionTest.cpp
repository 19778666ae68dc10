//===- tests/codegen/CrossThreadReductionTest.cpp - lower_cross_thread_reduction ===//
//
// Two kinds of test:
//   - shape: the CUDA C of a cross-thread reduction has the shuffles, barriers
//     and guards of its all-reduce path (warp, across warps, shared tree);
//   - numeric: the lowered kernel, run by the SIMT emulator (SimtEmulator.h:
//     one CPU thread per GPU thread, real barriers and shuffles, race checks),
//     matches the interpreter on the original program, for every path,
//     combiner and dtype, with and without init, masks and local outputs;
// (reductions in loops around other statements, and results other threads
// read: CrossThreadReductionAroundTest.cpp; the negative cases, every
// LowerError of the pass: CrossThreadReductionErrorsTest.cpp).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "CrossThreadReductionUtil.h"
#include "SimtEmulator.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Passes.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace fs = std::filesystem;
using namespace tessera;
using tessera::test::count;
using tessera::test::cuda_of;
using tessera::test::expect_matches_interpreter;

namespace {

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

/// B[i] = op over k of A[i, k]: blockIdx.x over row groups, `rows_per_block`
/// rows on `spatial_axis`, the k loop split into k_0 (serial) x k_1 (`threads`
/// on `reduce_axis`), masked by T.where when `threads` does not divide `cols`.
struct RowReduction {
  int rows = 4, cols = 64, threads = 32, rows_per_block = 1;
  std::string reduce_axis = "threadIdx.x", spatial_axis = "threadIdx.y";
  std::string dtype = "float32";
  /// The update's right-hand side and the init value ("" for none).
  std::string update = "B[vi] + A[vi, vk]", init = "T.float32(0)";

  std::string text() const {
    int serial = (cols + threads - 1) / threads;
    std::string k = "k_0 * " + std::to_string(threads) + " + k_1";
    std::ostringstream s;
    s << "@T.prim_func\n"
      << "def main(A: T.Buffer((" << rows << ", " << cols << "), \"" << dtype << "\"), B: T.Buffer((" << rows
      << ",), \"" << dtype << "\")):\n"
      << "    for i_0 in T.thread_binding(" << rows / rows_per_block << ", thread=\"blockIdx.x\"):\n"
      << "        for i_1 in T.thread_binding(" << rows_per_block << ", thread=\"" << spatial_axis << "\"):\n"
      << "            for k_1 in T.thread_binding(" << threads << ", thread=\"" << reduce_axis << "\"):\n"
      << "                for k_0 in range(" << serial << "):\n"
      << "                    with T.block(\"B\"):\n"
      << "                        vi = T.axis.spatial(" << rows << ", i_0 * " << rows_per_block << " + i_1)\n"
      << "                        vk = T.axis.reduce(" << cols << ", " << k << ")\n";
    if (serial * threads != cols) s << "                        T.where(" << k << " < " << cols << ")\n";
    if (!init.empty())
      s << "                        with T.init():\n"
        << "                            B[vi] = " << init << "\n";
    s << "                        B[vi] = " << update << "\n";
    return s.str();
  }
  ir::PrimFunc func() const { return script::parse_func(text()); }
};

ir::PrimFunc load_kernel(const std::string &name) {
  std::ifstream in(fs::path(TESSERA_TEST_DATA_DIR) / "codegen/kernels" / (name + ".py"));
  std::stringstream ss;
  ss << in.rdbuf();
  return script::parse_func(ss.str(), name + ".py");
}

//===----------------------------------------------------------------------===//
// Shape of the generated code
//===----------------------------------------------------------------------===//

TEST(CrossThreadReductionShape, WarpOf32IsFiveShufflesAndNoBarrier) {
  std::string cuda = cuda_of(RowReduction{.rows = 8, .cols = 100, .rows_per_block = 2}.func());
  EXPECT_EQ(count(cuda, "__shfl_xor_sync(0xffffffffU, B_partial[0], "), 5) << cuda;
  for (const char *step : {", 16, 32)", ", 8, 32)", ", 4, 32)", ", 2, 32)", ", 1, 32)"})
    EXPECT_EQ(count(cuda, step), 1) << step << "\n" << cuda;
  EXPECT_EQ(count(cuda, "__syncthreads();"), 0) << cuda;
  EXPECT_NE(cuda.find("if (k_0 * 32 + tx < 100) {\n      B_partial[0] = B_partial[0] + A["), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("if (tx == 0) {\n    B[bx * 2 + ty] = 0.0f + B_partial[0];"), std::string::npos) << cuda;
}

TEST(CrossThreadReductionShape, BlockSmallerThanAWarpMasksItsLanes) {
  std::string cuda = cuda_of(RowReduction{.cols = 40, .threads = 8}.func());
  EXPECT_EQ(count(cuda, "__shfl_xor_sync(0x000000ffU, B_partial[0], "), 3) << cuda;
  EXPECT_EQ(count(cuda, ", 8)"), 3) << cuda;
}

TEST(CrossThreadReductionShape, SeveralWarpsMeetInSharedMemoryOnce) {
  lower::LoweredFunc f = lower::lower(RowReduction{.rows = 4, .cols = 256, .threads = 128, .rows_per_block = 2}.func());
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_EQ(count(cuda, "__syncthreads();"), 1) << cuda;
  EXPECT_EQ(count(cuda, ", 32);"), 5) << cuda;
  EXPECT_EQ(count(cuda, ", 4);"), 2) << cuda;
  EXPECT_NE(cuda.find("__shared__ __align__(16) float B_warp_totals[8];"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("if (tx % 32 == 0) {\n    B_warp_totals[ty * 4 + tx / 32] = B_partial[0];"), std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("B_partial[0] = B_warp_totals[ty * 4 + tx % 4];"), std::string::npos) << cuda;
  // The pass registered its buffers: the register and the shared totals.
  int local = 0, shared = 0;
  for (const ir::Buffer &b : f.allocs) (b.scope() == "local" ? local : shared) += 1;
  EXPECT_EQ(local, 1);
  EXPECT_EQ(shared, 1);
}

TEST(CrossThreadReductionShape, WarpCountNotAPowerOfTwoPadsWithTheIdentity) {
  std::string cuda = cuda_of(RowReduction{.rows = 2, .cols = 96, .threads = 96, .init = ""}.func());
  EXPECT_NE(cuda.find("B_partial[0] = tx % 4 < 3 ? B_warp_totals[tx % 4] : 0.0f;"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("B[bx] = B[bx] + B_partial[0];"), std::string::npos) << cuda;
}

TEST(CrossThreadReductionShape, ReduceOverThreadIdxYIsASharedTree) {
  RowReduction r{.rows = 8, .cols = 64, .threads = 8, .rows_per_block = 4, .reduce_axis = "threadIdx.y",
                 .spatial_axis = "threadIdx.x"};
  std::string cuda = cuda_of(r.func());
  EXPECT_EQ(count(cuda, "__shfl_xor_sync"), 0) << cuda;
  // Publish, then steps of 4 and 2 publish too; the last step only feeds ty == 0.
  EXPECT_EQ(count(cuda, "__syncthreads();"), 3) << cuda;
  EXPECT_NE(cuda.find("B_shared_partials[ty * 4 + tx] = B_partial[0];\n  __syncthreads();\n  if (ty < 4) {"),
            std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("if (ty == 0) {\n    B_partial[0] = B_partial[0] + B_shared_partials[ty * 4 + tx + 4];\n  }"),
            std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("if (ty == 0) {\n    B[bx * 4 + tx] = 0.0f + B_partial[0];"), std::string::npos) << cuda;
}

TEST(CrossThreadReductionShape, NonPowerOfTwoFoldsTheTailFirst) {
  std::string cuda = cuda_of(RowReduction{.cols = 48, .threads = 24, .dtype = "int32", .init = "0"}.func());
  EXPECT_NE(cuda.find("if (tx < 8) {\n    B_partial[0] = B_partial[0] + B_shared_partials[tx + 16];"),
            std::string::npos)
      << cuda;
  EXPECT_EQ(count(cuda, "__syncthreads();"), 5) << cuda;
}

TEST(CrossThreadReductionShape, LocalResultIsWrittenByEveryThread) {
  std::string cuda = cuda_of(load_kernel("softmax_cross_thread"));
  EXPECT_EQ(count(cuda, "if (tx == 0)"), 0) << cuda;
  EXPECT_NE(cuda.find("  row_max[0] = fmaxf(-3.40282347e+38f, row_max_partial[0]);\n"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("  row_sum[0] = 0.0f + row_sum_partial[0];\n"), std::string::npos) << cuda;
  EXPECT_EQ(count(cuda, "__syncthreads();"), 2) << cuda;
}

//===----------------------------------------------------------------------===//
// Numeric: the emulated kernel against the interpreter
//===----------------------------------------------------------------------===//

TEST(CrossThreadReductionNumeric, WarpSumWithMaskedTail) {
  expect_matches_interpreter(RowReduction{.rows = 8, .cols = 100, .rows_per_block = 2}.func());
}

TEST(CrossThreadReductionNumeric, SubWarpXorWithoutInitInATinyBlock) {
  expect_matches_interpreter(
      RowReduction{.cols = 40, .threads = 8, .dtype = "int32", .update = "B[vi] ^ A[vi, vk]", .init = ""}.func());
}

TEST(CrossThreadReductionNumeric, HalfWarpMaxInFloat16) {
  expect_matches_interpreter(RowReduction{.rows = 8, .cols = 50, .threads = 16, .rows_per_block = 2,
                                          .dtype = "float16", .update = "T.max(B[vi], A[vi, vk])",
                                          .init = "T.min_value(\"float16\")"}
                                 .func());
}

TEST(CrossThreadReductionNumeric, AcrossWarps) {
  expect_matches_interpreter(RowReduction{.rows = 4, .cols = 200, .threads = 64, .rows_per_block = 2}.func());
  expect_matches_interpreter(RowReduction{.rows = 2, .cols = 96, .threads = 96, .init = ""}.func());
  expect_matches_interpreter(RowReduction{.rows = 2, .cols = 1000, .threads = 256, .dtype = "int32",
                                          .update = "T.min(B[vi], A[vi, vk])", .init = "T.max_value(\"int32\")"}
                                 .func());
}

TEST(CrossThreadReductionNumeric, SharedTreeOverX) {
  // 24 threads: not a power of two; 16 x 3 = 48 threads: not whole warps.
  expect_matches_interpreter(RowReduction{.rows = 4, .cols = 50, .threads = 24, .rows_per_block = 2,
                                          .dtype = "int32", .update = "B[vi] * A[vi, vk]", .init = ""}
                                 .func());
  expect_matches_interpreter(RowReduction{.rows = 6, .cols = 64, .threads = 16, .rows_per_block = 3,
                                          .dtype = "int32", .update = "B[vi] | A[vi, vk]", .init = "0"}
                                 .func());
}

TEST(CrossThreadReductionNumeric, SharedTreeOverY) {
  expect_matches_interpreter(RowReduction{.rows = 8, .cols = 60, .threads = 8, .rows_per_block = 4,
                                          .reduce_axis = "threadIdx.y", .spatial_axis = "threadIdx.x",
                                          .dtype = "int32", .update = "T.max(B[vi], A[vi, vk])",
                                          .init = "T.min_value(\"int32\")"}
                                 .func());
  expect_matches_interpreter(RowReduction{.rows = 6, .cols = 30, .threads = 5, .rows_per_block = 3,
                                          .reduce_axis = "threadIdx.z", .spatial_axis = "threadIdx.x",
                                          .dtype = "int32", .update = "B[vi] & A[vi, vk]", .init = "-1"}
                                 .func());
}

TEST(CrossThreadReductionNumeric, ReduceOverTwoThreadAxes) {
  expect_matches_interpreter(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 90), "int32"), B: T.Buffer((4,), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_2 in T.thread_binding(3, thread="threadIdx.y"):
            for k_1 in T.thread_binding(5, thread="threadIdx.x"):
                for k_0 in range(6):
                    with T.block("B"):
                        vi = T.axis.spatial(4, i)
                        vk = T.axis.reduce(90, k_0 * 15 + k_2 * 5 + k_1)
                        with T.init():
                            B[vi] = 3
                        B[vi] = B[vi] + A[vi, vk]
)"));
}

TEST(CrossThreadReductionNumeric, SoftmaxWithLocalResultsAcrossWarps) {
  // The reductions sit in an outer block "row" whose iter var vi they use.
  expect_matches_interpreter(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((3, 320), "float32"), B: T.Buffer((3, 320), "float32")):
    for i in T.thread_binding(3, thread="blockIdx.x"):
        with T.block("row"):
            vi = T.axis.spatial(3, i)
            row_max = T.alloc_buffer((1,), scope="local")
            row_sum = T.alloc_buffer((1,), scope="local")
            for k_1 in T.thread_binding(64, thread="threadIdx.x"):
                for k_0 in range(5):
                    with T.block("max"):
                        vk = T.axis.reduce(320, k_0 * 64 + k_1)
                        with T.init():
                            row_max[0] = T.min_value("float32")
                        row_max[0] = T.max(row_max[0], A[vi, vk])
            for k_1 in T.thread_binding(64, thread="threadIdx.x"):
                for k_0 in range(5):
                    with T.block("sum"):
                        vk = T.axis.reduce(320, k_0 * 64 + k_1)
                        with T.init():
                            row_sum[0] = T.float32(0)
                        row_sum[0] = row_sum[0] + T.exp(A[vi, vk] - row_max[0])
            for k_1 in T.thread_binding(64, thread="threadIdx.x"):
                for k_0 in range(5):
                    with T.block("norm"):
                        vk = T.axis.spatial(320, k_0 * 64 + k_1)
                        B[vi, vk] = T.exp(A[vi, vk] - row_max[0]) / row_sum[0]
)"));
}

TEST(CrossThreadReductionNumeric, RowsPastTheEndStillTakePartInTheShuffles) {
  // 10 rows, 4 per thread block on threadIdx.y: the rows past the end are
  // masked by a predicate that differs between threads of a block.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((10, 64), "float32"), B: T.Buffer((10,), "float32")):
    for i_0 in T.thread_binding(3, thread="blockIdx.x"):
        for i_1 in T.thread_binding(4, thread="threadIdx.y"):
            for k_1 in T.thread_binding(64, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(10, i_0 * 4 + i_1)
                    vk = T.axis.reduce(64, k_1)
                    T.where(i_0 * 4 + i_1 < 10)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
)");
  std::string cuda = cuda_of(f);
  EXPECT_NE(cuda.find("if (bx * 4 + ty < 10 && tx == 0) {"), std::string::npos) << cuda;
  expect_matches_interpreter(f);
}

TEST(CrossThreadReductionNumeric, RFactorWriteBack) {
  // The classic rfactor form: per-thread partials B_rf, then a write-back
  // block that reduces them across threadIdx.x.
  expect_matches_interpreter(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 256), "float32"), B: T.Buffer((4,), "float32")):
    B_rf = T.alloc_buffer((32, 4), scope="local")
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            for k_0 in range(8):
                with T.block("B_rf"):
                    vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                    with T.init():
                        B_rf[vk_1, vi] = T.float32(0)
                    B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 32 + vk_1]
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("B"):
                vk_1, vi = T.axis.remap("RS", [k_1, i])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + B_rf[vk_1, vi]
)"));
}

TEST(CrossThreadReductionNumeric, LocalResultOfASharedTreeIsBroadcast) {
  // Reduce over threadIdx.y (6 threads: a tree) into a local array indexed by
  // the column; every thread then reads its column's total.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((36, 8), "float32"), B: T.Buffer((36, 8), "float32")):
    col_sum = T.alloc_buffer((8,), scope="local")
    for j in T.thread_binding(8, thread="threadIdx.x"):
        for k_1 in T.thread_binding(6, thread="threadIdx.y"):
            for k_0 in range(6):
                with T.block("sum"):
                    vj = T.axis.spatial(8, j)
                    vk = T.axis.reduce(36, k_0 * 6 + k_1)
                    with T.init():
                        col_sum[vj] = T.float32(1)
                    col_sum[vj] = col_sum[vj] + A[vk, vj]
    for j in T.thread_binding(8, thread="threadIdx.x"):
        for k_1 in T.thread_binding(6, thread="threadIdx.y"):
            for k_0 in range(6):
                with T.block("scale"):
                    vj = T.axis.spatial(8, j)
                    vk = T.axis.spatial(36, k_0 * 6 + k_1)
                    B[vk, vj] = A[vk, vj] / col_sum[vj]
)");
  std::string cuda = cuda_of(f);
  // Each thread's local col_sum holds its own column (compact_buffers).
  EXPECT_NE(cuda.find("__syncthreads();\n  col_sum_partial[0] = col_sum_shared_partials[tx];\n  col_sum[0] = "),
            std::string::npos)
      << cuda;
  expect_matches_interpreter(f);
}

TEST(CrossThreadReductionNumeric, ReductionInASerialLoopSyncsBeforeReusingItsSharedTotals) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((6, 128), "float32"), B: T.Buffer((6,), "float32")):
    for i_0 in T.thread_binding(2, thread="blockIdx.x"):
        for i_1 in range(3):
            for k_1 in T.thread_binding(64, thread="threadIdx.x"):
                for k_0 in range(2):
                    with T.block("B"):
                        vi = T.axis.spatial(6, i_0 * 3 + i_1)
                        vk = T.axis.reduce(128, k_0 * 64 + k_1)
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]
)");
  std::string cuda = cuda_of(f);
  // The all-reduce's barrier, and insert_barriers' one before the next row
  // overwrites the totals that slow warps may still read.
  EXPECT_EQ(count(cuda, "__syncthreads();"), 2) << cuda;
  expect_matches_interpreter(f);
}

TEST(CrossThreadReductionNumeric, ThreadAxisBoundElsewhereFormsItsOwnGroups) {
  // threadIdx.y (4 threads) is used only by the first nest; the reduction runs
  // in all 4 y-threads, which must neither mix their partials nor each add
  // the total to C (no init).
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((2, 4, 32), "float32"), B: T.Buffer((2, 4, 32), "float32"), C: T.Buffer((2,), "float32")):
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for y in T.thread_binding(4, thread="threadIdx.y"):
            for x in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("copy"):
                    vi, vy, vx = T.axis.remap("SSS", [i, y, x])
                    B[vi, vy, vx] = A[vi, vy, vx] * T.float32(2)
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            for k_0 in range(4):
                with T.block("C"):
                    vi = T.axis.spatial(2, i)
                    vk = T.axis.reduce(128, k_0 * 32 + k_1)
                    C[vi] = C[vi] + A[vi, vk // 32, vk % 32]
)");
  std::string cuda = cuda_of(f);
  EXPECT_NE(cuda.find("if (tx == 0 && ty == 0) {"), std::string::npos) << cuda;
  expect_matches_interpreter(f);
}

TEST(CrossThreadReductionNumeric, ThreadLoopInsideTheSerialLoopIsHoisted) {
  expect_matches_interpreter(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((3, 96), "float32"), B: T.Buffer((3,), "float32")):
    for i in T.thread_binding(3, thread="blockIdx.x"):
        for k_0 in range(3):
            for k_1 in T.thread_binding(32, thread="threadIdx.x"):
                with T.block("B"):
                    vi = T.axis.spatial(3, i)
                    vk = T.axis.reduce(96, k_0 * 32 + k_1)
                    with T.init():
                        B[vi] = T.float32(0.5)
                    B[vi] = B[vi] + A[vi, vk]
)"));
}

TEST(CrossThreadReductionNumeric, SpatialLoopBetweenReduceLoopsIsOneAllReducePerIteration) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(4):
            for k_0 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(64, k_0 * 32 + k_1)
                    B[vi] = B[vi] + A[vi, vk]
)");
  std::string cuda = cuda_of(f);
  EXPECT_EQ(count(cuda, "__shfl_xor_sync"), 5) << cuda;  // in the loop over i
  EXPECT_NE(cuda.find("for (int i = 0; i < 4; ++i)"), std::string::npos) << cuda;
  expect_matches_interpreter(f);
}

TEST(CrossThreadReductionShape, SymbolicSpatialLoopInsideTheReduceLoopsMovesOutside) {
  // No constant extent to size an array of partials by: the loop over the
  // m outputs goes around the whole reduction, one partial and one
  // all-reduce per output.
  std::string cuda = cuda_of(script::parse_func(R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    m = T.int32()
    A = T.match_buffer(a, (m, 64), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for k_1 in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(m):
            for k_0 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(m, i)
                    vk = T.axis.reduce(64, k_0 * 32 + k_1)
                    B[vi] = B[vi] + A[vi, vk]
)"));
  EXPECT_EQ(cuda.find("B_partials"), std::string::npos) << cuda;
  size_t outer = cuda.find("for (int i = 0; i < m; ++i) {");
  ASSERT_NE(outer, std::string::npos) << cuda;
  EXPECT_LT(outer, cuda.find("B_partial[0] = 0.0f;")) << cuda;
  EXPECT_LT(outer, cuda.find("__shfl_xor_sync")) << cuda;
}

TEST(CrossThreadReductionNumeric, DecodeGemvWritesEightOutputsPerBlockAcrossWarps) {
  // The write-back dlight's decode-gemv rule prints (rfactor into a local
  // buffer; 256 threads, so shuffles, shared totals and a barrier; 8 outputs
  // per block by a spatial loop inside the reduce thread loop).
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(P: T.Buffer((256, 32), "float32"), C: T.Buffer((32,), "float32")):
    T.func_attr({"tir.is_scheduled": 1})
    P_local = T.alloc_buffer((256, 32), scope="local")
    for i_0 in T.thread_binding(4, thread="blockIdx.x"):
        for k in T.thread_binding(256, thread="threadIdx.x"):
            for i_1 in range(8):
                with T.block("P_local"):
                    vk = T.axis.spatial(256, k)
                    vi = T.axis.spatial(32, i_0 * 8 + i_1)
                    P_local[vk, vi] = P[vk, vi] * T.float32(2)
        for ax0 in range(1):
            for ax1 in T.thread_binding(256, thread="threadIdx.x"):
                for ax2 in range(8):
                    with T.block("C"):
                        vk = T.axis.reduce(256, ax1)
                        vi = T.axis.spatial(32, i_0 * 8 + ax0 * 8 + ax2)
                        with T.init():
                            C[vi] = T.float32(0)
                        C[vi] = C[vi] + P_local[vk, vi]
)");
  expect_matches_interpreter(f);
}

TEST(CrossThreadReductionNumeric, SpatialLoopInsideTheReduceLoopsKeepsAPartialPerOutput) {
  // A column sum as the reduction rule schedules it with a vector: 4
  // adjacent outputs per thread (innermost, vectorized), threadIdx.y
  // splitting the rows. The loop stays in place: an array of 4 partials,
  // one float4 load a step, then one all-reduce per output.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32,), "float32")):
    for s_t in T.thread_binding(8, thread="threadIdx.x"):
        for k_t in T.thread_binding(8, thread="threadIdx.y"):
            for k_o in range(8):
                for s_v in T.vectorized(4):
                    with T.block("B"):
                        vj = T.axis.spatial(32, s_t * 4 + s_v)
                        vk = T.axis.reduce(64, k_t * 8 + k_o)
                        with T.init():
                            B[vj] = T.float32(0)
                        B[vj] = B[vj] + A[vk, vj]
)");
  std::string cuda = cuda_of(f);
  EXPECT_NE(cuda.find("float B_partials[4];"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("*(float4*)A_vec = *(const float4*)(A + "), std::string::npos) << cuda;
  expect_matches_interpreter(f);
}

TEST(CrossThreadReductionNumeric, MaskedFirstIterationSkipsTheInit) {
  // vk = 0 is masked, so the serial program never runs the init and adds to
  // what C held before.
  expect_matches_interpreter(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 64), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for k_1 in T.thread_binding(32, thread="threadIdx.x"):
            for k_0 in range(2):
                with T.block("B"):
                    vi = T.axis.spatial(4, i)
                    vk = T.axis.reduce(64, k_0 * 32 + k_1)
                    T.where(k_0 * 32 + k_1 >= 8)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
)"));
}

TEST(CrossThreadReductionShape, SymbolicLengthRunsTheInitOnlyWhenSomethingIsReduced) {
  // As dlight prints a softmax row maximum: the row may be empty (m == 0),
  // and then the serial program leaves the output alone.
  std::string cuda = cuda_of(script::parse_func(R"(
@T.prim_func
def main(p_a: T.handle, p_b: T.handle):
    m = T.int64()
    A = T.match_buffer(p_a, (T.int64(8), m))
    B = T.match_buffer(p_b, (T.int64(8),))
    for i in T.thread_binding(T.int64(8), thread="blockIdx.x"):
        for k_1 in T.thread_binding(T.int64(256), thread="threadIdx.x"):
            for k_0 in T.serial((m + T.int64(255)) // T.int64(256)):
                with T.block("max"):
                    vi = T.axis.spatial(T.int64(8), i)
                    vk = T.axis.reduce(m, k_0 * T.int64(256) + k_1)
                    T.where(k_0 * T.int64(256) + k_1 < m)
                    with T.init():
                        B[vi] = T.float32(-3.4028234663852886e+38)
                    B[vi] = T.max(B[vi], A[vi, vk])
)"));
  EXPECT_NE(cuda.find("fmaxf(m >= 1LL ? -3.4028235e+38f : B[(int)(long long)bx], B_partial[0])"), std::string::npos)
      << cuda;
}

TEST(CrossThreadReductionNumeric, LayerNormStatisticsAreTwoAllReduces) {
  // TVM's layer-norm statistics: a tuple reduction through let-bound
  // temporaries into two shared buffers, read by every thread afterwards.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((T.int64(2), T.int64(640)), "float32"), B: T.Buffer((T.int64(2), T.int64(640)), "float32")):
    T.func_attr({"tir.is_scheduled": 1})
    S0 = T.alloc_buffer((T.int64(2),), scope="shared")
    S1 = T.alloc_buffer((T.int64(2),), scope="shared")
    for i in T.thread_binding(T.int64(2), thread="blockIdx.x"):
        for ax1_fused_1 in T.thread_binding(T.int64(128), thread="threadIdx.x"):
            for ax1_fused_0 in T.serial(T.int64(5)):
                with T.block("A_red_temp"):
                    v0 = T.axis.spatial(T.int64(2), i)
                    v1 = T.axis.reduce(T.int64(640), ax1_fused_0 * T.int64(128) + ax1_fused_1)
                    with T.init():
                        S0[v0] = T.float32(0)
                        S1[v0] = T.float32(0)
                    v_S0: T.float32 = S0[v0] + A[v0, v1]
                    v_S1: T.float32 = S1[v0] + A[v0, v1] * A[v0, v1]
                    S0[v0] = v_S0
                    S1[v0] = v_S1
        for ax1_1 in T.thread_binding(T.int64(128), thread="threadIdx.x"):
            for ax1_0 in T.serial(T.int64(5)):
                with T.block("norm"):
                    v0 = T.axis.spatial(T.int64(2), i)
                    v1 = T.axis.spatial(T.int64(640), ax1_0 * T.int64(128) + ax1_1)
                    B[v0, v1] = (A[v0, v1] - S0[v0] * T.float32(0.0015625)) * T.rsqrt(S1[v0] * T.float32(0.0015625) - S0[v0] * T.float32(0.0015625) * (S0[v0] * T.float32(0.0015625)) + T.float32(1e-05))
)");
  std::string cuda = cuda_of(f);
  EXPECT_EQ(count(cuda, "__shfl_xor_sync"), 2 * (5 + 2)) << cuda;  // 4 warps: 5 + 2 steps each
  expect_matches_interpreter(f);
}

/// The kernels of kernels/ that the emulator can run: blocks 0 and the last
/// one, against the interpreter on the whole program. Every element the
/// emulated blocks stored must match, and each block must store something.
class KernelEmulationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelEmulationTest, EmulatedBlocksMatchTheInterpreter) {
  ir::PrimFunc f = load_kernel(GetParam());
  std::vector<runtime::NDArray> actual = runtime::make_random_args(f, {}, 3);
  runtime::Reference expected = runtime::compute_reference(f, actual);
  std::vector<bool> outputs = ir::written_params(f);
  lower::LoweredFunc kernel = lower::lower(f);
  std::vector<runtime::NDArray *> args;
  for (runtime::NDArray &a : actual) args.push_back(&a);
  std::array<int64_t, 3> last{};
  for (int a = 0; a < 3; ++a)
    last[a] = kernel.launch.grid[a].defined() ? *ir::as_const_int(kernel.launch.grid[a]) - 1 : 0;
  for (const std::array<int64_t, 3> &block : {std::array<int64_t, 3>{0, 0, 0}, last}) {
    simt::WrittenMask written = simt::emulate(kernel, args, {block});
    int stored = 0;
    for (size_t i = 0; i < actual.size(); ++i) {
      stored += int(std::count(written[i].begin(), written[i].end(), 1));
      if (!outputs[i]) continue;
      runtime::OutputCheck c =
          runtime::check_output("parameter " + std::to_string(i), actual[i], expected.values[i], expected.variance[i],
                                &written[i]);
      ASSERT_TRUE(c.ok) << c.str();
    }
    EXPECT_GT(stored, 0) << "block (" << block[0] << ", " << block[1] << ", " << block[2] << ") stored nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelEmulationTest,
                         ::testing::Values("column_sum_threadidx_y", "reduce_max_warp", "row_reduce_cross_thread",
                                           "softmax_cross_thread", "row_reduce", "softmax", "transpose_shared",
                                           "vthread_matmul", "rmsnorm_thread_loop_around_loads",
                                           "layer_norm_tuple_reduction", "decode_gemv_rfactor_write_back"),
                         [](const auto &info) { return info.param; });

TEST(SimtEmulator, FindsTheRaceOfTheUnloweredReduction) {
  // Without lower_cross_thread_reduction, every thread updates B[vi].
  ir::PrimFunc f = RowReduction{.rows = 2, .cols = 64}.func();
  lower::LoweredFunc racy;
  racy.name = f.name();
  for (const ir::Var &p : f.params()) racy.params.push_back({p, f.buffer_of(p)});
  racy.body = f.body();
  racy.allocs = lower::collect_allocations(racy.body);
  racy.body = lower::insert_barriers(lower::simplify_division(lower::lower_blocks(racy.body)));
  racy = lower::flatten_buffers(lower::extract_launch_config(racy));
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 1);
  try {
    simt::emulate(racy, {&args[0], &args[1]});
    FAIL() << "expected a data race";
  } catch (const simt::EmulationError &e) {
    EXPECT_NE(std::string(e.what()).find("data race on B["), std::string::npos) << e.what();
  }
}

//===----------------------------------------------------------------------===//
// The shuffle intrinsic
//===----------------------------------------------------------------------===//

TEST(ShflXorIntrinsic, PrintsAndParsesBackAndTheInterpreterRejectsIt) {
  const char *text = R"(
@T.prim_func
def main(A: T.Buffer((4,), "float16")):
    for i in range(4):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            A[vi] = T.shfl_xor(T.uint32(4294967295), A[vi], 1, 32)
)";
  ir::PrimFunc f = script::parse_func(text);
  std::string printed = script::print(f);
  EXPECT_NE(printed.find("T.shfl_xor(T.uint32(4294967295), A[vi], 1, 32)"), std::string::npos) << printed;
  EXPECT_EQ(script::print(script::parse_func(printed)), printed);
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 1);
  try {
    runtime::interpret(f, args);
    FAIL() << "expected an InterpretError";
  } catch (const runtime::InterpretError &e) {
    EXPECT_NE(std::string(e.what()).find("'shfl_xor'"), std::string::npos) << e.what();
  }
}

}  // namespace
