//===- SplitTest.cpp - split -----------------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

TEST(Split, InferredOuterFactor) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  auto out = sch.split(loops[0], {nullopt, 32});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name(), "i_0");
  EXPECT_EQ(out[1].name(), "i_1");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i_0, i_1, j in T.grid(4, 32, 64):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0 * 32 + i_1)
            vj = T.axis.spatial(64, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
}

TEST(Split, ThreeFactors) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.split(loops[0], {2, nullopt, 16});
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i_0, i_1, i_2, j in T.grid(2, 4, 16, 64):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0 * 64 + i_1 * 16 + i_2)
            vj = T.axis.spatial(64, j)
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
}

TEST(Split, NonDividingFactorAddsPredicate) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.split(loops[0], {nullopt, 48});
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i_0, i_1, j in T.grid(3, 48, 64):
        with T.block("B"):
            vi = T.axis.spatial(128, i_0 * 48 + i_1)
            vj = T.axis.spatial(64, j)
            T.where(i_0 * 48 + i_1 < 128)
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
}

TEST(Split, OvershootingConstantFactorsAddPredicate) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.split(loops[1], {5, 13});
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i, j_0, j_1 in T.grid(128, 5, 13):
        with T.block("B"):
            vi = T.axis.spatial(128, i)
            vj = T.axis.spatial(64, j_0 * 13 + j_1)
            T.where(j_0 * 13 + j_1 < 64)
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
}

TEST(Split, SymbolicExtentInfersCeilDivAndGuards) {
  ir::PrimFunc f = parse(kSymbolic);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.split(loops[0], {nullopt, 16});
  check_schedule(f, sch, R"(
@T.prim_func
def main(var_A: T.handle, var_B: T.handle):
    n = T.int32()
    A = T.match_buffer(var_A, (n,))
    B = T.match_buffer(var_B, (n,))
    for i_0, i_1 in T.grid((n + 15) // 16, 16):
        with T.block("B"):
            vi = T.axis.spatial(n, i_0 * 16 + i_1)
            T.where(i_0 * 16 + i_1 < n)
            B[vi] = A[vi] * T.float32(3)
)", {{"n", 37}});
}

TEST(Split, GivenNamesAreUsedAndRecorded) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  auto out = sch.split(loops[0], {nullopt, 16}, {"io", "ii"});
  EXPECT_EQ(out[0].name(), "io");
  EXPECT_EQ(out[1].name(), "ii");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "split", "loop": "i", "factors": [null, 16], "out": ["io", "ii"]})");
  // A name another loop has is made unique.
  auto again = sch.split(loops[1], {nullopt, 8}, {"io", "j1"});
  EXPECT_EQ(again[0].name(), "io_1");
  check_schedule(f, sch, nullptr);
}

TEST(Split, ReductionLoopKeepsTheAnswer) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("C"));
  sch.split(loops[2], {nullopt, 5});  // 48 = 10 * 5 - 2: the tail is guarded
  check_schedule(f, sch, nullptr);
}

TEST(Split, FusedLoopSimplifiesWhereProvable) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("B"));
  LoopRef fused = sch.fuse(loops);
  sch.split(fused, {nullopt, 32});  // 64 columns = 2 pieces of 32
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i_j_fused_0, i_j_fused_1 in T.grid(256, 32):
        with T.block("B"):
            vi = T.axis.spatial(128, i_j_fused_0 // 2)
            vj = T.axis.spatial(64, i_j_fused_0 % 2 * 32 + i_j_fused_1)
            B[vi, vj] = A[vi, vj] * T.float32(2)
)");
}

TEST(Split, FusedLoopKeepsWhatIsNotProvable) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  auto loops = sch.get_loops(sch.get_block("C"));
  LoopRef fused = sch.fuse({loops[0], loops[1]});
  sch.split(fused, {nullopt, 32});  // 32 does not divide 80
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i_j_fused_0, i_j_fused_1, k in T.grid(160, 32, 48):
        with T.block("C"):
            vi = T.axis.spatial(64, (i_j_fused_0 * 32 + i_j_fused_1) // 80)
            vj = T.axis.spatial(80, (i_j_fused_0 * 32 + i_j_fused_1) % 80)
            vk = T.axis.reduce(48, k)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(SplitError, LoopNotSerial) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.parallel(loops[0]);
  expect_schedule_error<LoopNotSerialError>(sch, [&] { sch.split(loops[0], {nullopt, 4}); },
                                            "loop 'i' is parallel, not serial");
}

TEST(SplitError, LoopHasAnnotation) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto loops = sch.get_loops(sch.get_block("B"));
  sch.annotate(loops[0], "pragma_auto_unroll_max_step", 16);
  expect_schedule_error<LoopHasAnnotationError>(sch, [&] { sch.split(loops[0], {nullopt, 4}); },
                                                "'pragma_auto_unroll_max_step'");
}

TEST(SplitError, LoopNotStartAtZero) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((128,), "float32")):
    for i in range(2, 130):
        with T.block("A"):
            vi = T.axis.spatial(128, i - 2)
            A[vi] = T.float32(1)
)"));
  auto loops = sch.get_loops(sch.get_block("A"));
  expect_schedule_error<LoopNotStartAtZeroError>(sch, [&] { sch.split(loops[0], {nullopt, 4}); },
                                                 "loop 'i' starts at 2, not 0");
}

TEST(SplitError, InvalidFactors) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto loops = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<InvalidSplitFactorsError>(sch, [&] { sch.split(loops[0], {nullopt, nullopt}); },
                                                  "at most one factor may be inferred");
  expect_schedule_error<InvalidSplitFactorsError>(sch, [&] { sch.split(loops[0], {0, 16}); },
                                                  "factor 0 is not positive");
  expect_schedule_error<InvalidSplitFactorsError>(sch, [&] { sch.split(loops[0], {}); },
                                                  "give at least one factor");
  // Found by the trace fuzzer: a product past the loop variable's type
  // (int32 here) or past int64 itself is refused, not overflowed.
  expect_schedule_error<InvalidSplitFactorsError>(sch, [&] { sch.split(loops[0], {nullopt, 65536, 65536}); },
                                                  "the factors multiply past the largest int32 (2147483647)");
  expect_schedule_error<InvalidSplitFactorsError>(
      sch, [&] { sch.split(loops[0], {nullopt, int64_t(1999999999999999999), 32}); }, "the factors multiply past");
}

TEST(SplitError, FactorsDoNotCoverTheLoop) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto loops = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<SplitFactorsMismatchError>(sch, [&] { sch.split(loops[0], {8, 12}); },
                                                   "split factors multiply to 96 but loop 'i' has extent 128");
  Schedule sym = make_schedule(parse(kSymbolic));
  auto l = sym.get_loops(sym.get_block("B"));
  expect_schedule_error<SplitFactorsMismatchError>(sym, [&] { sym.split(l[0], {4, 16}); }, "symbolic extent n");
}

TEST(SplitError, InvalidNames) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto loops = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<InvalidLoopNamesError>(sch, [&] { sch.split(loops[0], {nullopt, 4}, {"a"}); },
                                               "1 names given for the 2 loops");
  expect_schedule_error<InvalidLoopNamesError>(sch, [&] { sch.split(loops[0], {nullopt, 4}, {"a", "b c"}); },
                                               "'b c' is not an identifier");
}

}  // namespace
}  // namespace tessera::test
