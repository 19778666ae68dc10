//===- AddUnitLoopTest.cpp - add_unit_loop ---------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;

TEST(AddUnitLoop, AroundABlock) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  LoopRef u = sch.add_unit_loop(sch.get_block("B"));
  EXPECT_EQ(u.name(), "u");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i, j, u in T.grid(128, 64, 1):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()), R"({"op": "add_unit_loop", "block": "B", "out": "u"})");
}

TEST(AddUnitLoop, AroundALoopWithAName) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  LoopRef u = sch.add_unit_loop(loops[0], "outer");
  sch.bind(u, "blockIdx.x");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for outer in T.thread_binding(1, thread="blockIdx.x"):
        for i, j in T.grid(128, 64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
)");
}

TEST(AddUnitLoop, OnTheRootBlockWrapsEverythingInside) {
  // A statement outside any block and a loop nest: both end up in the new loop.
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    B[0] = T.float32(0)
    for i in range(7):
        with T.block("B"):
            vi = T.axis.remap("R", [i])
            B[vi + 1] = B[vi] + A[vi + 1]
)");
  Schedule sch = make_schedule(f);
  LoopRef u = sch.add_unit_loop(sch.get_block("root"), "serial");
  sch.bind(u, "threadIdx.x");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    for serial in T.thread_binding(1, thread="threadIdx.x"):
        B[0] = T.float32(0)
        for i in range(7):
            with T.block("B"):
                vi = T.axis.reduce(7, i)
                T.reads(B[vi], A[vi + 1])
                T.writes(B[vi + 1])
                B[vi + 1] = B[vi] + A[vi + 1]
)");
}

}  // namespace
}  // namespace tessera::test
