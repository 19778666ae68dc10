//===- ComputeAtTest.cpp - compute_at and reverse_compute_at ---------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

TEST(ComputeAt, InnermostLoopDropsUnitLoops) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  auto cl = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("B"), cl[1]);
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()), R"({"op": "compute_at", "block": "B", "loop": "j_1"})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(16, j)
            B[vi, vj] = A[vi, vj] + T.float32(1)
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)
)");
}

TEST(ComputeAt, OuterLoopAndPreservedUnitLoops) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  auto cl = sch.get_loops(sch.get_block("C"));
  sch.compute_at(sch.get_block("B"), cl[0], /*preserve_unit_loops=*/true);
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "compute_at", "block": "B", "loop": "i_1", "preserve_unit_loops": true})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i in range(16):
        for ax0, ax1 in T.grid(1, 16):
            with T.block("B"):
                vi = T.axis.spatial(16, i + ax0)
                vj = T.axis.spatial(16, ax1)
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * T.float32(2)
)");
}

TEST(ComputeAt, NonDividingTileIsGuarded) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  auto cl = sch.get_loops(sch.get_block("C"));
  auto i = sch.split(cl[0], {nullopt, 5});  // 16 = 4 * 5 - 4
  sch.compute_at(sch.get_block("B"), i[0]);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i_0 in range(4):
        for ax0, ax1 in T.grid(5, 16):
            with T.block("B"):
                vi = T.axis.spatial(16, i_0 * 5 + ax0)
                vj = T.axis.spatial(16, ax1)
                T.where(i_0 * 5 + ax0 < 16)
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for i_1, j in T.grid(5, 16):
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 5 + i_1)
                vj = T.axis.spatial(16, j)
                T.where(i_0 * 5 + i_1 < 16)
                C[vi, vj] = B[vi, vj] * T.float32(2)
)");
}

TEST(ComputeAt, ReductionProducerKeepsItsWholeReduction) {
  ir::PrimFunc f = parse(kRowSumThenScale);
  Schedule sch = make_schedule(f);
  sch.compute_at(sch.get_block("B"), sch.get_loops(sch.get_block("C"))[0]);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), C: T.Buffer((32,), "float32")):
    B = T.alloc_buffer((32,))
    for i in range(32):
        for ax0 in range(96):
            with T.block("B"):
                vi = T.axis.spatial(32, i)
                vk = T.axis.reduce(96, ax0)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] * T.float32(2)
)");
}

TEST(ComputeAt, AConstantIndexConstrainsNoIterVar) {
  // A whole-tensor total written at [0] (relax's batch-1 reductions): the
  // producer goes under the consumer's loop whole; the constant dimension
  // asks nothing of its iter vars.
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((4, 24), "float32"), C: T.Buffer((4, 24), "float32")):
    total = T.alloc_buffer((1,))
    for i, k in T.grid(4, 24):
        with T.block("total"):
            vi, vk = T.axis.remap("RR", [i, k])
            with T.init():
                total[0] = T.float32(0)
            total[0] = total[0] + A[vi, vk]
    for u in range(1):
        for i, j in T.grid(4, 24):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] / total[0]
)");
  Schedule sch = make_schedule(f);
  sch.compute_at(sch.get_block("total"), sch.get_loops(sch.get_block("C"))[0]);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((4, 24), "float32"), C: T.Buffer((4, 24), "float32")):
    total = T.alloc_buffer((1,))
    for u in range(1):
        for ax0, ax1 in T.grid(4, 24):
            with T.block("total"):
                vi, vk = T.axis.remap("RR", [ax0, ax1])
                with T.init():
                    total[0] = T.float32(0)
                total[0] = total[0] + A[vi, vk]
        for i, j in T.grid(4, 24):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] / total[0]
)");
}

