//===- RecipeElementwiseTest.cpp - Fuse, split, bind, vectorise ------------===//
//
// The classic elementwise kernel on a shape that divides nothing: 100x77
// float16 fused into 7700 elements, split into [blocks, 256 threads, 4 lanes]
// (the tail guarded by T.where), bound and vectorised.
//
//===----------------------------------------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

const char *kHalfAxpy = R"(
@T.prim_func
def main(A: T.Buffer((100, 77), "float16"), B: T.Buffer((100, 77), "float16"), C: T.Buffer((100, 77), "float16")):
    for i, j in T.grid(100, 77):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float16(2) + B[vi, vj]
)";

const char *kExpected = R"(
@T.prim_func
def main(A: T.Buffer((100, 77), "float16"), B: T.Buffer((100, 77), "float16"), C: T.Buffer((100, 77), "float16")):
    for bx in T.thread_binding(8, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            for vec in T.vectorized(4):
                with T.block("C"):
                    vi = T.axis.spatial(100, (bx * 1024 + tx * 4 + vec) // 77)
                    vj = T.axis.spatial(77, (bx * 1024 + tx * 4 + vec) % 77)
                    T.where(bx * 1024 + tx * 4 + vec < 7700)
                    C[vi, vj] = A[vi, vj] * T.float16(2) + B[vi, vj]
)";

void schedule_it(Schedule &sch) {
  BlockRef c = sch.get_block("C");
  auto l = sch.get_loops(c);
  LoopRef f = sch.fuse(l);
  auto parts = sch.split(f, {nullopt, 256, 4}, {"bx", "tx", "vec"});
  sch.bind(parts[0], "blockIdx.x");
  sch.bind(parts[1], "threadIdx.x");
  sch.vectorize(parts[2]);
}

TEST(RecipeElementwise, FuseSplitBindVectorize) {
  ir::PrimFunc f = parse(kHalfAxpy);
  Schedule sch = make_schedule(f);
  schedule_it(sch);
  check_schedule(f, sch, kExpected);
  EXPECT_EQ(sch.trace().to_json(), R"([
  {"op": "get_block", "name": "C", "out": "C"},
  {"op": "get_loops", "block": "C", "out": ["i", "j"]},
  {"op": "fuse", "loops": ["i", "j"], "out": "i_j_fused"},
  {"op": "split", "loop": "i_j_fused", "factors": [null, 256, 4], "out": ["bx", "tx", "vec"]},
  {"op": "bind", "loop": "bx", "thread": "blockIdx.x"},
  {"op": "bind", "loop": "tx", "thread": "threadIdx.x"},
  {"op": "vectorize", "loop": "vec"}
]
)");
}

TEST(RecipeElementwise, EveryElementWrittenOnce) {
  // The tail guard matters: without it the last block would write past
  // 7700 elements. Count the writes of a function that adds 1 to C.
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(C: T.Buffer((100, 77), "float16")):
    for i, j in T.grid(100, 77):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = C[vi, vj] + T.float16(1)
)");
  Schedule sch = make_schedule(f);
  schedule_it(sch);
  EXPECT_TRUE(same_numbers(f, sch.func()));
}

}  // namespace
}  // namespace tessera::test
