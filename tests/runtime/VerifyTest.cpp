//===- tests/runtime/VerifyTest.cpp - The float64 reference and its bound ---===//
//
// Verify.h's promise: a reordered reduction passes in float16, bfloat16 and
// float32, while a planted bug (a dropped term, a skipped tile, an
// off-by-one index) fails, at several sizes. The "reordered" programs are
// written out by hand the way GPU schedules sum: strided per-lane partial
// sums, then a pairwise tree.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <functional>

#include <fmt/format.h>

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Functor.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

using namespace tessera;
using runtime::NDArray;

namespace {

/// y[i] = sum_k W[i, k] * x[k], accumulated in `acc` in the serial order.
std::string serial_gemv(int m, int k, const std::string &dtype, const std::string &acc) {
  return fmt::format(R"(
@T.prim_func
def main(W: T.Buffer(({0}, {1}), "{2}"), x: T.Buffer(({1},), "{2}"), y: T.Buffer(({0},), "{2}")):
    s = T.alloc_buffer(({0},), "{3}")
    for i, k in T.grid({0}, {1}):
        with T.block("s"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.{3}(0)
            s[vi] = s[vi] + T.Cast("{3}", W[vi, vk]) * T.Cast("{3}", x[vk])
    for i in range({0}):
        with T.block("y"):
            vi = T.axis.remap("S", [i])
            y[vi] = T.Cast("{2}", s[vi])
)",
                     m, k, dtype, acc);
}

enum class Bug { None, SkipLane, DropLastTerm, OffByOne, DropOneTerm };

/// The same product summed as a GPU would: 128 lanes each sum every 128th
/// term, then the lanes are combined pairwise. `bug` plants a mistake.
std::string tree_gemv(int m, int k, const std::string &dtype, const std::string &acc, Bug bug) {
  std::string lane_guard = bug == Bug::SkipLane       ? "if t != 5:"
                           : bug == Bug::DropOneTerm ? "if t != 5 or j != 0:"
                                                     : "if t >= 0:";
  std::string col = "j * 128 + t";
  std::string x_col = bug == Bug::OffByOne ? "T.min(j * 128 + t + 1, {1} - 1)" : col;
  std::string steps = bug == Bug::DropLastTerm ? "{1} // 128 - 1" : "{1} // 128";
  std::string text = R"(
@T.prim_func
def main(W: T.Buffer(({0}, {1}), "{2}"), x: T.Buffer(({1},), "{2}"), y: T.Buffer(({0},), "{2}")):
    p = T.alloc_buffer(({0}, 128), "{3}")
    for i, t in T.grid({0}, 128):
        p[i, t] = T.{3}(0)
        for j in range()" + steps + R"():
            )" + lane_guard + R"(
                p[i, t] = p[i, t] + T.Cast("{3}", W[i, )" + col + R"(]) * T.Cast("{3}", x[)" + x_col + R"(])
    for i, level, t in T.grid({0}, 7, 64):
        if t < (64 >> level):
            p[i, t] = p[i, t] + p[i, t + (64 >> level)]
    for i in range({0}):
        y[i] = T.Cast("{2}", p[i, 0])
)";
  return fmt::vformat(text, fmt::make_format_args(m, k, dtype, acc));
}

/// Runs `candidate` on the inputs of `original` and checks it against
/// original's float64 reference.
runtime::OutputCheck check(const std::string &original, const std::string &candidate, uint64_t seed = 1) {
  ir::PrimFunc f = script::parse_func(original, "original.py");
  ir::PrimFunc g = script::parse_func(candidate, "candidate.py");
  std::vector<NDArray> args = runtime::make_random_args(f, {}, seed);
  runtime::Reference ref = runtime::compute_reference(f, args);
  runtime::interpret(g, args);
  std::vector<runtime::OutputCheck> checks = runtime::check_outputs(f, args, ref);
  EXPECT_EQ(checks.size(), 1u);
  return checks.at(0);
}

struct Case {
  std::string dtype, acc;
  int m, k;
};

class ReorderedSum : public ::testing::TestWithParam<Case> {};

