//===- ReindexTest.cpp - reindex -------------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

/// C = A^T @ B^T: A stored (k, i), B stored (j, k).
const char *kTransposedMatmul = R"(
@T.prim_func
def main(A: T.Buffer((48, 64), "float32"), B: T.Buffer((80, 48), "float32"), C: T.Buffer((64, 80), "float32")):
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vk, vi], B[vj, vk])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vk, vi] * B[vj, vk]
)";

TEST(Reindex, ReadFollowsTheIterationSpace) {
  ir::PrimFunc f = parse(kTransposedMatmul);
  Schedule sch = make_schedule(f);
  BlockRef r = sch.reindex(sch.get_block("C"), 0, false);
  EXPECT_EQ(r.name, "A_reindex");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "reindex", "block": "C", "buffer_index": 0, "write": false, "out": "A_reindex"})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((48, 64), "float32"), B: T.Buffer((80, 48), "float32"), C: T.Buffer((64, 80), "float32")):
    A_reindex = T.alloc_buffer((64, 48))
    for ax0, ax1 in T.grid(64, 48):
        with T.block("A_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_reindex[v0, v1] = A[v1, v0]
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A_reindex[vi, vk], B[vj, vk])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A_reindex[vi, vk] * B[vj, vk]
)");
}

TEST(Reindex, WriteIsCopiedBack) {
  ir::PrimFunc f = parse(kTransposedMatmul);
  Schedule sch = make_schedule(f);
  BlockRef r = sch.reindex(sch.get_block("C"), 0, true);
  EXPECT_EQ(r.name, "C_reindex");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((48, 64), "float32"), B: T.Buffer((80, 48), "float32"), C: T.Buffer((64, 80), "float32")):
    C_reindex = T.alloc_buffer((64, 80))
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vk, vi], B[vj, vk])
            T.writes(C_reindex[vi, vj])
            with T.init():
                C_reindex[vi, vj] = T.float32(0)
            C_reindex[vi, vj] = C_reindex[vi, vj] + A[vk, vi] * B[vj, vk]
    for ax0, ax1 in T.grid(64, 80):
        with T.block("C_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_reindex[v0, v1]
)");
}

TEST(Reindex, AllOperandsThenTile) {
  ir::PrimFunc f = parse(kTransposedMatmul);
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  sch.reindex(c, 0, false);
  sch.reindex(c, 1, false);
  sch.reindex(c, 0, true);
  auto l = sch.get_loops(c);
  sch.tile({l[0], l[1]}, {{nullopt, 16}, {nullopt, 16}});
  check_schedule(f, sch, nullptr);
}

TEST(Reindex, CompoundIndex) {
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((24,), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 9):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi + vk]
)");
  Schedule sch = make_schedule(f);
  sch.reindex(sch.get_block("C"), 0, false);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((24,), "float32"), C: T.Buffer((16,), "float32")):
    A_reindex = T.alloc_buffer((16, 9))
    for ax0, ax1 in T.grid(16, 9):
        with T.block("A_reindex"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_reindex[v0, v1] = A[v0 + v1]
    for i, k in T.grid(16, 9):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A_reindex[vi, vk])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A_reindex[vi, vk]
)");
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(ReindexError, BufferIndexOutOfRange) {
  Schedule sch = make_schedule(parse(kTransposedMatmul));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<BufferIndexOutOfRangeError>(sch, [&] { sch.reindex(c, 2, false); },
                                                    "read buffer index 2 is out of range");
  expect_schedule_error<BufferIndexOutOfRangeError>(sch, [&] { sch.reindex(c, 1, true); },
                                                    "write buffer index 1 is out of range");
}

TEST(ReindexError, TwoIndexLists) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + A[vj, vi]
)"));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<ReindexAccessError>(sch, [&] { sch.reindex(c, 0, false); },
                                            "block 'C' accesses 'A' at different index lists");
}

TEST(ReindexError, OtherBlockInTheNest) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef c = sch.get_block("C");
  sch.compute_at(sch.get_block("B"), sch.get_loops(c)[1]);
  expect_schedule_error<ReindexAccessError>(sch, [&] { sch.reindex(c, 0, false); },
                                            "block 'B' in the same loop nest accesses it too");
}

TEST(ReindexError, ReadBufferWritten) {
  Schedule sch = make_schedule(parse(kMatmul));
  BlockRef c = sch.get_block("C");
  sch.decompose_reduction(c, sch.get_loops(c)[0]);  // the update block reads C, A, B
  expect_schedule_error<CachedBufferWrittenError>(sch, [&] { sch.reindex(c, 0, false); },
                                                  "block 'C' writes it too");
}

TEST(ReindexError, WriteNotAtIterVars) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi // 2] = A[vi]
)"));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<NonIterVarIndexError>(sch, [&] { sch.reindex(b, 0, true); },
                                              "its indices are not distinct iter vars");
}

TEST(ReindexError, WriteWithPredicate) {
  Schedule sch = make_schedule(parse(kElementwise));
  BlockRef b = sch.get_block("B");
  sch.split(sch.get_loops(b)[0], {nullopt, 48});
  expect_schedule_error<BlockHasPredicateError>(sch, [&] { sch.reindex(b, 0, true); }, "block 'B' has a predicate");
}

TEST(ReindexError, WriteReadWithoutInit) {
  Schedule sch = make_schedule(parse(kMatmul));
  BlockRef c = sch.get_block("C");
  sch.decompose_reduction(c, sch.get_loops(c)[0]);
  expect_schedule_error<NotReductionBlockError>(sch, [&] { sch.reindex(c, 0, true); },
                                                "block 'C' reads it without an init");
}

}  // namespace
}  // namespace tessera::test
