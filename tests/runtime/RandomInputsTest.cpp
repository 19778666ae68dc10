//===- tests/runtime/RandomInputsTest.cpp - What make_random_args draws -----===//
//
// Integer buffers a program unpacks with shifts and masks (int4 weights in
// uint8 or uint32) get every bit random, so every packed field varies; a
// buffer read inside another's index is drawn within the extent it indexes;
// a shift amount or a reinterpreted float keeps the small range that cannot
// overflow.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"

namespace tessera::runtime {
namespace {

/// The largest element of an integer array.
int64_t largest(const NDArray &a) {
  int64_t m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, a.get_int(i));
  return m;
}

TEST(RandomInputs, PackedInt4WeightsVaryInEveryField) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def decode(
    W: T.Buffer((64, 8), "uint32"),
    P: T.Buffer((64,), "int32"),
    S: T.Buffer((64,), "int32"),
    B: T.Buffer((64, 64), "float16"),
) -> None:
    for i, j in T.grid(64, 64):
        with T.block("decode"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.Cast("float16", (W[vi, vj // 8] >> T.Cast("uint32", vj % 8 * 4) & T.uint32(15))) + T.Cast(
                "float16", W[P[vi] % 64, 0] >> T.Cast("uint32", S[vi] % 4) & T.uint32(1)
            )
)",
                                      "decode.py");
  std::vector<NDArray> args = make_random_args(f, {}, 3);
  // Every nibble of W is drawn: the top one (bits 28-31) is not always 0.
  int64_t top_nibbles = 0;
  for (int64_t i = 0; i < args[0].numel(); ++i) top_nibbles += (uint64_t(args[0].get_int(i)) >> 28) != 0;
  EXPECT_GT(top_nibbles, args[0].numel() / 2);
  // P indexes W's 64 rows: drawn over all of them, none past them. S is a
  // shift amount: small.
  EXPECT_GT(largest(args[1]), 8);
  EXPECT_LT(largest(args[1]), 64);
  EXPECT_LT(largest(args[2]), 8);
  std::vector<NDArray> again = make_random_args(f, {}, 3);
  EXPECT_EQ(std::memcmp(again[0].data(), args[0].data(), args[0].nbytes()), 0) << "not deterministic";
}

TEST(RandomInputs, BitsReinterpretedAsFloatsDecodeToOrdinaryNumbers) {
  // Two bfloat16 scales packed in a uint32, as TVM's decode tests store them.
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def scale(S: T.Buffer((64,), "uint32"), B: T.Buffer((64,), "float32")) -> None:
    for i in range(64):
        with T.block("scale"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.reinterpret("float32", T.shift_left(T.bitwise_and(T.shift_right(S[vi], T.uint32(16)), T.uint32(65535)), T.uint32(16)))
)",
                                      "scale.py");
  std::vector<NDArray> args = make_random_args(f, {}, 1);
  interpret(f, args);
  double widest = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const double v = args[1].get(i);
    EXPECT_LE(std::fabs(v), 1.0) << i;  // finite, in [-1, 1] (rounded to bfloat16)
    widest = std::max(widest, std::fabs(v));
  }
  EXPECT_GT(widest, 0.5);  // not the 1e-44 that small integers decode to
}

// Issue 39: an integer input read inside another buffer's index (take,
// gather, an embedding lookup, as TVM's legalization prints them) is drawn in
// [0, n) for the extent n it indexes, so a right program runs in bounds.
TEST(RandomInputs, IndicesAreDrawnWithinWhatTheyIndex) {
  ir::PrimFunc take = script::parse_func(R"(
# from tvm.script import tir as T

@T.prim_func(private=True)
def take(A: T.Buffer((T.int64(7), T.int64(16)), "float32"), B: T.Buffer((T.int64(300),), "int32"), T_take: T.Buffer((T.int64(300), T.int64(16)), "float32")):
    T.func_attr({"tir.noalias": True})
    for ax0, ax1 in T.grid(T.int64(300), T.int64(16)):
        with T.block("T_take"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[B[v_ax0], v_ax1], B[v_ax0])
            T.writes(T_take[v_ax0, v_ax1])
            T_take[v_ax0, v_ax1] = A[B[v_ax0], v_ax1]
)");
  std::vector<NDArray> args = make_random_args(take, {}, 3);
  int64_t lo = 1 << 30;
  for (int64_t i = 0; i < args[1].numel(); ++i) lo = std::min(lo, args[1].get_int(i));
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(largest(args[1]), 6);  // every row of A is taken, none past it
  EXPECT_NO_THROW(interpret(take, args));

  // The smallest extent wins when one index buffer indexes two dimensions.
  ir::PrimFunc gather = script::parse_func(R"(
@T.prim_func
def gather(var_A: T.handle, idx: T.Buffer((4, 50), "int64"), out: T.Buffer((4, 50), "float16")) -> None:
    n = T.int32()
    A = T.match_buffer(var_A, (n, 9), "float16")
    for i, j in T.grid(4, 50):
        with T.block("gather"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = A[idx[vi, vj], idx[vi, vj]]
)");
  std::vector<NDArray> g = make_random_args(gather, {{"n", 5}}, 1);
  EXPECT_EQ(largest(g[1]), 4);
  EXPECT_NO_THROW(interpret(gather, g));
}

}  // namespace
}  // namespace tessera::runtime