TEST_P(ReorderedSum, PassesAndPlantedBugsFail) {
  const Case &c = GetParam();
  std::string original = serial_gemv(c.m, c.k, c.dtype, c.acc);
  // The original in its own precision and the reordered sum both pass.
  runtime::OutputCheck self = check(original, original);
  EXPECT_TRUE(self.ok) << self.str();
  runtime::OutputCheck tree = check(original, tree_gemv(c.m, c.k, c.dtype, c.acc, Bug::None));
  EXPECT_TRUE(tree.ok) << tree.str();
  // Each planted bug fails: a skipped lane (K/128 terms), each lane's last
  // term, x read one element off; and a single dropped term where the sum is
  // accumulated in float32 (in float16 over thousands of terms, rounding
  // alone moves a correct sum by about one term).
  std::vector<Bug> bugs = {Bug::SkipLane, Bug::DropLastTerm, Bug::OffByOne};
  if (c.acc == "float32") bugs.push_back(Bug::DropOneTerm);
  for (Bug bug : bugs) {
    runtime::OutputCheck b = check(original, tree_gemv(c.m, c.k, c.dtype, c.acc, bug));
    EXPECT_FALSE(b.ok) << "bug " << int(bug) << " passed: " << b.str();
    EXPECT_GT(b.failures, 0);
    EXPECT_GT(b.ratio, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Verify, ReorderedSum,
                         ::testing::Values(Case{"float16", "float16", 512, 4096}, Case{"float16", "float32", 64, 4096},
                                           Case{"bfloat16", "float32", 64, 1024}, Case{"float32", "float32", 64, 4096},
                                           Case{"float32", "float32", 16, 256}, Case{"float16", "float16", 64, 512}),
                         [](const auto &info) {
                           return info.param.dtype + "_acc_" + info.param.acc + "_" + std::to_string(info.param.k);
                         });

/// The bound of a float16 sum over 4096 terms: about what rounding in the
/// program's own (serial) order can do, well below a skipped 32-term lane:
/// the numbers the header quotes.
TEST(Verify, Float16GemvBoundIsBetweenReorderingAndATile) {
  std::string original = serial_gemv(512, 4096, "float16", "float16");
  runtime::OutputCheck tree = check(original, tree_gemv(512, 4096, "float16", "float16", Bug::None));
  EXPECT_TRUE(tree.ok) << tree.str();
  EXPECT_GT(tree.bound, 1) << tree.str();
  EXPECT_LT(tree.bound, 5) << tree.str();
  runtime::OutputCheck lane = check(original, tree_gemv(512, 4096, "float16", "float16", Bug::SkipLane));
  EXPECT_GT(lane.failures, 20) << lane.str();
}

TEST(Verify, ExplicitCastsKeepTheirRounding) {
  // y = float32(float16(x)) * 3: the reference rounds through float16 too, so
  // the float16 rounding is part of the value, not of the error.
  std::string f = R"(
@T.prim_func
def main(x: T.Buffer((1000,), "float32"), y: T.Buffer((1000,), "float32")):
    for i in range(1000):
        with T.block("y"):
            vi = T.axis.remap("S", [i])
            y[vi] = T.Cast("float32", T.Cast("float16", x[vi])) * T.float32(3)
)";
  runtime::OutputCheck c = check(f, f);
  EXPECT_TRUE(c.ok) << c.str();
  // Without the float16 step the result is off by up to a float16 rounding,
  // far more than one float32 multiplication explains: wrong.
  std::string g = R"(
@T.prim_func
def main(x: T.Buffer((1000,), "float32"), y: T.Buffer((1000,), "float32")):
    for i in range(1000):
        with T.block("y"):
            vi = T.axis.remap("S", [i])
            y[vi] = x[vi] * T.float32(3)
)";
  EXPECT_FALSE(check(f, g).ok);
}

