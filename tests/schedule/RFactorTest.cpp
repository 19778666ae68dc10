//===- RFactorTest.cpp - rfactor --------------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

/// B[i] = max_k A[i, k], 16x64.
const char *kRowMax = R"(
@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 64):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.min_value("float32")
            B[vi] = T.max(B[vi], A[vi, vk])
)";

TEST(RFactor, RowSumInnerLoop) {
  ir::PrimFunc f = parse(kRowSum);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  auto k = sch.split(l[1], {nullopt, 16});
  BlockRef rf = sch.rfactor(k[1], 0);
  EXPECT_EQ(rf.name, "B_rf");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), B: T.Buffer((32,), "float32")):
    B_rf = T.alloc_buffer((16, 32))
    for i, k_0, k_1 in T.grid(32, 6, 16):
        with T.block("B_rf"):
            vi = T.axis.spatial(32, i)
            vk_1 = T.axis.spatial(16, k_1)
            vk_0 = T.axis.reduce(6, k_0)
            with T.init():
                B_rf[vk_1, vi] = T.float32(0)
            B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 16 + vk_1]
    for i_1, k_1_1 in T.grid(32, 16):
        with T.block("B"):
            vi = T.axis.spatial(32, i_1)
            vk_1 = T.axis.reduce(16, k_1_1)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + B_rf[vk_1, vi]
)");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "rfactor", "loop": "k_1", "factor_axis": 0, "out": "B_rf"})");
  // The original handles of the rfactor nest stay valid.
  EXPECT_EQ(sch.get_loops(rf), (std::vector<LoopRef>{l[0], k[0], k[1]}));
}

TEST(RFactor, OuterLoopLastAxisOfMatmul) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[2], {nullopt, 8});
  sch.rfactor(k[0], -1);  // C_rf[vi, vj, vk_0]
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    C_rf = T.alloc_buffer((64, 80, 6))
    for i, j, k_0, k_1 in T.grid(64, 80, 6, 8):
        with T.block("C_rf"):
            vi = T.axis.spatial(64, i)
            vj = T.axis.spatial(80, j)
            vk_0 = T.axis.spatial(6, k_0)
            vk_1 = T.axis.reduce(8, k_1)
            with T.init():
                C_rf[vi, vj, vk_0] = T.float32(0)
            C_rf[vi, vj, vk_0] = C_rf[vi, vj, vk_0] + A[vi, vk_0 * 8 + vk_1] * B[vk_0 * 8 + vk_1, vj]
    for i_1, j_1, k_0_1 in T.grid(64, 80, 6):
        with T.block("C"):
            vi = T.axis.spatial(64, i_1)
            vj = T.axis.spatial(80, j_1)
            vk_0 = T.axis.reduce(6, k_0_1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + C_rf[vi, vj, vk_0]
)");
}

TEST(RFactor, MaxReducerWithUnsplitLoop) {
  ir::PrimFunc f = parse(kRowMax);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  sch.rfactor(l[1], 1);  // every k its own slot: B_rf[vi, vk], nothing left to reduce
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 64), "float32"), B: T.Buffer((16,), "float32")):
    B_rf = T.alloc_buffer((16, 64))
    for i, k in T.grid(16, 64):
        with T.block("B_rf"):
            vi = T.axis.spatial(16, i)
            vk = T.axis.spatial(64, k)
            B_rf[vi, vk] = A[vi, vk]
    for i_1, k_1 in T.grid(16, 64):
        with T.block("B"):
            vi = T.axis.spatial(16, i_1)
            vk = T.axis.reduce(64, k_1)
            with T.init():
                B[vi] = T.min_value("float32")
            B[vi] = T.max(B[vi], B_rf[vi, vk])
)");
}

TEST(RFactor, AMaxFromAnyInitIsTheSerialMax) {
  // Max is idempotent: the init folded into every partial result and into
  // the write-back gives the serial result, whatever it is: TVM's softmax
  // starts at the lowest finite float32, and 0.5 cuts off the negatives.
  for (const char *init : {"T.float32(-3.4028234663852886e38)", "T.float32(0.5)"}) {
    SCOPED_TRACE(init);
    std::string text = kRowMax;
    text.replace(text.find("T.min_value(\"float32\")"), 22, init);
    ir::PrimFunc f = parse(text.c_str());
    Schedule sch = make_schedule(f);
    auto l = sch.get_loops(sch.get_block("B"));
    auto k = sch.split(l[1], {nullopt, 16});
    sch.rfactor(k[1], 1);
    EXPECT_TRUE(same_numbers(f, sch.func()));
    EXPECT_TRUE(replays(f, sch));
  }
}

