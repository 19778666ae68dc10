//===- BlockizeTest.cpp - blockize ------------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

TEST(Blockize, GemvInnerReduction) {
  ir::PrimFunc f = parse(kGemv);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[1], {nullopt, 4});
  BlockRef o = sch.blockize(k[1]);
  EXPECT_EQ(o.name, "C_o");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((16,), "float32")):
    for i, k_0 in T.grid(16, 8):
        with T.block("C_o"):
            vi, vk_o = T.axis.remap("SR", [i, k_0])
            T.reads(A[vi, vk_o * 4:vk_o * 4 + 4], B[vk_o * 4:vk_o * 4 + 4])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0.0)
            for k_1 in range(4):
                with T.block("C"):
                    vk_i = T.axis.remap("R", [k_1])
                    T.reads(C[vi], A[vi, vk_o * 4 + vk_i], B[vk_o * 4 + vk_i])
                    T.writes(C[vi])
                    C[vi] = C[vi] + A[vi, vk_o * 4 + vk_i] * B[vk_o * 4 + vk_i]
)");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()), R"({"op": "blockize", "loop": "k_1", "out": "C_o"})");
  // The loops keep their handles; the new block is found by name.
  EXPECT_EQ(sch.get_loops(sch.get_block("C")), (std::vector<LoopRef>{k[1]}));
  EXPECT_EQ(sch.get_loops(o), (std::vector<LoopRef>{l[0], k[0]}));
}

TEST(Blockize, MatmulTileWithSpatialInit) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto t = sch.tile({l[0], l[1], l[2]}, {{nullopt, 4}, {nullopt, 4}, {nullopt, 4}});
  EXPECT_EQ(sch.blockize(t[0][1], "tile").name, "tile");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i_0, j_0, k_0 in T.grid(16, 20, 12):
        with T.block("tile"):
            vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
            T.reads(A[vi_o * 4:vi_o * 4 + 4, vk_o * 4:vk_o * 4 + 4], B[vk_o * 4:vk_o * 4 + 4, vj_o * 4:vj_o * 4 + 4])
            T.writes(C[vi_o * 4:vi_o * 4 + 4, vj_o * 4:vj_o * 4 + 4])
            with T.init():
                for vi_i_init, vj_i_init in T.grid(4, 4):
                    with T.block("C_init"):
                        vi_i, vj_i = T.axis.remap("SS", [vi_i_init, vj_i_init])
                        T.reads()
                        T.writes(C[vi_o * 4 + vi_i, vj_o * 4 + vj_i])
                        C[vi_o * 4 + vi_i, vj_o * 4 + vj_i] = T.float32(0.0)
            for i_1, j_1, k_1 in T.grid(4, 4, 4):
                with T.block("C"):
                    vi_i, vj_i, vk_i = T.axis.remap("SSR", [i_1, j_1, k_1])
                    T.reads(C[vi_o * 4 + vi_i, vj_o * 4 + vj_i], A[vi_o * 4 + vi_i, vk_o * 4 + vk_i], B[vk_o * 4 + vk_i, vj_o * 4 + vj_i])
                    T.writes(C[vi_o * 4 + vi_i, vj_o * 4 + vj_i])
                    C[vi_o * 4 + vi_i, vj_o * 4 + vj_i] = C[vi_o * 4 + vi_i, vj_o * 4 + vj_i] + A[vi_o * 4 + vi_i, vk_o * 4 + vk_i] * B[vk_o * 4 + vk_i, vj_o * 4 + vj_i]
)");
}

TEST(Blockize, WholeNestHasNoIterVars) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  sch.blockize(l[0]);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    with T.block("B_o"):
        T.reads(A[0:128, 0:64])
        T.writes(B[0:128, 0:64])
        for i, j in T.grid(128, 64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
)");
}

TEST(Blockize, ThenScheduleOuterLoops) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[2], {nullopt, 4});
  BlockRef o = sch.blockize(k[1]);
  auto ol = sch.get_loops(o);
  sch.reorder({ol[2], ol[0]});
  sch.split(ol[1], {nullopt, 16});
  check_schedule(f, sch, nullptr);
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(BlockizeError, NotSingleBlock) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj]
)"));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<NotSingleBlockError>(
      sch, [&] { sch.blockize(l[0]); }, "loop 'i' has 2 blocks under it; blockize needs exactly one");
}

TEST(BlockizeError, NonAffineBinding) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i * 4 + j)
            vj = T.axis.spatial(4, j)
            B[vi, vj] = A[vi, vj]
)"));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<NonAffineBindingError>(sch, [&] { sch.blockize(l[1]); }, "blockize");
}

TEST(BlockizeError, PredicateAcrossTheBoundary) {
  Schedule sch = make_schedule(parse(kGemv));
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[1], {nullopt, 5});  // k_0 * 5 + k_1 < 32
  expect_schedule_error<BlockHasPredicateError>(
      sch, [&] { sch.blockize(k[1]); }, "of block 'C' uses loops both above and below loop 'k_1'");
}

TEST(BlockizeError, BindingNotDivisible) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32")):
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
)"));
  auto l = sch.get_loops(sch.get_block("B"));
  LoopRef f = sch.fuse({l[0], l[1]});
  auto s = sch.split(f, {nullopt, 4});  // vi = (f_0 * 4 + f_1) // 6
  expect_schedule_error<BindingNotDivisibleError>(
      sch, [&] { sch.blockize(s[1]); }, "binding of iter var 'vi' of block 'B' cannot be divided at loop 'i_j_fused_1'");
}

}  // namespace
}  // namespace tessera::test