TEST(ReverseComputeAt, ConsumerFollowsTheProducerTiles) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  auto bl = sch.get_loops(sch.get_block("B"));
  auto i = sch.split(bl[0], {nullopt, 4});
  sch.reverse_compute_at(sch.get_block("C"), i[0]);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i_0 in range(4):
        for i_1, j in T.grid(4, 16):
            with T.block("B"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                vj = T.axis.spatial(16, j)
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for ax0, ax1 in T.grid(4, 16):
            with T.block("C"):
                vi = T.axis.spatial(16, i_0 * 4 + ax0)
                vj = T.axis.spatial(16, ax1)
                C[vi, vj] = B[vi, vj] * T.float32(2)
)");
}

TEST(ReverseComputeAt, LightConsumerUnderHeavyProducer) {
  // Seed 002: a bias add follows a tiled matmul into its (blockIdx) tiles
  // without its own splits; the matmul's tails do not divide.
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((50, 24), "float32"), B: T.Buffer((24, 40), "float32"), bias: T.Buffer((40,), "float32"), D: T.Buffer((50, 40), "float32")):
    C = T.alloc_buffer((50, 40))
    for i, j, k in T.grid(50, 40, 24):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(50, 40):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + bias[vj]
)");
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  auto l = sch.get_loops(c);
  auto i = sch.split(l[0], {nullopt, 16});
  auto j = sch.split(l[1], {nullopt, 16});
  sch.reorder({i[0], j[0], i[1], j[1]});
  sch.bind(i[0], "blockIdx.y");
  sch.bind(j[0], "blockIdx.x");
  sch.reverse_compute_at(sch.get_block("D"), j[0]);
  check_schedule(f, sch, nullptr);
  auto dl = sch.get_loops(sch.get_block("D"));
  ASSERT_EQ(dl.size(), 4u);  // i_0, j_0, ax0, ax1
  EXPECT_EQ(dl[1], j[0]);
}

// --- Negative: compute_at, one per "Requires:" line -------------------------

TEST(ComputeAtError, InvalidLocation) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  auto bl = sch.get_loops(b);
  expect_schedule_error<InvalidComputeLocationError>(sch, [&] { sch.compute_at(b, bl[1]); },
                                                     "loop 'j' is an ancestor of block 'B'");
}

TEST(ComputeAtError, NotCompleteOrReduction) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = B[vi] + A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi]
)"));
  auto cl = sch.get_loops(sch.get_block("C"));
  BlockRef blk = sch.get_block("B");
  expect_schedule_error<BlockNotCompleteOrReductionError>(sch, [&] { sch.compute_at(blk, cl[0]); },
                                                          "neither a complete nor a reduction block");
}

TEST(ComputeAtError, BlockHasPredicate) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  sch.split(sch.get_loops(b)[0], {nullopt, 5});
  auto cl = sch.get_loops(sch.get_block("C"));
  expect_schedule_error<BlockHasPredicateError>(sch, [&] { sch.compute_at(b, cl[0]); },
                                                "block 'B' has the predicate i_0 * 5 + i_1_1 < 16");
}

TEST(ComputeAtError, OutputBlock) {
  Schedule sch = make_schedule(parse(kTwoStage));
  auto bl = sch.get_loops(sch.get_block("B"));
  BlockRef blk = sch.get_block("C");
  expect_schedule_error<OutputBlockError>(sch, [&] { sch.compute_at(blk, bl[0]); },
                                          "block 'C' writes the function's output 'C'");
}

TEST(ComputeAtError, ConsumersNotUnderLoop) {
  Schedule sch = make_schedule(parse(kOneProducerTwoConsumers));
  auto cl = sch.get_loops(sch.get_block("C"));
  BlockRef blk = sch.get_block("B");
  expect_schedule_error<ConsumersNotUnderLoopError>(sch, [&] { sch.compute_at(blk, cl[0]); },
                                                    "the consumer 'D' of block 'B' is not under loop 'i_1'");
}