TEST(Verify, AnErrorAddedOnEveryStepCountsOncePerStep) {
  // Chained reductions: each adds the previous one's value (the same element,
  // the same error) on every step, so that error grows with the steps, not
  // with their square root. The program run as written is within its bound
  // (it was not, 1.8x, when those errors were taken as independent), and a
  // kernel that drops one step of the last reduction is not.
  auto program = [](int last_steps) {
    return fmt::format(R"(
@T.prim_func
def main(A: T.Buffer((16, 16, 16), "float32"), F: T.Buffer((16, 16), "float32")):
    C = T.alloc_buffer((16, 16))
    D = T.alloc_buffer((16, 16))
    E = T.alloc_buffer((16, 16))
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vj, vk]
    for i, j, k in T.grid(16, 16, 16):
        with T.block("D"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = D[vi, vj] + A[vi, vj, vk] + C[vi, vj]
    for i, j, k in T.grid(16, 16, 16):
        with T.block("E"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                E[vi, vj] = T.float32(0)
            E[vi, vj] = E[vi, vj] + A[vi, vj, vk] + D[vi, vj]
    for i, j, k in T.grid(16, 16, {0}):
        with T.block("F"):
            vi, vj = T.axis.remap("SS", [i, j])
            vk = T.axis.reduce(16, k)
            with T.init():
                F[vi, vj] = T.float32(0)
            F[vi, vj] = F[vi, vj] + A[vi, vj, vk] + E[vi, vj]
)",
                       last_steps);
  };
  for (uint64_t seed : {1, 2, 3}) {
    runtime::OutputCheck c = check(program(16), program(16), seed);
    EXPECT_TRUE(c.ok) << c.str();
    EXPECT_FALSE(check(program(16), program(15), seed).ok);
  }
}

TEST(Verify, ANaNReferenceSaysTheProgramReadsWhatNothingWrote) {
  // C is written on [0, 4) only; D reads all of it.
  std::string f = R"(
@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi]
    for i in range(8):
        with T.block("D"):
            vi = T.axis.remap("S", [i])
            D[vi] = C[vi]
)";
  ir::PrimFunc p = script::parse_func(f);
  std::vector<NDArray> args = runtime::make_random_args(p, {}, 1);
  runtime::Reference ref = runtime::compute_reference(p, args);
  for (int64_t i = 0; i < 8; ++i) args[1].set(i, 1.0);  // a kernel that wrote numbers everywhere
  runtime::OutputCheck c = runtime::check_outputs(p, args, ref).at(0);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.str().find("the reference is NaN: the original program reads an intermediate element no block wrote"),
            std::string::npos)
      << c.str();
}

TEST(Verify, TranscendentalsAndDivisionPassInTheirOwnPrecision) {
  std::string f = R"(
@T.prim_func
def main(x: T.Buffer((64, 256), "float16"), y: T.Buffer((64, 256), "float16")):
    m = T.alloc_buffer((64,), "float32")
    s = T.alloc_buffer((64,), "float32")
    for i, k in T.grid(64, 256):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                m[vi] = T.float32(-3.4e38)
            m[vi] = T.max(m[vi], T.Cast("float32", x[vi, vk]))
    for i, k in T.grid(64, 256):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + T.exp(T.Cast("float32", x[vi, vk]) - m[vi])
    for i, k in T.grid(64, 256):
        with T.block("y"):
            vi, vk = T.axis.remap("SS", [i, k])
            y[vi, vk] = T.Cast("float16", T.exp(T.Cast("float32", x[vi, vk]) - m[vi]) / s[vi] + T.sqrt(T.Cast("float32", x[vi, vk]) * T.Cast("float32", x[vi, vk])))
)";
  runtime::OutputCheck c = check(f, f);
  EXPECT_TRUE(c.ok) << c.str();
  EXPECT_GT(c.bound, 0);
}

