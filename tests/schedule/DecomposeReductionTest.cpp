//===- DecomposeReductionTest.cpp - decompose_reduction -------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

TEST(DecomposeReduction, AtTheReductionLoop) {
  ir::PrimFunc f = parse(kRowSum);
  Schedule sch = make_schedule(f);
  BlockRef b = sch.get_block("B");
  auto loops = sch.get_loops(b);
  BlockRef init = sch.decompose_reduction(b, loops[1]);
  EXPECT_EQ(init.name, "B_init");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "decompose_reduction", "block": "B", "loop": "k", "out": "B_init"})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), B: T.Buffer((32,), "float32")):
    for i in range(32):
        with T.block("B_init"):
            vi = T.axis.spatial(32, i)
            B[vi] = T.float32(0)
        for k in range(96):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                B[vi] = B[vi] + A[vi, vk]
)");
}

TEST(DecomposeReduction, AtTheOuterLoopCopiesSpatialLoops) {
  ir::PrimFunc f = parse(kRowSum);
  Schedule sch = make_schedule(f);
  BlockRef b = sch.get_block("B");
  auto loops = sch.get_loops(b);
  sch.decompose_reduction(b, loops[0], "B_zero");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), B: T.Buffer((32,), "float32")):
    for i_init in range(32):
        with T.block("B_zero"):
            vi = T.axis.spatial(32, i_init)
            B[vi] = T.float32(0)
    for i, k in T.grid(32, 96):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            B[vi] = B[vi] + A[vi, vk]
)");
}

TEST(DecomposeReduction, TiledMatmulWithNonDividingTiles) {
  // 64x80x48 in tiles of 16 x 12 x 5: j and k do not divide (80 = 7 * 12 - 4, 48 = 10 * 5 - 2).
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto i = sch.split(l[0], {nullopt, 16});
  auto j = sch.split(l[1], {nullopt, 12});
  auto k = sch.split(l[2], {nullopt, 5});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  sch.bind(i[0], "blockIdx.y");
  sch.bind(j[1], "threadIdx.x");
  sch.decompose_reduction(c, k[0]);
  // The init keeps the j tail guard but not the k tail guard, and its j loop
  // stays bound to threadIdx.x.
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i_0 in T.thread_binding(4, thread="blockIdx.y"):
        for j_0 in range(7):
            for i_1_init in range(16):
                for j_1_init in T.thread_binding(12, thread="threadIdx.x"):
                    with T.block("C_init"):
                        vi = T.axis.spatial(64, i_0 * 16 + i_1_init)
                        vj = T.axis.spatial(80, j_0 * 12 + j_1_init)
                        T.where(j_0 * 12 + j_1_init < 80)
                        C[vi, vj] = T.float32(0)
            for k_0, i_1 in T.grid(10, 16):
                for j_1 in T.thread_binding(12, thread="threadIdx.x"):
                    for k_1 in range(5):
                        with T.block("C"):
                            vi = T.axis.spatial(64, i_0 * 16 + i_1)
                            vj = T.axis.spatial(80, j_0 * 12 + j_1)
                            vk = T.axis.reduce(48, k_0 * 5 + k_1)
                            T.where(j_0 * 12 + j_1 < 80 and k_0 * 5 + k_1 < 48)
                            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(DecomposeReduction, ASymbolicReduceExtentGuardsTheInit) {
  // The program writes B[i] only if row i has a column: at n = 0 it writes
  // nothing, and neither may the decomposed one. The init is guarded by the
  // first step's existence and mask, `0 < n` once simplified.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(a: T.handle, B: T.Buffer((8,), "float32")) -> None:
    n = T.int32()
    A = T.match_buffer(a, (8, n))
    for i, k in T.grid(8, n):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
)");
  Schedule sch = make_schedule(f);
  BlockRef b = sch.get_block("B");
  auto loops = sch.get_loops(b);
  auto k = sch.split(loops[1], {nullopt, 4});
  sch.decompose_reduction(b, k[0]);
  const char *expected = R"(
@T.prim_func
def main(a: T.handle, B: T.Buffer((8,), "float32")):
    n = T.int32()
    A = T.match_buffer(a, (8, n))
    for i in range(8):
        with T.block("B_init"):
            vi = T.axis.spatial(8, i)
            T.where(n >= 1)
            B[vi] = T.float32(0)
        for k_0, k_1 in T.grid((n + 3) // 4, 4):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(n, k_0 * 4 + k_1)
                T.where(k_0 * 4 + k_1 < n)
                B[vi] = B[vi] + A[vi, vk]
)";
  for (int64_t n : {0, 1, 6})
    check_schedule(f, sch, expected, {{"n", n}});
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(DecomposeReductionError, NotAReductionBlockWithInit) {
  Schedule sch = make_schedule(parse(kElementwise));
  BlockRef b = sch.get_block("B");
  auto loops = sch.get_loops(b);
  expect_schedule_error<NotReductionBlockError>(sch, [&] { sch.decompose_reduction(b, loops[0]); },
                                                "block 'B' is not a reduction block");
  Schedule sum = make_schedule(parse(kRowSum));
  BlockRef s = sum.get_block("B");
  auto l = sum.get_loops(s);
  sum.decompose_reduction(s, l[1]);
  expect_schedule_error<NotReductionBlockError>(sum, [&] { sum.decompose_reduction(s, l[1]); },
                                                "block 'B' has no init statement");
}

TEST(DecomposeReductionError, LoopNotAncestor) {
  Schedule sch = make_schedule(parse(kRowSumThenScale));
  BlockRef b = sch.get_block("B");
  auto other = sch.get_loops(sch.get_block("C"));
  expect_schedule_error<LoopNotAncestorError>(sch, [&] { sch.decompose_reduction(b, other[0]); },
                                              "loop 'i_1' is not an ancestor of block 'B'");
}

TEST(DecomposeReductionError, ReductionLoopAbove) {
  Schedule sch = make_schedule(parse(kRowSum));
  BlockRef b = sch.get_block("B");
  auto loops = sch.get_loops(b);
  sch.reorder({loops[1], loops[0]});
  expect_schedule_error<ReductionLoopAboveError>(sch, [&] { sch.decompose_reduction(b, loops[0]); },
                                                 "loop 'k' above loop 'i' feeds reduction iter var 'vk'");
}

}  // namespace
}  // namespace tessera::test