TEST(RFactor, ThenSplitAgainAndReplay) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[2], {4, nullopt});
  BlockRef rf = sch.rfactor(k[0], 0);
  auto rl = sch.get_loops(rf);
  sch.reorder({rl[2], rl[0]});
  auto wb = sch.get_loops(sch.get_block("C"));
  sch.split(wb[0], {nullopt, 8});
  check_schedule(f, sch, nullptr);
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(RFactorError, NotSingleBlock) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in range(8):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
        for k in range(8):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
)"));
  auto b = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<NotSingleBlockError>(
      sch, [&] { sch.rfactor(b[0], 0); }, "loop 'i' has 2 blocks under it; rfactor needs exactly one");
  expect_schedule_error<NotSingleBlockError>(
      sch, [&] { sch.rfactor(b[1], 0); }, "loop 'i' around block 'B' has 2 blocks under it");
}

TEST(RFactorError, NotReductionBlock) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<NotReductionBlockError>(
      sch, [&] { sch.rfactor(l[1], 0); }, "block 'B' is not a reduction block");
  Schedule noinit = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            B[vi] = B[vi] + A[vi, vk]
)"));
  auto n = noinit.get_loops(noinit.get_block("B"));
  expect_schedule_error<NotReductionBlockError>(
      noinit, [&] { noinit.rfactor(n[1], 0); }, "has no init");
}

TEST(RFactorError, UnknownReducer) {
  auto program = [](const char *init, const char *update) {
    return parse((std::string(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = )") +
                  init + R"(
            B[vi] = )" +
                  update + "\n")
                     .c_str());
  };
  Schedule sub = make_schedule(program("T.float32(0)", "B[vi] - A[vi, vk]"));
  auto l = sub.get_loops(sub.get_block("B"));
  expect_schedule_error<UnknownReducerError>(
      sub, [&] { sub.rfactor(l[1], 0); }, "is not a +, *, max or min");
  Schedule init = make_schedule(program("T.float32(1)", "B[vi] + A[vi, vk]"));
  l = init.get_loops(init.get_block("B"));
  expect_schedule_error<UnknownReducerError>(
      init, [&] { init.rfactor(l[1], 0); }, "its init value T.float32(1.0) is not the identity of Add");
  Schedule other = make_schedule(program("T.float32(0)", "A[vi, vk] + A[vi, 0]"));
  l = other.get_loops(other.get_block("B"));
  expect_schedule_error<UnknownReducerError>(
      other, [&] { other.rfactor(l[1], 0); }, "is B at the stored indices");
}

TEST(RFactorError, NonAffineBinding) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 64), "float32"), B: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            vk = T.axis.reduce(64, k * k)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
)"));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<NonAffineBindingError>(
      sch, [&] { sch.rfactor(l[1], 0); }, "multiplies two loop variables");
}

TEST(RFactorError, LoopNotStartAtZero) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8,), "float32")):
    for i in range(8):
        for k in range(1, 9):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(8, k - 1)
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
)"));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<LoopNotStartAtZeroError>(
      sch, [&] { sch.rfactor(l[1], 0); }, "loop 'k' starts at 1");
}

TEST(RFactorError, LoopNotReduction) {
  Schedule sch = make_schedule(parse(kRowSum));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<LoopNotReductionError>(
      sch, [&] { sch.rfactor(l[0], 0); }, "loop 'i' feeds the spatial iter var 'vi', not a reduction");
  LoopRef fused = sch.fuse(l);
  expect_schedule_error<LoopNotReductionError>(
      sch, [&] { sch.rfactor(fused, 0); },
      "feeds both the spatial iter var 'vi' and the reduce iter var 'vk'");
}

TEST(RFactorError, PredicateOverReductionLoop) {
  Schedule sch = make_schedule(parse(kRowSum));
  auto l = sch.get_loops(sch.get_block("B"));
  auto k = sch.split(l[1], {nullopt, 64});  // 96 = 2 * 64 - 32: guarded
  expect_schedule_error<BlockHasPredicateError>(
      sch, [&] { sch.rfactor(k[1], 0); }, "over the reduction loop 'k_0'");
}

TEST(RFactorError, InvalidFactorAxis) {
  Schedule sch = make_schedule(parse(kRowSum));
  auto l = sch.get_loops(sch.get_block("B"));
  auto k = sch.split(l[1], {nullopt, 16});
  expect_schedule_error<InvalidFactorAxisError>(
      sch, [&] { sch.rfactor(k[1], 2); }, "factor axis 2 is out of range for buffer 'B' of 1 dimensions");
  expect_schedule_error<InvalidFactorAxisError>(
      sch, [&] { sch.rfactor(k[1], -3); }, "valid: -2 to 1");
}

}  // namespace
}  // namespace tessera::test
