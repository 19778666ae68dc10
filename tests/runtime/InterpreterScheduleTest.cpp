//===- InterpreterScheduleTest.cpp - Scheduled-style programs --------------===//
//
// What schedules produce must run serially and give the unscheduled answer:
// thread-bound loops, shared-scope allocations inside blocks, T.where
// predicates, init under split reduction loops, symbolic shapes, non-zero
// loop starts, loop-carried dependences, in-place updates.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>

#include "Programs.h"

namespace tessera::testing {
namespace {

using runtime::NDArray;
const DataType f32 = DataType::float32(), i32t = DataType::int32();

/// Runs `f` on copies of `args` and returns them.
std::vector<NDArray> run(const PrimFunc &f, std::vector<NDArray> args) {
  run_program(f, args);
  return args;
}

void expect_equal(const NDArray &a, const NDArray &b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(a.get(i), b.get(i)) << "element " << i;
}

TEST(Scheduled, ThreadBoundMatmulMatchesSerial) {
  // i = bx * 8 + tx, j = by * 4 + ty; k split as k0 * 8 + k1 (serial).
  const int64_t m = 32, n = 16, k = 24;
  PrimFunc ref = matmul(i32(m), i32(n), i32(k), f32, f32);
  Buffer A = Buffer::make("A", f32, {i32(m), i32(k)}), B = Buffer::make("B", f32, {i32(k), i32(n)}),
         C = Buffer::make("C", f32, {i32(m), i32(n)});
  Var bx("bx"), tx("tx"), by("by"), ty("ty"), k0("k0"), k1("k1"), vi("vi"), vj("vj"), vk("vk");
  Stmt blk = block("C", {spatial(vi, i32(m)), spatial(vj, i32(n)), reduce(vk, i32(k))},
                   {bx * 8 + tx, by * 4 + ty, k0 * 8 + k1},
                   Store::make(C, Load::make(C, {vi, vj}) + Load::make(A, {vi, vk}) * Load::make(B, {vk, vj}), {vi, vj}),
                   Store::make(C, make_const(f32, 0), {vi, vj}));
  Stmt body = loop(bx, i32(0), i32(m / 8), loop(by, i32(0), i32(n / 4),
                   loop(tx, i32(0), i32(8), loop(ty, i32(0), i32(4),
                        loop(k0, i32(0), i32(k / 8), loop(k1, i32(0), i32(8), blk, ForKind::Unrolled)),
                        ForKind::ThreadBinding, "threadIdx.y"), ForKind::ThreadBinding, "threadIdx.x"),
                   ForKind::ThreadBinding, "blockIdx.y"), ForKind::ThreadBinding, "blockIdx.x");
  PrimFunc sched = func("matmul", {A, B, C}, body);
  auto args = runtime::make_random_args(ref, {}, 3);
  expect_equal(run(sched, args)[2], run(ref, args)[2]);
}

TEST(Scheduled, InitRunsOnceUnderSplitReduction) {
  // C[vi] counts how often the body ran since the last init: with vk = k0 * 8 + k1,
  // init must run only when k0 == 0 and k1 == 0, so the count is the full 32.
  Buffer C = Buffer::make("C", i32t, {i32(3)});
  Var i("i"), k0("k0"), k1("k1"), vi("vi"), vk("vk");
  Stmt blk = block("count", {spatial(vi, i32(3)), reduce(vk, i32(32))}, {i, k0 * 8 + k1},
                   Store::make(C, Load::make(C, {vi}) + 1, {vi}), Store::make(C, i32(0), {vi}));
  PrimFunc f = func("count", {C}, loop(i, 3, loop(k0, 4, loop(k1, 8, blk))));
  NDArray c = run(f, {NDArray(i32t, {3})})[0];
  for (int x = 0; x < 3; ++x) EXPECT_EQ(c.get_int(x), 32);
  // Reduction loop outermost (reordered): init still once per vi.
  PrimFunc g = func("count", {C}, loop(k0, 4, loop(i, 3, loop(k1, 8, blk))));
  NDArray d = run(g, {NDArray(i32t, {3})})[0];
  for (int x = 0; x < 3; ++x) EXPECT_EQ(d.get_int(x), 32);
}

TEST(Scheduled, InitWithNonZeroDomainMin) {
  // vk in [2, 6): init runs when vk == 2.
  Buffer C = Buffer::make("C", i32t, {i32(1)});
  Var k("k"), vk("vk");
  Stmt blk = Block::make("acc", {{vk, Range{i32(2), i32(4)}, IterKind::Reduce}}, {k}, Expr(), {}, {}, {},
                         Store::make(C, i32(100), {i32(0)}), Store::make(C, Load::make(C, {i32(0)}) + vk, {i32(0)}));
  PrimFunc f = func("acc", {C}, loop(k, i32(2), i32(4), blk));
  EXPECT_EQ(run(f, {NDArray(i32t, {1})})[0].get_int(0), 100 + 2 + 3 + 4 + 5);
}

TEST(Scheduled, WherePredicateGuardsTail) {
  // 10 elements split by 4: i0 in 0..3, i1 in 0..4, T.where(i0 * 4 + i1 < 10).
  Buffer A = Buffer::make("A", f32, {i32(10)}), B = Buffer::make("B", f32, {i32(10)});
  Var i0("i0"), i1("i1"), vi("vi");
  Stmt blk = block("B", {spatial(vi, i32(10))}, {i0 * 4 + i1}, Store::make(B, Load::make(A, {vi}) * 2.0, {vi}),
                   std::nullopt, i0 * 4 + i1 < 10);
  PrimFunc f = func("scale", {A, B}, loop(i0, 3, loop(i1, 4, blk)));
  auto args = runtime::make_random_args(f, {}, 4);
  auto out = run(f, args);
  for (int x = 0; x < 10; ++x) EXPECT_EQ(out[1].get(x), static_cast<double>(static_cast<float>(args[0].get(x) * 2)));
}

TEST(Scheduled, SharedAllocationPerBlockExecution) {
  // Row sums with each row staged in a shared buffer allocated by the per-row block.
  const int64_t rows = 5, cols = 12;
  Buffer A = Buffer::make("A", f32, {i32(rows), i32(cols)}), S = Buffer::make("S", f32, {i32(rows)});
  Buffer As = Buffer::make("A_shared", f32, {i32(cols)}, "shared");
  Var bx("bx"), t0("t0"), t1("t1"), vr("vr"), vc("vc"), vk("vk");
  Stmt copy = loop(t0, i32(0), i32(cols), block("A_shared", {spatial(vc, i32(cols))}, {t0},
                                                 Store::make(As, Load::make(A, {vr, vc}), {vc})),
                   ForKind::ThreadBinding, "threadIdx.x");
  Stmt sum = loop(t1, cols, block("sum", {reduce(vk, i32(cols))}, {t1},
                                  Store::make(S, Load::make(S, {vr}) + Load::make(As, {vk}), {vr}),
                                  Store::make(S, make_const(f32, 0), {vr})));
  Stmt row = block("row", {spatial(vr, i32(rows))}, {bx}, Seq::make({copy, sum}), std::nullopt, Expr(), {As});
  PrimFunc f = func("rowsum", {A, S}, loop(bx, i32(0), i32(rows), row, ForKind::ThreadBinding, "blockIdx.x"));
  auto args = runtime::make_random_args(f, {}, 5);
  auto out = run(f, args);
  for (int r = 0; r < rows; ++r) {
    float want = 0;
    for (int c = 0; c < cols; ++c) want += static_cast<float>(args[0].get(r * cols + c));
    EXPECT_EQ(out[1].get(r), want);
  }
}

TEST(Scheduled, UninitialisedAllocationReadsNaN) {
  Buffer B = Buffer::make("B", f32, {i32(2)}), T = Buffer::make("T", f32, {i32(2)});
  Var i("i");
  Stmt body = block("root2", {}, {}, loop(i, 2, block("B", {}, {}, Store::make(B, Load::make(T, {i}), {i}))),
                    std::nullopt, Expr(), {T});
  PrimFunc f = func("poison", {B}, body);
  NDArray out = run(f, {NDArray(f32, {2})})[0];
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_TRUE(std::isnan(out.get(1)));
}

TEST(Scheduled, SymbolicShapesBoundFromArrays) {
  Var m("m"), n("n"), k("k");
  PrimFunc f = matmul(m, n, k, f32, f32);
  runtime::Interpreter interp(f);
  for (auto [mm, nn, kk] : {std::tuple{3, 5, 7}, std::tuple{8, 1, 2}, std::tuple{0, 4, 4}}) {
    auto args = runtime::make_random_args(f, {{"m", mm}, {"n", nn}, {"k", kk}}, 6);
    ASSERT_EQ(args[2].shape(), (std::vector<int64_t>{mm, nn}));
    interp.run({&args[0], &args[1], &args[2]});
    for (int r = 0; r < mm; ++r)
      for (int c = 0; c < nn; ++c) {
        float want = 0;
        for (int x = 0; x < kk; ++x)
          want += static_cast<float>(args[0].get(r * kk + x)) * static_cast<float>(args[1].get(x * nn + c));
        EXPECT_EQ(args[2].get(r * nn + c), want);
      }
  }
}

TEST(Scheduled, ScalarParameters) {
  // def f(a: handle, n: int32, alpha: float32): A = match_buffer(a, (n,)); A[i] *= alpha
  Var a = handle("a"), n("n"), alpha("alpha", f32), i("i"), vi("vi");
  Buffer A = Buffer::make("A", f32, {n});
  Stmt body = loop(i, i32(0), n, block("S", {spatial(vi, n)}, {i}, Store::make(A, Load::make(A, {vi}) * alpha, {vi})));
  PrimFunc f = PrimFunc::make("scale", {a, n, alpha}, {{a, A}}, body);
  auto args = runtime::make_random_args(f, {{"n", 5}}, 2);
  ASSERT_EQ(args[0].shape(), (std::vector<int64_t>{5}));
  EXPECT_EQ(args[1].get_int(0), 5);
  NDArray before = args[0];
  run_program(f, args);
  for (int x = 0; x < 5; ++x)
    EXPECT_EQ(args[0].get(x), static_cast<double>(static_cast<float>(before.get(x)) * static_cast<float>(args[2].get(0))));
  // n disagrees with the array: error.
  args[1].set_int(0, 4);
  EXPECT_THROW(run_program(f, args), runtime::InterpretError);
}

TEST(Scheduled, NonZeroLoopMinAndNegativeExtent) {
  Buffer A = Buffer::make("A", i32t, {i32(10)});
  Var i("i"), j("j");
  Stmt s = Seq::make({loop(i, i32(2), i32(5), block("B", {}, {}, Store::make(A, i * 10, {i}))),
                      loop(j, i32(0), i32(-3), block("C", {}, {}, Store::make(A, i32(-1), {j + 100})))});
  NDArray a = run(func("f", {A}, s), {NDArray(i32t, {10})})[0];
  for (int x = 0; x < 10; ++x) EXPECT_EQ(a.get_int(x), (x >= 2 && x < 7) ? x * 10 : 0) << x;
}

TEST(Scheduled, PrefixSumAndInPlaceUpdate) {
  const int n = 50;
  Buffer A = Buffer::make("A", i32t, {i32(n)}), P = Buffer::make("P", i32t, {i32(n)});
  Var i("i"), j("j"), vi("vi");
  // P[0] = A[0]; for i in 1..n: P[i] = P[i - 1] + A[i]; then A[j] = A[j] * 2 in place.
  Stmt first = block("P0", {}, {}, Store::make(P, Load::make(A, {i32(0)}), {i32(0)}));
  Stmt scan = loop(i, i32(1), i32(n - 1), block("P", {{vi, Range{i32(1), i32(n - 1)}, IterKind::Opaque}}, {i},
                                                  Store::make(P, Load::make(P, {vi - 1}) + Load::make(A, {vi}), {vi})));
  Stmt twice = loop(j, n, block("A2", {}, {}, Store::make(A, Load::make(A, {j}) * 2, {j})));
  PrimFunc f = func("scan", {A, P}, Seq::make({first, scan, twice}));
  auto args = runtime::make_random_args(f, {}, 11);
  NDArray a0 = args[0];
  auto out = run(f, args);
  int64_t acc = 0;
  for (int x = 0; x < n; ++x) {
    acc += a0.get_int(x);
    EXPECT_EQ(out[1].get_int(x), acc);
    EXPECT_EQ(out[0].get_int(x), a0.get_int(x) * 2);
  }
}

TEST(Scheduled, StatementsIfLetEvaluate) {
  Buffer A = Buffer::make("A", i32t, {i32(6)});
  Var i("i"), x("x");
  // if i % 2 == 0: A[i] = x else: A[i] = -x, with x = i * 3
  Stmt body = LetStmt::make(x, i * 3,
                       IfThenElse::make(eq(floormod(i, i32(2)), i32(0)), Store::make(A, x, {i}),
                                        Store::make(A, neg(x), {i})));
  Stmt s = loop(i, 6, block("B", {}, {}, Seq::make({Evaluate::make(i32(0)), body})));
  NDArray a = run(func("f", {A}, s), {NDArray(i32t, {6})})[0];
  for (int v = 0; v < 6; ++v) EXPECT_EQ(a.get_int(v), v % 2 == 0 ? v * 3 : -v * 3);
}

}  // namespace
}  // namespace tessera::testing
