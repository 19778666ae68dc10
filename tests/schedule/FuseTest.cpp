//===- FuseTest.cpp - fuse -------------------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

TEST(Fuse, TwoLoops) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  LoopRef fused = sch.fuse({loops[0], loops[1]});
  EXPECT_EQ(fused.name(), "i_j_fused");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i_j_fused in range(8192):
        with T.block("B"):
            vi = T.axis.spatial(128, i_j_fused // 64)
            vj = T.axis.spatial(64, i_j_fused % 64)
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "fuse", "loops": ["i", "j"], "out": "i_j_fused"})");
}

TEST(Fuse, ThreeLoopsWithAName) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("C"));
  LoopRef fused = sch.fuse(loops, "f");
  EXPECT_EQ(fused.name(), "f");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for f in range(245760):
        with T.block("C"):
            vi = T.axis.spatial(64, f // 3840)
            vj = T.axis.spatial(80, f // 48 % 80)
            vk = T.axis.reduce(48, f % 48)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(Fuse, SplitThenFuseBack) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  auto parts = sch.split(loops[0], {nullopt, 16});
  sch.fuse({parts[1], loops[1]});
  check_schedule(f, sch, nullptr);
}

TEST(Fuse, FusingASplitGivesBackOneVariable) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  auto parts = sch.split(loops[0], {nullopt, 16});
  sch.fuse(parts);  // (f // 16) * 16 + f % 16 -> f
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i_0_i_1_fused, j in T.grid(128, 64):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0_i_1_fused)
            vj = T.axis.spatial(64, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
}

TEST(Fuse, FusingANonDividingSplitKeepsTheGuard) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  auto parts = sch.split(loops[0], {nullopt, 48});  // 3 * 48 = 144 > 128
  sch.fuse(parts);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i_0_i_1_fused, j in T.grid(144, 64):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0_i_1_fused)
            vj = T.axis.spatial(64, j)
            T.where(i_0_i_1_fused < 128)
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(FuseError, InvalidLoopList) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto loops = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<InvalidLoopListError>(sch, [&] { sch.fuse({}); }, "no loops given");
  expect_schedule_error<InvalidLoopListError>(sch, [&] { sch.fuse({loops[0], loops[0]}); },
                                              "loop 'i' is listed twice");
}

TEST(FuseError, NotNested) {
  Schedule sch = make_schedule(parse(kTwoStage));
  auto b = sch.get_loops(sch.get_block("B"));
  auto c = sch.get_loops(sch.get_block("C"));
  expect_schedule_error<LoopsNotNestedError>(sch, [&] { sch.fuse({b[0], c[1]}); }, "is not inside loop 'i'");
  expect_schedule_error<LoopsNotNestedError>(sch, [&] { sch.fuse({b[1], b[0]}); }, "loop 'i' is not inside loop 'j'");
  Schedule m = make_schedule(parse(kMatmul));
  auto l = m.get_loops(m.get_block("C"));
  expect_schedule_error<LoopsNotNestedError>(m, [&] { m.fuse({l[0], l[2]}); }, "not directly inside");
}

TEST(FuseError, NotOnlyChild) {
  Schedule sch = make_schedule(parse(kSiblingLoops));
  auto loops = sch.get_loops(sch.get_block("A"));
  expect_schedule_error<LoopsNotNestedError>(sch, [&] { sch.fuse(loops); },
                                             "loop 'j' is not the only child of loop 'i'");
}

TEST(FuseError, LoopNotSerial) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.vectorize(loops[1]);
  expect_schedule_error<LoopNotSerialError>(sch, [&] { sch.fuse(loops); }, "loop 'j' is vectorized");
}

TEST(FuseError, LoopHasAnnotation) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.annotate(loops[0], "k", 1);
  expect_schedule_error<LoopHasAnnotationError>(sch, [&] { sch.fuse(loops); }, "loop 'i' has annotations ('k')");
}

TEST(FuseError, LoopNotStartAtZero) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(1, 9):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j - 1)
                A[vi, vj] = T.float32(1)
)"));
  auto loops = sch.get_loops(sch.get_block("A"));
  expect_schedule_error<LoopNotStartAtZeroError>(sch, [&] { sch.fuse(loops); }, "loop 'j' starts at 1");
}

TEST(FuseError, DependentExtent) {
  // A triangular nest: j runs to i. Fused, i would be used outside its loop.
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(i):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(i, j)
                A[vi, vj] = T.float32(1)
)"));
  auto loops = sch.get_loops(sch.get_block("A"));
  expect_schedule_error<DependentLoopRangeError>(sch, [&] { sch.fuse(loops); },
                                                 "the extent of loop 'j' uses loop 'i' (the nest is not rectangular)");
}

}  // namespace
}  // namespace tessera::test
