//===- InterpreterScriptTest.cpp - Interpreting parsed TVMScript -----------===//
//
// The same checks as the builder-based tests, on programs written the way
// users and schedules write them: a scheduled matmul (thread bindings, a
// T.where tail, a shared-scope stage allocated inside a block, a split
// reduction) must give the unscheduled answer; the bundled softmax example
// binds its symbolic row count from the arrays.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>

#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"

#include "IRTestUtil.h"

namespace tessera {
namespace {

using runtime::NDArray;

const char *kMatmul = R"(
@T.prim_func
def main(A: T.Buffer((60, 64), "float32"), B: T.Buffer((64, 48), "float32"), C: T.Buffer((60, 48), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, j, k in T.grid(60, 48, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

// Tiles of 16 x 16 (60 rows: the last tile is guarded by T.where), the row
// panel of A staged in shared memory per tile, k split as k0 * 8 + k1.
const char *kMatmulScheduled = R"(
@T.prim_func
def main(A: T.Buffer((60, 64), "float32"), B: T.Buffer((64, 48), "float32"), C: T.Buffer((60, 48), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0 in T.thread_binding(4, thread="blockIdx.x"):
        for j0 in T.thread_binding(3, thread="blockIdx.y"):
            with T.block("tile"):
                vb = T.axis.spatial(4, i0)
                T.reads(A[vb * 16:vb * 16 + 16, 0:64], B[0:64, 0:48])
                T.writes(C[vb * 16:vb * 16 + 16, 0:48])
                A_shared = T.alloc_buffer((16, 64), scope="shared")
                for t in T.thread_binding(16, thread="threadIdx.x"):
                    for ax1 in range(64):
                        with T.block("A_shared"):
                            v0 = T.axis.spatial(16, t)
                            v1 = T.axis.spatial(64, ax1)
                            T.where(vb * 16 + t < 60)
                            A_shared[v0, v1] = A[vb * 16 + v0, v1]
                for i1 in T.thread_binding(16, thread="threadIdx.y"):
                    for j1 in T.thread_binding(16, thread="threadIdx.x"):
                        for k0 in range(8):
                            for k1 in T.unroll(8):
                                with T.block("C"):
                                    vi = T.axis.spatial(60, vb * 16 + i1)
                                    vj = T.axis.spatial(48, j0 * 16 + j1)
                                    vk = T.axis.reduce(64, k0 * 8 + k1)
                                    T.where(vb * 16 + i1 < 60)
                                    with T.init():
                                        C[vi, vj] = T.float32(0)
                                    C[vi, vj] = C[vi, vj] + A_shared[vi - vb * 16, vk] * B[vk, vj]
)";

TEST(Script, ScheduledMatmulMatchesReference) {
  ir::PrimFunc ref = script::parse_func(kMatmul);
  ir::PrimFunc sched = script::parse_func(kMatmulScheduled);
  // Both draw the same values: they take the same parameters.
  test::RandomRuns runs = test::run_on_same_random_args(ref, sched, {}, 21);
  const std::vector<NDArray> &expect = runs.a, &args = runs.b;
  // Same products summed in the same order: bit-identical.
  for (int64_t i = 0; i < args[2].numel(); ++i) ASSERT_EQ(args[2].get(i), expect[2].get(i)) << i;
  EXPECT_EQ(runtime::max_rel_error(args[2], expect[2]), 0.0);
}

TEST(Script, SoftmaxExampleWithSymbolicRows) {
  ir::Module m = script::parse_file(std::string(TESSERA_TEST_DATA_DIR) + "/../examples/softmax.py");
  ASSERT_EQ(m.funcs.size(), 1u);
  ir::PrimFunc f = m.funcs[0];
  runtime::Interpreter interp(f);
  for (int64_t rows : {1, 5}) {
    auto args = runtime::make_random_args(f, {{"rows", rows}}, 3);
    ASSERT_EQ(args[0].shape(), (std::vector<int64_t>{rows, 256}));
    interp.run({&args[0], &args[1]});
    for (int64_t r = 0; r < rows; ++r) {
      double mx = -INFINITY, sum = 0;
      for (int c = 0; c < 256; ++c) mx = std::max(mx, args[0].get(r * 256 + c));
      for (int c = 0; c < 256; ++c) sum += std::exp(args[0].get(r * 256 + c) - mx);
      for (int c = 0; c < 256; ++c)
        ASSERT_NEAR(args[1].get(r * 256 + c), std::exp(args[0].get(r * 256 + c) - mx) / sum, 1e-6);
    }
  }
}

TEST(Script, IntegerSemantics) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4,), "int8"), B: T.Buffer((4,), "int32"), C: T.Buffer((4,), "int32")):
    for i in range(4):
        with T.block("B"):
            vi = T.axis.spatial(4, i)
            A[vi] = A[vi] + T.int8(100)
            B[vi] = (vi - 2) // 2
            C[vi] = T.truncdiv(vi - 2, 2)
)");
  std::vector<NDArray> args{NDArray(ir::DataType::int_(8), {4}), NDArray(ir::DataType::int32(), {4}),
                            NDArray(ir::DataType::int32(), {4})};
  for (int i = 0; i < 4; ++i) args[0].set_int(i, 30 * i);
  runtime::interpret(f, args);
  const int64_t wrapped[] = {100, -126, -96, -66};  // 30 * i + 100 wrapped to int8
  const int64_t floor_div[] = {-1, -1, 0, 0}, trunc_div[] = {-1, 0, 0, 0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(args[0].get_int(i), wrapped[i]);
    EXPECT_EQ(args[1].get_int(i), floor_div[i]);
    EXPECT_EQ(args[2].get_int(i), trunc_div[i]);
  }
}

TEST(Script, ShapeVariablesInsideDimensionsAreSolved) {
  // TVM's `(n * 32,)` and `[m, x * 8]`: n and x appear only inside
  // expressions, and are solved from the arrays' dimensions.
  ir::PrimFunc f = script::parse_func(R"(@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int64()
    x = T.int32()
    A = T.match_buffer(a, (n * 32 - 1,), "float32")
    B = T.match_buffer(b, (4, x * 8 + 2), "int32")
    A[n - 1] = T.float32(7)
    B[0, 0] = x
)");
  std::vector<runtime::NDArray> args = {runtime::NDArray(ir::DataType::float32(), {32 * 5 - 1}),
                                         runtime::NDArray(ir::DataType::int32(), {4, 3 * 8 + 2})};
  runtime::interpret(f, args);
  EXPECT_EQ(args[0].get(4), 7.0);
  EXPECT_EQ(args[1].get_int(0), 3);
  // A size no x gives is still a mismatch.
  args[1] = runtime::NDArray(ir::DataType::int32(), {4, 27});
  try {
    runtime::interpret(f, args);
    ADD_FAILURE() << "x * 8 + 2 = 27 accepted";
  } catch (const runtime::InterpretError &e) {
    EXPECT_NE(std::string(e.what()).find("shape mismatch for buffer 'B' dimension 1"), std::string::npos) << e.what();
  }
}

TEST(Script, OutOfBoundsNamesBlock) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 128), "float32"), B: T.Buffer((4, 128), "float32")):
    for i, j in T.grid(4, 128):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj + 1]
)");
  auto args = runtime::make_random_args(f, {}, 1);
  try {
    runtime::interpret(f, args);
    FAIL() << "expected an InterpretError";
  } catch (const runtime::InterpretError &e) {
    EXPECT_STREQ(e.what(), "out-of-bounds load A[0, 128] (shape [4, 128]) in block 'C'");
  }
}

}  // namespace
}  // namespace tessera