TEST(Verify, NonFiniteAndIntegerOutputsMustMatchExactly) {
  NDArray ref(ir::DataType::float64(), {3}), var(ir::DataType::float64(), {3});
  NDArray got(ir::DataType::float32(), {3});
  ref.set(0, INFINITY);
  ref.set(1, NAN);
  ref.set(2, 1.0);
  got.set(0, INFINITY);
  got.set(1, NAN);
  got.set(2, 1.0);
  EXPECT_TRUE(runtime::check_output("y", got, ref, var).ok);
  got.set(0, -INFINITY);
  runtime::OutputCheck c = runtime::check_output("y", got, ref, var);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.worst_index, std::vector<int64_t>{0});
  got.set(0, INFINITY);
  got.set(2, NAN);  // NaN where the reference is finite
  EXPECT_FALSE(runtime::check_output("y", got, ref, var).ok);

  NDArray ints(ir::DataType::int32(), {2, 2}), want(ir::DataType::int32(), {2, 2});
  want.set_int(3, 7);
  c = runtime::check_output("n", ints, want, NDArray());
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.failures, 1);
  EXPECT_EQ(c.worst_index, (std::vector<int64_t>{1, 1}));
  EXPECT_NE(c.str().find("n[1, 1]"), std::string::npos) << c.str();
}

TEST(Verify, ShapeMismatchIsAUserError) {
  NDArray a(ir::DataType::float32(), {3}), b(ir::DataType::float64(), {4});
  EXPECT_THROW(runtime::check_output("y", a, b, NDArray()), UserError);
}

TEST(Verify, LargeOutputsAreCheckedInParallelWithTheSameVerdict) {
  // 2^21 elements take the threaded path; plant one bad element near the end.
  int64_t n = int64_t(1) << 21;
  NDArray ref(ir::DataType::float64(), {n}), var(ir::DataType::float64(), {n}), got(ir::DataType::float32(), {n});
  for (int64_t i = 0; i < n; ++i) {
    ref.set(i, double(i % 97) / 7);
    got.set(i, double(i % 97) / 7);
  }
  EXPECT_TRUE(runtime::check_output("y", got, ref, var).ok);
  got.set(n - 3, 1e3);
  runtime::OutputCheck c = runtime::check_output("y", got, ref, var);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.failures, 1);
  EXPECT_EQ(c.worst_index, std::vector<int64_t>{n - 3});
}

/// The 5 x 7 outputs (parameter `out`) of a matmul reference over 33 terms,
/// A (parameter 0) row-major 5 x 33 and B's element (k, j) at `b_at(k, j)`
/// of parameter 1, computed by both CPU oracles: each the bits of a plain
/// k loop.
void expect_k_order_sums(const ir::PrimFunc &f, const std::vector<NDArray> &args, size_t out,
                         const std::function<int64_t(int64_t, int64_t)> &b_at) {
  for (runtime::Oracle oracle : {runtime::Oracle::Interpreter, runtime::Oracle::Llvm}) {
    if (oracle == runtime::Oracle::Llvm && !runtime::llvm_jit_available()) continue;
    runtime::Reference ref = runtime::compute_reference(f, args, oracle);
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 7; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < 33; ++k) sum += args[0].get(i * 33 + k) * args[1].get(b_at(k, j));
        EXPECT_EQ(ref.values[out].get(i * 7 + j), sum) << i << ", " << j << " in " << runtime::oracle_name(oracle);
      }
  }
}

