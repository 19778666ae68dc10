//===- RecipeReductionTest.cpp - Row reduction with rfactor + cross-thread --===//
//
// The classic GPU row reduction: one thread block per row, 128 threads each
// summing a strided slice of the row into their own slot (the rfactor
// block), then a cross-thread reduction of the 128 slots (the write-back
// block, its reduce loop bound to threadIdx.x). The interpreter runs thread
// loops serially, so the answer must not change.
//
//===----------------------------------------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

/// B[i] = sum_k A[i, k] over 256 rows of 1024 columns.
const char *kRows = R"(
@T.prim_func
def main(A: T.Buffer((256, 1024), "float32"), B: T.Buffer((256,), "float32")):
    for i, k in T.grid(256, 1024):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
)";

TEST(RecipeReduction, RFactorThenCrossThreadReduction) {
  ir::PrimFunc f = parse(kRows);
  Schedule sch = make_schedule(f);
  BlockRef b = sch.get_block("B");
  auto l = sch.get_loops(b);
  auto k = sch.split(l[1], {nullopt, 128}, {"k0", "tx"});
  BlockRef rf = sch.rfactor(k[1], 0);
  // The rfactor block: rows over blocks, the factored axis over threads,
  // each thread looping over its 8 columns.
  sch.reorder({k[1], k[0]});
  sch.bind(l[0], "blockIdx.x");
  sch.bind(k[1], "threadIdx.x");
  // The write-back block: the 128 partial sums reduced across threads.
  auto wb = sch.get_loops(b);
  sch.bind(wb[0], "blockIdx.x");
  sch.bind(wb[1], "threadIdx.x");
  EXPECT_EQ(rf.name, "B_rf");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((256, 1024), "float32"), B: T.Buffer((256,), "float32")):
    B_rf = T.alloc_buffer((128, 256))
    for i in T.thread_binding(256, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for k0 in range(8):
                with T.block("B_rf"):
                    vi = T.axis.spatial(256, i)
                    vtx = T.axis.spatial(128, tx)
                    vk0 = T.axis.reduce(8, k0)
                    with T.init():
                        B_rf[vtx, vi] = T.float32(0)
                    B_rf[vtx, vi] = B_rf[vtx, vi] + A[vi, vk0 * 128 + vtx]
    for i_1 in T.thread_binding(256, thread="blockIdx.x"):
        for tx_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, i_1)
                vtx = T.axis.reduce(128, tx_1)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + B_rf[vtx, vi]
)");
}

TEST(RecipeReduction, ReplaysFromJson) {
  ir::PrimFunc f = parse(kRows);
  Schedule sch = make_schedule(f);
  sch.replay(R"([
    {"op": "get_block", "name": "B", "out": "B"},
    {"op": "get_loops", "block": "B", "out": ["i", "k"]},
    {"op": "split", "loop": "k", "factors": [null, 128], "out": ["k0", "tx"]},
    {"op": "rfactor", "loop": "tx", "factor_axis": 0, "out": "B_rf"},
    {"op": "reorder", "loops": ["tx", "k0"]},
    {"op": "bind", "loop": "i", "thread": "blockIdx.x"},
    {"op": "bind", "loop": "tx", "thread": "threadIdx.x"},
    {"op": "get_loops", "block": "B", "out": ["i_wb", "tx_wb"]},
    {"op": "bind", "loop": "i_wb", "thread": "blockIdx.x"},
    {"op": "bind", "loop": "tx_wb", "thread": "threadIdx.x"}
  ])");
  EXPECT_EQ(sch.get_child_blocks(sch.get_block("root")).size(), 2u);
  check_schedule(f, sch, nullptr);
}

TEST(RecipeReduction, ReduceLoopBoundToThreadsKeepsTheAnswer) {
  // Without rfactor: the reduce loop itself bound to threadIdx.x (a
  // cross-thread reduction for lowering); serial semantics are unchanged.
  ir::PrimFunc f = parse(kRows);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  auto k = sch.split(l[1], {nullopt, 256});
  sch.bind(l[0], "blockIdx.x");
  sch.bind(k[1], "threadIdx.x");
  check_schedule(f, sch, nullptr);
  // blockIdx cannot take a reduction loop.
  expect_schedule_error<LoopNotDataParallelError>(
      sch, [&] { sch.bind(k[0], "blockIdx.y"); }, "reduce");
}

}  // namespace
}  // namespace tessera::test