TEST(ComputeAtError, ProducerUnderLoop) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    X = T.alloc_buffer((16,))
    Y = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("X"):
            vi = T.axis.remap("S", [i])
            X[vi] = A[vi]
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = Y[vi]
    for i in range(16):
        with T.block("Y"):
            vi = T.axis.remap("S", [i])
            Y[vi] = X[vi]
)"));
  auto l = sch.get_loops(sch.get_block("C"));
  BlockRef blk = sch.get_block("Y");
  expect_schedule_error<ProducerUnderLoopError>(sch, [&] { sch.compute_at(blk, l[0]); },
                                                "block 'X' under loop 'i' writes 'X', which block 'Y' reads");
}

TEST(ComputeAtError, NonIterVarIndex) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[15 - vi] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi]
)"));
  auto cl = sch.get_loops(sch.get_block("C"));
  BlockRef blk = sch.get_block("B");
  expect_schedule_error<NonIterVarIndexError>(sch, [&] { sch.compute_at(blk, cl[0]); },
                                              "block 'B' writes 'B' at indices that are not distinct iter vars");
}

// --- Negative: reverse_compute_at -------------------------------------------

TEST(ReverseComputeAtError, InvalidLocation) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef c = sch.get_block("C");
  auto cl = sch.get_loops(c);
  expect_schedule_error<InvalidComputeLocationError>(sch, [&] { sch.reverse_compute_at(c, cl[0]); },
                                                     "loop 'i_1' is an ancestor of block 'C'");
}

TEST(ReverseComputeAtError, NotComplete) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), C: T.Buffer((32,), "float32")):
    B = T.alloc_buffer((32, 96))
    for i, k in T.grid(32, 96):
        with T.block("B"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = A[vi, vk] + T.float32(1)
    for i, k in T.grid(32, 96):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]
)"));
  auto bl = sch.get_loops(sch.get_block("B"));
  BlockRef blk = sch.get_block("C");
  expect_schedule_error<BlockNotCompleteError>(sch, [&] { sch.reverse_compute_at(blk, bl[0]); },
                                               "block 'C' is not a complete block");
}

TEST(ReverseComputeAtError, BlockHasPredicate) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef c = sch.get_block("C");
  sch.split(sch.get_loops(c)[0], {nullopt, 5});
  auto bl = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<BlockHasPredicateError>(sch, [&] { sch.reverse_compute_at(c, bl[0]); },
                                                "block 'C' has the predicate");
}

TEST(ReverseComputeAtError, ProducersNotUnderLoop) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    B2 = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
    for i in range(16):
        with T.block("B2"):
            vi = T.axis.remap("S", [i])
            B2[vi] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] + B2[vi]
)"));
  auto bl = sch.get_loops(sch.get_block("B"));
  BlockRef blk = sch.get_block("C");
  expect_schedule_error<ProducersNotUnderLoopError>(sch, [&] { sch.reverse_compute_at(blk, bl[0]); },
                                                    "the producer 'B2' of block 'C' is not under loop 'i'");
}

TEST(ReverseComputeAtError, ConsumerUnderLoop) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    C = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
        with T.block("D"):
            vi = T.axis.remap("S", [i])
            D[vi] = C[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi]
)"));
  auto bl = sch.get_loops(sch.get_block("B"));
  BlockRef blk = sch.get_block("C");
  expect_schedule_error<ConsumerUnderLoopError>(sch, [&] { sch.reverse_compute_at(blk, bl[0]); },
                                                "block 'D' under loop 'i' reads 'C', which block 'C' writes");
}

TEST(ReverseComputeAtError, NonIterVarIndex) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[15 - vi]
)"));
  auto bl = sch.get_loops(sch.get_block("B"));
  BlockRef blk = sch.get_block("C");
  expect_schedule_error<NonIterVarIndexError>(sch, [&] { sch.reverse_compute_at(blk, bl[0]); },
                                              "block 'C' reads 'B' at indices that are not distinct iter vars");
}

}  // namespace
}  // namespace tessera::test
