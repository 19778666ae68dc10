//===- ReorderTest.cpp - reorder and tile ----------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

TEST(Reorder, SwapsTwoLoops) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.reorder({loops[1], loops[0]});
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for j, i in T.grid(64, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
  // The handles survive reordering.
  EXPECT_EQ(sch.get_loops(sch.get_block("B")), (std::vector<LoopRef>{loops[1], loops[0]}));
}

TEST(Reorder, ReductionLoopOutermostKeepsOtherSlots) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  sch.reorder({l[2], l[0]});  // k takes i's slot, i takes k's; j stays
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for k, j, i in T.grid(48, 80, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(Reorder, IssueTilingOfMatmul) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto i = sch.split(l[0], {nullopt, 16}, {"i0", "i1"});
  auto j = sch.split(l[1], {nullopt, 16}, {"j0", "j1"});
  auto k = sch.split(l[2], {nullopt, 8}, {"k0", "k1"});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i0, j0, k0, i1, j1, k1 in T.grid(4, 5, 6, 16, 16, 8):
        with T.block("C"):
            vi = T.axis.spatial(64, i0 * 16 + i1)
            vj = T.axis.spatial(80, j0 * 16 + j1)
            vk = T.axis.reduce(48, k0 * 8 + k1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

TEST(Tile, SplitsAndInterleaves) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto t = sch.tile({l[0], l[1]}, {{nullopt, 16}, {nullopt, 16}}, {{"i0", "i1"}, {"j0", "j1"}});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1][1].name(), "j1");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i0, j0, i1, j1, k in T.grid(4, 5, 16, 16, 48):
        with T.block("C"):
            vi = T.axis.spatial(64, i0 * 16 + i1)
            vj = T.axis.spatial(80, j0 * 16 + j1)
            vk = T.axis.reduce(48, k)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "tile", "loops": ["i", "j"], "factors": [[null, 16], [null, 16]], "out": [["i0", "i1"], ["j0", "j1"]]})");
}

TEST(TileError, FailureLeavesNothingDone) {
  Schedule sch = make_schedule(parse(kMatmul));
  auto l = sch.get_loops(sch.get_block("C"));
  // The first split would succeed, the second cannot.
  expect_schedule_error<SplitFactorsMismatchError>(sch, [&] { sch.tile({l[0], l[1]}, {{nullopt, 16}, {2, 3}}); },
                                                   "multiply to 6 but loop 'j' has extent 80");
  expect_schedule_error<InvalidLoopListError>(sch, [&] { sch.tile({l[0], l[1]}, {{nullopt, 16}}); },
                                              "2 loops but 1 factor lists");
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(ReorderError, InvalidLoopList) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<InvalidLoopListError>(sch, [&] { sch.reorder({l[0], l[1], l[0]}); }, "listed twice");
}

TEST(ReorderError, NotOneChain) {
  Schedule sch = make_schedule(parse(kTwoStage));
  auto b = sch.get_loops(sch.get_block("B"));
  auto c = sch.get_loops(sch.get_block("C"));
  expect_schedule_error<LoopsNotInOneChainError>(sch, [&] { sch.reorder({b[1], c[0]}); },
                                                 "are not nested in one another");
  Schedule two = make_schedule(parse(kSiblingLoops));
  auto a = two.get_loops(two.get_block("A"));
  expect_schedule_error<LoopsNotInOneChainError>(two, [&] { two.reorder({a[1], a[0]}); },
                                                 "loop 'i' has more than one child");
}

TEST(ReorderError, LoopNotSerial) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  sch.bind(l[0], "blockIdx.x");
  expect_schedule_error<LoopNotSerialError>(sch, [&] { sch.reorder({l[1], l[0]}); },
                                            "loop 'i' is bound to blockIdx.x");
}

TEST(ReorderError, DependentRange) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(i):
            with T.block("A"):
                vi = T.axis.spatial(8, i)
                vj = T.axis.spatial(8, j)
                A[vi, vj] = T.float32(1)
)"));
  auto l = sch.get_loops(sch.get_block("A"));
  expect_schedule_error<DependentLoopRangeError>(sch, [&] { sch.reorder({l[1], l[0]}); },
                                                 "the range of loop 'j' uses loop 'i'");
}

TEST(ReorderError, BlockNotCompleteOrReduction) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = A[vi, vj] + T.float32(1)
)"));
  auto l = sch.get_loops(sch.get_block("A"));
  expect_schedule_error<BlockNotCompleteOrReductionError>(sch, [&] { sch.reorder({l[1], l[0]}); },
                                                          "block 'A' is neither a complete nor a reduction block");
}

TEST(ReorderError, NonAffineBinding) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((64,), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("A"):
            vi = T.axis.spatial(64, i * j)
            A[vi] = T.float32(1)
)"));
  auto l = sch.get_loops(sch.get_block("A"));
  expect_schedule_error<NonAffineBindingError>(sch, [&] { sch.reorder({l[1], l[0]}); },
                                               "the bindings of block 'A' (vi = i * j) are not an affine map of its "
                                               "loops: binding 'vi' is not affine: 'i * j' multiplies two loop variables");
}

TEST(ReorderError, LoopUsedByTwoBindings) {
  // Structurally affine, but not a tiling: the diagonal is visited once per i.
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(8, i)
            A[vi, vj] = T.float32(1)
)"));
  auto l = sch.get_loops(sch.get_block("A"));
  expect_schedule_error<NonAffineBindingError>(sch, [&] { sch.reorder({l[1], l[0]}); },
                                               "(vi = i, vj = i) are not an affine map of its loops: loop 'i' is used "
                                               "by both 'vi' and 'vj'");
}

}  // namespace
}  // namespace tessera::test