TEST(Verify, TheReferenceOfAMatmulSumsInKOrderWithItsOutputsInterleaved) {
  // make_reference_program moves the column loop below K (for i, k, j:
  // InterchangeReductions.h), the init before it in a loop of its own, so
  // the JIT vectorizes across outputs; every
  // output still sums its terms in k order: the bits of a plain k loop. A
  // row sum, whose reduction is the contiguous axis, keeps its order.
  ir::PrimFunc mm = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((5, 33), "float32"), B: T.Buffer((33, 7), "float32"), C: T.Buffer((5, 7), "float32")):
    for i, j, k in T.grid(5, 7, 33):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  std::vector<std::string> order;
  ir::pre_order_visit(runtime::make_reference_program(mm).func.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *l = s.as<ir::For>()) order.push_back(l->loop_var.name());
  });
  // (The init in a loop of its own first: the update loop is straight code.)
  EXPECT_EQ(order, (std::vector<std::string>{"i", "j_init", "k", "j"}));
  expect_k_order_sums(mm, runtime::make_random_args(mm, {}, 11), 2, [](int64_t k, int64_t j) { return k * 7 + j; });
  ir::PrimFunc row_sum = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
)");
  order.clear();
  ir::pre_order_visit(runtime::make_reference_program(row_sum).func.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *l = s.as<ir::For>()) order.push_back(l->loop_var.name());
  });
  EXPECT_EQ(order, (std::vector<std::string>{"i", "k"}));
  // A sum of exps (softmax's): rows in groups of 16, the group's loop below
  // k (the exps of 16 rows side by side), each row still summed in k order —
  // the bits of the program itself run in float64 by the interpreter.
  ir::PrimFunc exp_sum = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((37, 20), "float64"), B: T.Buffer((37,), "float64")):
    for i, k in T.grid(37, 20):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float64(0)
            B[vi] = B[vi] + T.exp(A[vi, vk])
)");
  order.clear();
  ir::pre_order_visit(runtime::make_reference_program(exp_sum).func.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *l = s.as<ir::For>()) order.push_back(l->loop_var.name());
  });
  EXPECT_EQ(order, (std::vector<std::string>{"i_0", "i_1_init", "k", "i_1"}));
  std::vector<NDArray> args = runtime::make_random_args(exp_sum, {}, 4);
  std::vector<NDArray> plain = args;
  runtime::interpret(exp_sum, plain);
  for (runtime::Oracle oracle : {runtime::Oracle::Interpreter, runtime::Oracle::Llvm}) {
    if (oracle == runtime::Oracle::Llvm && !runtime::llvm_jit_available()) continue;
    runtime::Reference ref = runtime::compute_reference(exp_sum, args, oracle);
    for (int64_t i = 0; i < 37; ++i) EXPECT_EQ(ref.values[1].get(i), plain[1].get(i)) << i << " in " << runtime::oracle_name(oracle);
  }
}

TEST(Verify, TheReferenceOfAnNtMatmulReadsATransposedCopyAfterABlockWithTheSameLoopNames) {
  // C = A B^T: no operand is contiguous along j, so B is first copied with
  // its j dimension last (B_global[k, j]) and j moves below k. The epilogue
  // block before it loops over the same names (i, j), which the schedule
  // renames: the interchange must still find the matmul's loops. Each output
  // still sums in k order: the bits of a plain loop.
  ir::PrimFunc nt = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((5, 33), "float32"), B: T.Buffer((7, 33), "float32"), D: T.Buffer((5, 7), "float32"), C: T.Buffer((5, 7), "float32")):
    for i, j in T.grid(5, 7):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = A[vi, 0] + B[vj, 0]
    for i, j, k in T.grid(5, 7, 33):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
)");
  runtime::ReferenceProgram p = runtime::make_reference_program(nt);
  // The inputs A and B are exact: no companions; the outputs D and C have
  // both, after the four parameters.
  EXPECT_EQ(p.variance_param, (std::vector<int>{-1, -1, 4, 6}));
  EXPECT_EQ(p.squares_param, (std::vector<int>{-1, -1, 5, 7}));
  EXPECT_EQ(p.func.params().size(), 8u);
  std::vector<std::string> order;
  bool copied = false;
  ir::pre_order_visit(p.func.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *l = s.as<ir::For>()) order.push_back(l->loop_var.name());
    if (const auto *b = s.as<ir::Block>()) copied = copied || b->name == "B_global";
  });
  EXPECT_TRUE(copied) << script::print(p.func);
  ASSERT_GE(order.size(), 4u);
  EXPECT_EQ(std::vector<std::string>(order.end() - 4, order.end()),
            (std::vector<std::string>{"i_1", "j_1_init", "k", "j_1"}))
      << script::print(p.func);
  std::vector<NDArray> args = runtime::make_random_args(nt, {}, 5);
  expect_k_order_sums(nt, args, 3, [](int64_t k, int64_t j) { return j * 33 + k; });
  runtime::Reference ref = runtime::compute_reference(nt, args);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 7; ++j)
      EXPECT_EQ(ref.values[2].get(i * 7 + j), args[0].get(i * 33) + args[1].get(j * 33));
}

}  // namespace
