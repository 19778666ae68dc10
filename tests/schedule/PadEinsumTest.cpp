//===- PadEinsumTest.cpp - pad_einsum --------------------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

/// C = A @ B at 100x77x50: no extent divides 32.
const char *kOddMatmul = R"(
@T.prim_func
def main(A: T.Buffer((100, 50), "float32"), B: T.Buffer((50, 77), "float32"), C: T.Buffer((100, 77), "float32")):
    for i, j, k in T.grid(100, 77, 50):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

const char *kOddMatmulPadded = R"(
@T.prim_func
def main(A: T.Buffer((100, 50), "float32"), B: T.Buffer((50, 77), "float32"), C: T.Buffer((100, 77), "float32")):
    A_pad = T.alloc_buffer((128, 64))
    B_pad = T.alloc_buffer((64, 96))
    C_pad = T.alloc_buffer((128, 96))
    for ax0, ax1 in T.grid(128, 64):
        with T.block("A_pad"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_pad[v0, v1] = T.if_then_else(v0 < 100 and v1 < 50, A[v0, v1], T.float32(0))
    for ax0, ax1 in T.grid(64, 96):
        with T.block("B_pad"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B_pad[v0, v1] = T.if_then_else(v0 < 50 and v1 < 77, B[v0, v1], T.float32(0))
    for i, j, k in T.grid(128, 96, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C_pad[vi, vj] = T.float32(0)
            C_pad[vi, vj] = C_pad[vi, vj] + A_pad[vi, vk] * B_pad[vk, vj]
    for ax0, ax1 in T.grid(100, 77):
        with T.block("C_pad"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_pad[v0, v1]
)";

TEST(PadEinsum, MatmulToMultiplesOf32) {
  ir::PrimFunc f = parse(kOddMatmul);
  Schedule sch = make_schedule(f);
  sch.pad_einsum(sch.get_block("C"), {32, 32, 32});
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "pad_einsum", "block": "C", "padding": [32, 32, 32]})");
  check_schedule(f, sch, kOddMatmulPadded);
}

TEST(PadEinsum, ThenSplitBy32NeedsNoPredicate) {
  ir::PrimFunc f = parse(kOddMatmul);
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  sch.pad_einsum(c, {32, 32, 32});
  auto l = sch.get_loops(c);
  auto i = sch.split(l[0], {nullopt, 32});
  auto j = sch.split(l[1], {nullopt, 32});
  auto k = sch.split(l[2], {nullopt, 32});
  sch.reorder({i[0], j[0], k[0], i[1], j[1], k[1]});
  EXPECT_TRUE(ir::is_const_int(sch.get(c).as<ir::Block>()->predicate, 1));
  check_schedule(f, sch, nullptr);
}

TEST(PadEinsum, OnlyTheReductionGrows) {
  // 64 x 80 x 50 with padding (1, 1, 32): A and B are padded along k, C is not.
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((64, 50), "float32"), B: T.Buffer((50, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i, j, k in T.grid(64, 80, 50):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  Schedule sch = make_schedule(f);
  sch.pad_einsum(sch.get_block("C"), {1, 1, 32});
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 50), "float32"), B: T.Buffer((50, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    A_pad = T.alloc_buffer((64, 64))
    B_pad = T.alloc_buffer((64, 80))
    for ax0, ax1 in T.grid(64, 64):
        with T.block("A_pad"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_pad[v0, v1] = T.if_then_else(v1 < 50, A[v0, v1], T.float32(0))
    for ax0, ax1 in T.grid(64, 80):
        with T.block("B_pad"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B_pad[v0, v1] = T.if_then_else(v0 < 50, B[v0, v1], T.float32(0))
    for i, j, k in T.grid(64, 80, 64):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A_pad[vi, vk] * B_pad[vk, vj]
)");
}

TEST(PadEinsum, AlreadyMultipleIsANoOp) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  sch.pad_einsum(sch.get_block("C"), {16, 16, 16});
  check_schedule(f, sch, kMatmul);
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(PadEinsumError, NotCompleteOrReduction) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = B[vi] + A[vi]
)"));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<BlockNotCompleteOrReductionError>(sch, [&] { sch.pad_einsum(b, {8}); },
                                                          "block 'B' is neither a complete nor a reduction block");
}

TEST(PadEinsumError, InvalidPadding) {
  Schedule sch = make_schedule(parse(kOddMatmul));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<InvalidPaddingError>(sch, [&] { sch.pad_einsum(c, {32, 32}); },
                                             "got 2 paddings for the 3 iter vars of block 'C'");
  expect_schedule_error<InvalidPaddingError>(sch, [&] { sch.pad_einsum(c, {32, 0, 32}); },
                                             "padding 0 of iter var 'vj' is not positive");
}

TEST(PadEinsumError, NotEinsum) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi + 4]
)"));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<NotEinsumBlockError>(
      sch, [&] { sch.pad_einsum(c, {8}); },
      "block 'C' is not an einsum block: it accesses 'A' at an index that is not a distinct plain iter var");
}

TEST(PadEinsumError, NotPlainLoopNest) {
  Schedule sch = make_schedule(parse(kOddMatmul));
  BlockRef c = sch.get_block("C");
  sch.split(sch.get_loops(c)[0], {nullopt, 10});
  expect_schedule_error<NotPlainLoopNestError>(sch, [&] { sch.pad_einsum(c, {32, 32, 32}); },
                                               "iter var 'vi' is not bound to a loop of its own");
}

TEST(PadEinsumError, SymbolicExtent) {
  Schedule sch = make_schedule(parse(kSymbolic));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<SymbolicExtentError>(sch, [&] { sch.pad_einsum(b, {32}); },
                                             "iter var 'vi' of block 'B' has a symbolic extent");
}

TEST(PadEinsumError, PaddingChangesReduction) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), B: T.Buffer((32,), "float32")):
    for i, k in T.grid(32, 96):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk] + T.float32(1)
)"));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<PaddingChangesReductionError>(sch, [&] { sch.pad_einsum(b, {1, 64}); },
                                                      "padding reduction iter var 'vk' would change the result");
}

}  // namespace
}  // namespace tessera::test
