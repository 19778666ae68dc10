//===- LlvmJitTest.cpp - The LLVM JIT: same answers, same errors -----------===//
//
// What is particular to the JIT: warp-level statements through the
// interpreter's per-lane code, argument
// and bounds errors with the interpreter's text and no write outside the
// arrays, float16/bfloat16 bit for bit, the structural cache, arrays that
// overlap. The exact per-dtype semantics are the interpreter's own suites run
// with the JIT (tessera_runtime_test_llvm, tests/runtime/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "Programs.h"
#include "tessera/ir/AccessRegions.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/support/DataPaths.h"

namespace tessera::testing {
namespace {

using runtime::InterpretError;
using runtime::LlvmJit;
using runtime::NDArray;
const DataType f32 = DataType::float32(), f16 = DataType::float16(), bf16 = DataType::bfloat16(),
               i32t = DataType::int32();

std::vector<NDArray *> ptrs(std::vector<NDArray> &args) {
  std::vector<NDArray *> p;
  for (NDArray &a : args) p.push_back(&a);
  return p;
}

/// Runs the JIT on `n` threads within a scope.
struct JitThreads {
  explicit JitThreads(unsigned n) : saved(runtime::llvm_jit_threads()) { runtime::set_llvm_jit_threads(n); }
  ~JitThreads() { runtime::set_llvm_jit_threads(saved); }
  unsigned saved;
};

/// B[i] = A[i + 1] over a symbolic n: one element past A at the end.
const char *const kOffByOne = R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            vi = T.axis.spatial(n, i)
            B[vi] = A[vi + 1]
)";

/// The message of the InterpretError that running `f` in the JIT throws.
std::string jit_error(const PrimFunc &f, std::vector<NDArray> args) {
  try {
    LlvmJit(f).run(ptrs(args));
  } catch (const InterpretError &e) {
    return e.what();
  }
  return "(no error)";
}

/// The message of the InterpretError the interpreter throws on `args`.
std::string interpreter_error(const PrimFunc &f, std::vector<NDArray> args) {
  try {
    runtime::interpret(f, args);
  } catch (const InterpretError &e) {
    return e.what();
  }
  return "(no error)";
}

/// Interpreter and JIT on the same random inputs leave the same bytes.
void expect_same_bits(const PrimFunc &f, const runtime::DimBindings &dims, uint64_t seed) {
  std::vector<NDArray> want = runtime::make_random_args(f, dims, seed), got = want;
  runtime::interpret(f, want);
  LlvmJit(f).run(ptrs(got));
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].nbytes(), got[i].nbytes());
    EXPECT_EQ(std::memcmp(want[i].data(), got[i].data(), want[i].nbytes()), 0) << "argument " << i;
  }
}

/// for i in 0..4, j in 0..cols: block C { B[i, j] = A[i, j] }
PrimFunc copy2d(int64_t cols_a, int64_t cols_loop, int64_t cols_b) {
  Buffer A = Buffer::make("A", f32, {i32(4), i32(cols_a)}), B = Buffer::make("B", f32, {i32(4), i32(cols_b)});
  Var i("i"), j("j");
  return func("copy", {A, B}, loop(i, 4, loop(j, cols_loop, block("C", {}, {}, Store::make(B, Load::make(A, {i, j}), {i, j})))));
}

TEST(LlvmJit, IsBuilt) { EXPECT_TRUE(runtime::llvm_jit_available()); }

TEST(LlvmJit, RunsWarpAndAsyncStatementsAsTheInterpreterDoes) {
  // ldmatrix, mma.sync and the cp.async pipeline run the interpreter's own
  // per-lane code (JitRuntime.h, WarpStatement) inside the compiled loops:
  // the golden tensor-core kernel gives the interpreter's bits, and a copy
  // never waited for is the interpreter's error.
  PrimFunc mma = script::parse_file(support::data_root() / "tests" / "codegen" / "kernels" / "matmul_tensor_core_f16.py")
                     .funcs.at(0);
  expect_same_bits(mma, {}, 9);
  std::vector<NDArray> mma_args = runtime::make_random_args(mma, {}, 9);
  EXPECT_EQ(runtime::execute(mma, mma_args, runtime::Oracle::Auto), runtime::Oracle::Llvm);
  Buffer A = Buffer::make("A", f32, {i32(4)}), S = Buffer::make("S", f32, {i32(4)}, "shared");
  Var i("i"), vi("vi");
  Stmt copy = Evaluate::make(Call::make(i32t, Intrinsic::CpAsync,
                                        {Load::make(S, {i32(0)}), Load::make(A, {i32(0)}), i32(16), i32(16)}));
  Stmt commit = Evaluate::make(Call::make(i32t, Intrinsic::CpAsyncCommit, {}));
  PrimFunc unwaited = func("async", {A, S}, loop(i, 1, block("E", {spatial(vi, i32(1))}, {i}, Seq::make({copy, commit}))));
  std::vector<NDArray> args{NDArray(f32, {4}), NDArray(f32, {4})};
  const std::string want = interpreter_error(unwaited, args);
  EXPECT_NE(want.find("ends with 1 cp.async copies never waited for"), std::string::npos) << want;
  EXPECT_EQ(jit_error(unwaited, args), want);
}

TEST(LlvmJit, CopiesInFlightAcrossParallelIterationsRunInTheSerialOrder) {
  // Each iteration's copy lands at the next one's wait: on two threads the
  // chunks would strand copies, so the run is done again on one (the output
  // restored first) and gives the interpreter's bits; a loop whose copies
  // are waited for within each iteration runs in parallel.
  JitThreads two(2);
  for (const char *wait : {"1", "0"}) {
    PrimFunc f = script::parse_func(std::string(R"(
@T.prim_func
def main(A: T.Buffer((16384, 4), "float32"), B: T.Buffer((16384, 4), "float32")):
    for i in range(16384):
        with T.block("copy"):
            vi = T.axis.spatial(16384, i)
            T.evaluate(T.cp_async(B[vi, 0], A[vi, 0], 16, 16))
            T.evaluate(T.cp_async_commit_group())
            T.evaluate(T.cp_async_wait_group()") + wait + R"())
    T.evaluate(T.cp_async_wait_group(0))
)");
    // B is written only through T.cp_async: an output all the same (it is
    // what a serial run restores, and what verification checks).
    EXPECT_EQ(ir::written_params(f), (std::vector<bool>{false, true}));
    expect_same_bits(f, {}, 3);
  }
}

TEST(LlvmJit, ArgumentErrorsAreTheInterpreters) {
  PrimFunc f = copy2d(4, 4, 4);
  EXPECT_EQ(jit_error(f, {NDArray(f32, {4, 4})}), "function 'copy' takes 2 arguments, got 1");
  EXPECT_EQ(jit_error(f, {NDArray(f32, {4, 4}), NDArray(f16, {4, 4})}),
            "argument 1 ('B'): buffer 'B' has dtype float32 but the array is float16[4, 4]");
  EXPECT_EQ(jit_error(f, {NDArray(f32, {16}), NDArray(f32, {4, 4})}),
            "argument 0 ('A'): buffer 'A' has 2 dimensions but the array is float32[16]");
  EXPECT_EQ(jit_error(f, {NDArray(f32, {4, 4}), NDArray(f32, {4, 5})}),
            "shape mismatch for buffer 'B' dimension 1: expected 4, got 5 (array float32[4, 5])");
}


TEST(LlvmJit, OutOfBoundsStopsBeforeTouchingMemory) {
  // Rows of 129 read from rows of 128: A[0, 128] is the first bad load; B is
  // written up to B[0, 127] and not beyond. (On one thread: on several, the
  // rows after the failing one may have been copied meanwhile.)
  JitThreads one(1);
  PrimFunc f = copy2d(128, 129, 129);
  std::vector<NDArray> args{NDArray(f32, {4, 128}), NDArray(f32, {4, 129})};
  for (int64_t k = 0; k < args[0].numel(); ++k) args[0].set(k, 1.0);
  EXPECT_EQ(jit_error(f, args), "out-of-bounds load A[0, 128] (shape [4, 128]) in block 'C'");
  LlvmJit jit(f);
  EXPECT_THROW(jit.run(ptrs(args)), InterpretError);
  EXPECT_EQ(args[1].get(127), 1.0);
  EXPECT_EQ(args[1].get(128), 0.0);
  EXPECT_EQ(args[1].get(129), 0.0);
  EXPECT_EQ(jit_error(copy2d(129, 129, 128), {NDArray(f32, {4, 129}), NDArray(f32, {4, 128})}),
            "out-of-bounds store to B[0, 128] (shape [4, 128]) in block 'C'");
}

TEST(LlvmJit, IndependentLoopsOnSeveralThreadsGiveTheSerialResultAndError) {
  // More threads than this machine has cores: chunks of one row, taken in
  // any order.
  JitThreads four(4);
  Var m("m"), n("n");
  expect_same_bits(matmul(m, n, i32(37), f32, f32), {{"m", 19}, {"n", 23}}, 7);
  // GPU blocks, each staging its slice in a shared tile allocated at the
  // root: every worker has its own tile.
  PrimFunc blocks = script::parse_func(R"(
@T.prim_func
def f(A: T.Buffer((1048576,), "float32"), B: T.Buffer((1048576,), "float32")):
    A_shared = T.alloc_buffer((256,), "float32", scope="shared")
    for bx in T.thread_binding(4096, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("load"):
                v = T.axis.spatial(1048576, bx * 256 + tx)
                A_shared[v % 256] = A[v] * T.float32(2)
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("store"):
                v = T.axis.spatial(1048576, bx * 256 + tx)
                B[v] = A_shared[255 - v % 256] + A_shared[v % 256]
)");
  for (uint64_t seed = 0; seed < 3; ++seed) expect_same_bits(blocks, {}, seed);
  // Memory all blocks see, in a scope of TVM's ("global.vtcm"): one kernel
  // writes it, the next reads it.
  expect_same_bits(script::parse_func(R"(
@T.prim_func
def f(a: T.Buffer((4096,), "int8"), c: T.Buffer((4096,), "int8")):
    B = T.alloc_buffer([4096], dtype="int8", scope="global.vtcm")
    for bx in T.thread_binding(4096, thread="blockIdx.x"):
        with T.sblock("B"):
            B[bx] = a[bx] * T.int8(2)
    for bx in T.thread_binding(4096, thread="blockIdx.x"):
        with T.sblock("C"):
            c[bx] = B[bx] * T.int8(3)
)"),
                   {}, 1);
  // Every iteration from i = 14 on reads past A: the error is the first
  // one's, as the interpreter's, however the chunks fall.
  PrimFunc shifted = script::parse_func(R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((100,), "float32")):
    for i in range(100):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi + 50]
)");
  std::string want;
  try {
    std::vector<NDArray> args = runtime::make_random_args(shifted, {}, 1);
    runtime::interpret(shifted, args);
  } catch (const InterpretError &e) {
    want = e.what();
  }
  EXPECT_EQ(want, "out-of-bounds load A[64] (shape [64]) in block 'B'");
  for (int run = 0; run < 20; ++run) EXPECT_EQ(jit_error(shifted, runtime::make_random_args(shifted, {}, 1)), want);
}

TEST(LlvmJit, MatmulBitForBitWithSymbolicSizes) {
  Var m("m"), n("n");
  expect_same_bits(matmul(m, n, i32(37), f32, f32), {{"m", 19}, {"n", 23}}, 1);
  expect_same_bits(matmul(i32(16), i32(24), i32(40), f16, f16), {}, 2);
  expect_same_bits(matmul(i32(16), i32(24), i32(40), f16, f32), {}, 3);
  expect_same_bits(matmul(i32(16), i32(24), i32(40), bf16, bf16), {}, 4);
  expect_same_bits(matmul(i32(9), i32(10), i32(11), DataType::int_(8), i32t), {}, 5);
  expect_same_bits(matmul(i32(9), i32(10), i32(11), DataType::float64(), DataType::float64()), {}, 6);
}

TEST(LlvmJit, HalfAndBFloat16MathRoundsLikeTheInterpreter) {
  for (DataType t : {f16, bf16}) {
    Buffer A = Buffer::make("A", t, {i32(64)}), B = Buffer::make("B", t, {i32(64)});
    Var i("i"), vi("vi");
    Expr a = Load::make(A, {vi});
    Expr v = call(Intrinsic::Exp, {a}) / (a + make_const(t, 3)) + call(Intrinsic::Tanh, {a * a}) -
             cast(t, cast(f32, a) * make_const(f32, 1.1)) + call(Intrinsic::Sqrt, {call(Intrinsic::Abs, {a})});
    PrimFunc f = func("h", {A, B}, loop(i, 64, block("H", {spatial(vi, i32(64))}, {i}, Store::make(B, v, {vi}))));
    expect_same_bits(f, {}, 7);
  }
}

TEST(LlvmJit, MaxAndMinOfAbsoluteValues) {
  // max(|0|, |a|) and friends: the shape of the verification bound's rounding
  // term, which LLVM 19.1.7's InstCombine folds to `a > 0 ? |a| : 0` when
  // written as the interpreter writes it (Codegen.cpp float_binary).
  for (DataType t : {f32, DataType::float64()}) {
    Buffer A = Buffer::make("A", t, {i32(64)}), B = Buffer::make("B", t, {i32(64)}), C = Buffer::make("C", t, {i32(64)});
    Var i("i"), vi("vi");
    Expr a = call(Intrinsic::Abs, {Load::make(A, {vi})}), zero = call(Intrinsic::Abs, {make_const(t, 0)});
    Stmt body = Seq::make({Store::make(B, max(zero, a), {vi}), Store::make(C, min(make_const(t, 0), -a), {vi})});
    PrimFunc f = func("m", {A, B, C}, loop(i, 64, block("M", {spatial(vi, i32(64))}, {i}, body)));
    std::vector<NDArray> args = runtime::make_random_args(f, {}, 11);
    for (int64_t k = 0; k < 64; ++k) args[0].set(k, k % 2 ? -1.5 - k : 0.25 + k);
    LlvmJit(f).run(ptrs(args));
    for (int64_t k = 0; k < 64; ++k) {
      EXPECT_EQ(args[1].get(k), std::abs(args[0].get(k))) << k;
      EXPECT_EQ(args[2].get(k), -std::abs(args[0].get(k))) << k;
    }
    expect_same_bits(f, {}, 12);
  }
}

TEST(LlvmJit, HalfAndBFloat16SpecialValuesBitForBit) {
  // NaNs with payloads (quiet and signalling), infinities, subnormals, the
  // largest finite values, ties: loaded, rounded after arithmetic, converted,
  // reinterpreted and stored, against the interpreter's bits (NaN for NaN).
  const std::vector<uint16_t> patterns = {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0x7bff,
                                          0xfbff, 0x7c00, 0xfc00, 0x7c01, 0x7e00, 0xfe00, 0x7e55, 0x7f80, 0xff80,
                                          0x7f81, 0x7fc0, 0xffc1, 0x0080, 0x007f, 0x7f7f, 0x3f80, 0x3f81, 0xc2f7};
  for (DataType t : {f16, bf16}) {
    int64_t n = int64_t(patterns.size());
    Buffer A = Buffer::make("A", t, {i32(n)}), B = Buffer::make("B", t, {i32(n)}), C = Buffer::make("C", f32, {i32(n)}),
           D = Buffer::make("D", DataType::uint(16), {i32(n)}), E = Buffer::make("E", t, {i32(n)}),
           F = Buffer::make("F", t, {i32(n)}), G = Buffer::make("G", f32, {i32(n)}),
           H = Buffer::make("H", t, {i32(n)}), I = Buffer::make("I", t, {i32(n)});
    Var i("i"), vi("vi");
    Expr a = Load::make(A, {vi});
    // Every pattern against every other (the reversed list), in a max stored
    // as it is and a min fed on to arithmetic (the JIT does not round them).
    Expr other = Load::make(A, {i32(n - 1) - vi});
    Stmt body = Seq::make({Store::make(B, a * make_const(t, 1.5) + a, {vi}), Store::make(C, cast(f32, a), {vi}),
                           Store::make(F, a, {vi}), Store::make(G, Load::make(C, {vi}), {vi}),
                           Store::make(D, Call::make(DataType::uint(16), Intrinsic::Reinterpret, {a}), {vi}),
                           Store::make(E, cast(t, cast(f32, a) * make_const(f32, 1.0009765625)), {vi}),
                           Store::make(H, max(a, other), {vi}),
                           Store::make(I, min(a, other) * make_const(t, 3.0) + a, {vi})});
    PrimFunc f = func("special", {A, B, C, D, E, F, G, H, I}, loop(i, n, block("S", {spatial(vi, i32(n))}, {i}, body)));
    std::vector<NDArray> want = runtime::make_random_args(f, {}, 3);
    for (int64_t k = 0; k < n; ++k) std::memcpy(want[0].data() + 2 * k, &patterns[size_t(k)], 2);
    std::vector<NDArray> got = want;
    runtime::interpret(f, want);
    LlvmJit(f).run(ptrs(got));
    for (size_t a = 1; a < want.size(); ++a)
      for (int64_t k = 0; k < n; ++k) {
        size_t eb = size_t(want[a].dtype().bytes());
        // A NaN for a NaN (payloads are not part of the contract: LlvmJit.h).
        if (want[a].dtype().is_float() && std::isnan(want[a].get(k))) {
          EXPECT_TRUE(std::isnan(got[a].get(k))) << t.str() << " argument " << a << " element " << k;
          continue;
        }
        EXPECT_EQ(std::memcmp(want[a].data() + k * eb, got[a].data() + k * eb, eb), 0)
            << t.str() << " argument " << a << " element " << k << " (input bits 0x" << std::hex << patterns[size_t(k)]
            << ")";
      }
  }
}

TEST(LlvmJit, EachRunPoisonsItsIntermediatesAfresh) {
  // T is written where A is positive, then copied out whole: the first run
  // writes all of it; the second writes none, and must read poison (NaN) in
  // every element, not what the first run left in the memory the compiled
  // function keeps. Sizes that are not a power of two, so that the fill's
  // doubling copies end in a partial piece.
  for (auto [dtype, n] : {std::pair{"float32", 64}, {"float32", 1000}, {"float16", 301}, {"float64", 33}}) {
    SCOPED_TRACE(fmt::format("{} x {}", dtype, n));
    PrimFunc f = script::parse_func(fmt::format(R"(
@T.prim_func
def main(A: T.Buffer(({n},), "{t}"), B: T.Buffer(({n},), "{t}")) -> None:
    t = T.alloc_buffer(({n},), "{t}")
    for i in range({n}):
        with T.block("partly"):
            vi = T.axis.spatial({n}, i)
            if A[vi] > T.{t}(0):
                t[vi] = A[vi]
    for i in range({n}):
        with T.block("out"):
            vi = T.axis.spatial({n}, i)
            B[vi] = t[vi]
)",
                                                    fmt::arg("n", n), fmt::arg("t", dtype)));
    LlvmJit jit(f);
    std::vector<NDArray> args = runtime::make_random_args(f, {}, 1);
    for (int64_t k = 0; k < n; ++k) args[0].set(k, 1.0 + double(k));
    jit.run(ptrs(args));
    for (int64_t k = 0; k < n; ++k) ASSERT_EQ(args[1].get(k), 1.0 + double(k));
    for (int64_t k = 0; k < n; ++k) args[0].set(k, -1.0);
    jit.run(ptrs(args));
    for (int64_t k = 0; k < n; ++k) EXPECT_TRUE(std::isnan(args[1].get(k))) << k << ": " << args[1].get(k);
    // The interpreter poisons the same way.
    std::vector<NDArray> interp = args;
    runtime::Interpreter(f).run(ptrs(interp));
    for (int64_t k = 0; k < n; ++k) EXPECT_TRUE(std::isnan(interp[1].get(k))) << k << ": " << interp[1].get(k);
  }
}

TEST(LlvmJit, CachedByStructureWithTheRightNames) {
  PrimFunc f = copy2d(8, 8, 8);
  LlvmJit a(f);
  LlvmJit b(copy2d(8, 8, 8));  // a new, structurally equal function
  EXPECT_TRUE(b.from_cache());
  EXPECT_EQ(b.compile_ms(), 0.0);
  // Renamed buffers: the same structure, but errors must name the new buffers.
  Buffer X = Buffer::make("X", f32, {i32(4), i32(8)}), Y = Buffer::make("Y", f32, {i32(4), i32(9)});
  Var i("i"), j("j");
  PrimFunc g = func("copy", {X, Y}, loop(i, 4, loop(j, 9, block("C", {}, {}, Store::make(Y, Load::make(X, {i, j}), {i, j})))));
  EXPECT_EQ(jit_error(g, {NDArray(f32, {4, 8}), NDArray(f32, {4, 9})}),
            "out-of-bounds load X[0, 8] (shape [4, 8]) in block 'C'");
}

TEST(LlvmJit, OverlappingArraysRunAsTheInterpreterDoes) {
  // B[i] = A[i - 1] + 1 in place, in order: a running count.
  Buffer A = Buffer::make("A", f32, {i32(16)}), B = Buffer::make("B", f32, {i32(16)});
  Var i("i"), vi("vi");
  PrimFunc f = func("scan", {A, B}, loop(i, i32(1), i32(15), block("S", {spatial(vi, i32(16))}, {i},
                                                                       Store::make(B, Load::make(A, {vi - 1}) + make_const(f32, 1), {vi}))));
  NDArray x(f32, {16});
  LlvmJit(f).run({&x, &x});
  EXPECT_EQ(x.get(15), 15.0);
}

TEST(LlvmJit, ReferenceOracleIsReported) {
  PrimFunc f = matmul(i32(8), i32(8), i32(8), f16, f32);
  std::vector<NDArray> args = runtime::make_random_args(f, {}, 9);
  runtime::Oracle used = runtime::Oracle::Auto;
  runtime::Reference jit = runtime::compute_reference(f, args, runtime::Oracle::Auto, &used);
  EXPECT_EQ(used, runtime::Oracle::Llvm);
  runtime::Reference interp = runtime::compute_reference(f, args, runtime::Oracle::Interpreter, &used);
  EXPECT_EQ(used, runtime::Oracle::Interpreter);
  // (An input's variance is empty, its data null: no memcmp of it, UBSan.)
  auto same_bytes = [](const runtime::NDArray &a, const runtime::NDArray &b) {
    return a.nbytes() == b.nbytes() && (a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0);
  };
  for (size_t i = 0; i < jit.values.size(); ++i) {
    EXPECT_TRUE(same_bytes(jit.values[i], interp.values[i])) << "argument " << i;
    EXPECT_TRUE(same_bytes(jit.variance[i], interp.variance[i])) << "argument " << i;
  }
  EXPECT_THROW(runtime::parse_oracle("gpu"), UserError);
}


TEST(LlvmJit, ChecksItCannotProveStayAndTheProvenOnesAgree) {
  // The JIT drops the bounds and domain checks its analyzer proves
  // (CodegenIndex.cpp); each program here has one it must keep, and must fail
  // where the interpreter fails, with its words.
  JitThreads one(1);
  const char *off_by_one = kOffByOne;
  // 40000 * 65536 leaves int32: the interpreter wraps it, and the quotient
  // goes negative, where arithmetic without wrap-around would give i.
  const char *wraps = R"(
@T.prim_func
def main(A: T.Buffer((40000,), "float32"), B: T.Buffer((40000,), "float32")):
    for i in range(40000):
        with T.block("B"):
            vi = T.axis.spatial(40000, i)
            B[vi] = A[vi * 65536 // 65536]
)";
  // A tail: the predicate keeps the reads within A (proven), not the write
  // within B, one element shorter.
  const char *tail = R"(
@T.prim_func
def main(A: T.Buffer((11,), "float32"), B: T.Buffer((10,), "float32")):
    for i, j in T.grid(3, 4):
        with T.block("B"):
            v = T.axis.spatial(11, i * 4 + j)
            T.where(i * 4 + j < 11)
            B[v] = A[v] * T.float32(2)
)";
  // A binding that leaves its iter var's domain.
  const char *domain = R"(
@T.prim_func
def main(A: T.Buffer((9,), "float32"), B: T.Buffer((9,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i + 1)
            B[vi] = A[vi]
)";
  struct Case {
    const char *text;
    runtime::DimBindings dims;
    const char *error;
  };
  for (const Case &c : {Case{off_by_one, {{"n", 8}}, "out-of-bounds load A[8] (shape [8]) in block 'B'"},
                        Case{wraps, {}, "out-of-bounds load A[-32768] (shape [40000]) in block 'B'"},
                        Case{tail, {}, "out-of-bounds store to B[10] (shape [10]) in block 'B'"},
                        Case{domain, {}, "vi"}}) {
    PrimFunc f = script::parse_func(c.text);
    std::vector<NDArray> args = runtime::make_random_args(f, c.dims, 4);
    const std::string want = interpreter_error(f, args);
    EXPECT_NE(want.find(c.error), std::string::npos) << want;
    EXPECT_EQ(jit_error(f, args), want);
  }
  // Proven indices divided with negative dividends, floored and truncated,
  // as the interpreter divides them.
  expect_same_bits(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), B: T.Buffer((4, 20), "float32")):
    for i, j in T.grid(4, 20):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[(vj - 9) // 4 + 3] + A[(vj - 9) % 4] + A[T.truncdiv(vj - 9, 4) + 2] + A[T.truncmod(vj - 9, 4) + 3]
)"),
                   {}, 6);
  // With the buffers long enough, the same programs run as the interpreter does.
  expect_same_bits(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((11,), "float32"), B: T.Buffer((11,), "float32")):
    for i, j in T.grid(3, 4):
        with T.block("B"):
            v = T.axis.spatial(11, i * 4 + j)
            T.where(i * 4 + j < 11)
            B[v] = A[v] * T.float32(2)
)"),
                   {}, 5);
}

/// The optimised LLVM IR the JIT makes of `f` (TESSERA_DUMP_LLVM, compiled
/// afresh): every .ll file it writes, concatenated. With `dims`, the code
/// specialised to them, as the oracle compiles it.
std::string optimised_ir(const PrimFunc &f, const runtime::DimBindings &dims = {}) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("tessera_ir_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ::setenv("TESSERA_DUMP_LLVM", dir.c_str(), 1);
  runtime::LlvmJitOptions fresh;
  fresh.use_cache = false;
  fresh.specialize_shapes = !dims.empty();
  LlvmJit jit(f, fresh);
  if (!dims.empty()) {
    std::vector<NDArray> args = runtime::make_random_args(f, dims, 1);
    jit.run(ptrs(args));
  }
  ::unsetenv("TESSERA_DUMP_LLVM");
  std::string ir;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".ll") {
      std::ifstream in(e.path());
      ir += std::string(std::istreambuf_iterator<char>(in), {});
    }
  std::filesystem::remove_all(dir);
  return ir;
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(LlvmJit, AVectorizedLoopRunsInVectorsOfItsExtent) {
  // An int4 dequantisation over 16 words at a time: left to its cost model,
  // LLVM took 4 lanes (unrolled 4 times) for this loop of integer and
  // float16 conversions; the schedule says 16, and 16 ran 2.5x faster.
  PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(
    Wq: T.Buffer((4, 32), "uint32"),
    sc: T.Buffer((4,), "float16"),
    x: T.Buffer((8, 32), "float16"),
    acc: T.Buffer((4, 16), "float32"),
) -> None:
    for i in range(4):
        for w0, s in T.grid(2, 8):
            for l in T.vectorized(16):
                with T.block("acc"):
                    v_i, v_l, v_w0, v_s = T.axis.remap("SSRR", [i, l, w0, s])
                    with T.init():
                        acc[v_i, v_l] = T.float32(0)
                    acc[v_i, v_l] = acc[v_i, v_l] + T.Cast("float32", (T.Cast("float16", Wq[v_i, v_w0 * 16 + v_l] >> T.Cast("uint32", v_s * 4) & T.uint32(15)) - T.float16(8)) * sc[v_i]) * T.Cast("float32", x[v_s, v_w0 * 16 + v_l])
)");
  const std::string ir = optimised_ir(f);
  EXPECT_GT(count(ir, "fptrunc <16 x float>"), 0u) << ir;
  EXPECT_EQ(count(ir, "<4 x half>"), 0u) << ir;
  expect_same_bits(f, {}, 11);
}

TEST(LlvmJit, APlainMatmulIsNotAnOrderedReductionOverGatheredColumns) {
  // C[i, j] += A[i, k] * B[k, j] as written, k innermost: the k loop keeps
  // its serial order in scalars (unroll-and-jam interleaves the j's),
  // instead of an in-order vector reduction over gathers of B's columns,
  // which ran the 256^3 oracle matmul 3.6x slower.
  PrimFunc f = matmul(i32(64), i32(64), i32(64), f32, f32);
  const std::string ir = optimised_ir(f);
  EXPECT_EQ(count(ir, "masked.gather"), 0u) << ir;
  EXPECT_EQ(count(ir, "vector.reduce.fadd"), 0u) << ir;
  expect_same_bits(f, {}, 12);
  // A reduction along its rows still vectorizes: a row sum reads A[i, k]
  // along k, and its sum stays in order.
  PrimFunc rows = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((8, 256), "float32"), S: T.Buffer((8,), "float32")) -> None:
    for i, k in T.grid(8, 256):
        with T.block("S"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                S[v_i] = T.float32(0)
            S[v_i] = S[v_i] + T.exp(A[v_i, v_k])
)");
  EXPECT_GT(count(optimised_ir(rows), "vector.reduce.fadd"), 0u);
  expect_same_bits(rows, {}, 13);
}

TEST(LlvmJit, TransposedTilesGoThroughRegistersWithTheInterpretersBits) {
  // A tiled transpose as cpu::schedule_loops_for_cpu leaves it (B contiguous
  // along the serial loop, A along the vectorized one): the tile is loaded
  // along A's rows, shuffled and stored along B's (CodegenTranspose.cpp).
  PrimFunc tiled = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 64), "float32")):
    for i_0, j_0 in T.grid(4, 3):
        for i_1 in range(16):
            for j_1 in T.vectorized(16):
                with T.block("B"):
                    v_i = T.axis.spatial(64, i_0 * 16 + i_1)
                    v_j = T.axis.spatial(48, j_0 * 16 + j_1)
                    T.reads(A[v_i, v_j])
                    T.writes(B[v_j, v_i])
                    B[v_j, v_i] = A[v_i, v_j]
)");
  expect_same_bits(tiled, {}, 3);
  // Four rounds of 16 shuffles make a 16 x 16 transpose (LLVM may merge a few).
  EXPECT_GE(count(optimised_ir(tiled), "shufflevector <16 x i32>"), 48u);
  // Symbolic sizes (specialised, as the oracle runs them) that the tiles do not divide, float16 (NaN payloads kept or
  // not, the bits of every number are the interpreter's): the whole tiles take
  // the shuffles, the edge ones (the T.where fails at a corner) the loops.
  PrimFunc edges = script::parse_func(R"(
@T.prim_func
def main(a: T.handle, b: T.handle) -> None:
    m, n = T.int32(), T.int32()
    A = T.match_buffer(a, (m, n), "float16")
    B = T.match_buffer(b, (n, m), "float16")
    for i_0, j_0 in T.grid((m + 15) // 16, (n + 15) // 16):
        for i_1 in T.unroll(16):
            for j_1 in T.vectorized(16):
                with T.block("B"):
                    v_i = T.axis.spatial(m, i_0 * 16 + i_1)
                    v_j = T.axis.spatial(n, j_0 * 16 + j_1)
                    T.where(i_0 * 16 + i_1 < m and j_0 * 16 + j_1 < n)
                    B[v_j, v_i] = A[v_i, v_j]
)");
  for (int64_t m : {45, 64, 1}) expect_same_bits(edges, {{"m", m}, {"n", 67}}, 4);
  EXPECT_GE(count(optimised_ir(edges, {{"m", 45}, {"n", 67}}), "shufflevector <16 x i16>"), 48u);
  // The other way round (B contiguous along the vectorized loop), int8 into
  // a B with explicit strides (the last one checked to be 1 at run time).
  PrimFunc strided = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((32, 40), "int8"), B: T.Buffer((40, 48), "int8", strides=(48, 1))):
    for i_0, j_0, i_1 in T.grid(5, 2, 8):
        for j_1 in T.vectorized(8):
            with T.block("B"):
                v_i = T.axis.spatial(40, i_0 * 8 + i_1)
                v_j = T.axis.spatial(32, j_0 * 16 + j_1 * 2)
                B[v_i, v_j // 2 + j_0 * 8] = A[v_j // 2 + j_0 * 8, v_i]
)");
  expect_same_bits(strided, {}, 5);
  EXPECT_GE(count(optimised_ir(strided), "shufflevector <8 x i8>"), 16u);
}

TEST(LlvmJit, StreamingStoresOfATransposedTileAreNonTemporalWhenAligned) {
  // tile2d's "stream" (ir::kStreamingStoresAnnotation): rows of 64 bytes, so
  // each store is non-temporal where the rows are aligned lines, ordinary
  // where not (B's rows 65 wide, written from column 1: a non-temporal store
  // there would fault); the bits are the same either way, and the worker
  // threads fence before their rows are read.
  std::string aligned = R"(
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i_0 in T.parallel(4):
        for j_0, i_1 in T.grid(4, 16):
            for j_1 in T.vectorized(16):
                with T.block("B"):
                    v_i = T.axis.spatial(64, i_0 * 16 + i_1)
                    v_j = T.axis.spatial(64, j_0 * 16 + j_1)
                    T.block_attr({"tessera.streaming_stores": 1})
                    B[v_j, v_i] = A[v_i, v_j]
)";
  std::string unaligned = aligned;
  unaligned.replace(unaligned.find("B: T.Buffer((64, 64)"), 20, "B: T.Buffer((64, 65)");
  unaligned.replace(unaligned.find("B[v_j, v_i]"), 11, "B[v_j, v_i + 1]");
  JitThreads two(2);
  for (const bool is_aligned : {true, false}) {
    PrimFunc f = script::parse_func(is_aligned ? aligned : unaligned);
    expect_same_bits(f, {}, 7);
    const std::string ir = optimised_ir(f);
    // With the sizes constants, LLVM decides the alignment test of the rows.
    EXPECT_EQ(count(ir, "!nontemporal") >= 16u, is_aligned);
    EXPECT_GE(count(ir, "shufflevector <16 x i32>"), 48u);
  }
}

TEST(LlvmJit, TransposedTilesThatMightFailOrOverlapRunTheLoops) {
  JitThreads one(1);
  // B one row short: the last tile's checks fail at a corner, so it runs the
  // loops, which stop at the interpreter's element with its words.
  PrimFunc short_b = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((31, 32), "float32")):
    for i_0, j_0 in T.grid(2, 2):
        for i_1 in range(16):
            for j_1 in T.vectorized(16):
                with T.block("B"):
                    v_i = T.axis.spatial(32, i_0 * 16 + i_1)
                    v_j = T.axis.spatial(32, j_0 * 16 + j_1)
                    B[v_j, v_i] = A[v_i, v_j]
)");
  std::vector<NDArray> args = runtime::make_random_args(short_b, {}, 4);
  const std::string want = interpreter_error(short_b, args);
  EXPECT_NE(want.find("out-of-bounds store to B[31, 0] (shape [31, 32])"), std::string::npos) << want;
  EXPECT_EQ(jit_error(short_b, args), want);
  // B's rows one element apart: the elements of a tile overlap, and the
  // serial order (the last i wins) is not the shuffled one (the last j
  // would): the loops run.
  expect_same_bits(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((31,), "float32")):
    for i in range(16):
        for j in T.vectorized(16):
            with T.block("B"):
                v_i, v_j = T.axis.remap("SS", [i, j])
                B[v_i + v_j] = A[v_i, v_j]
)"),
                   {}, 6);
  // A binding outside its domain at one corner: the loops report it.
  PrimFunc domain = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((16, 17), "float32"), B: T.Buffer((17, 16), "float32")):
    for i in range(16):
        for j in T.vectorized(16):
            with T.block("B"):
                v_i = T.axis.spatial(16, i)
                v_j = T.axis.spatial(16, j + 1)
                B[v_j, v_i] = A[v_i, v_j]
)");
  args = runtime::make_random_args(domain, {}, 4);
  const std::string domain_error = interpreter_error(domain, args);
  EXPECT_NE(domain_error.find("v_j"), std::string::npos) << domain_error;
  EXPECT_EQ(jit_error(domain, args), domain_error);
}

TEST(LlvmJit, SpecialisedPerShapeRunsEachShapeWithTheInterpretersBitsAndErrors) {
  // specialize_shapes: nothing compiled up front, one code per set of sizes
  // (the symbolic matmul at two shapes: two compilations, the first shape
  // again: none), the interpreter's bits at each, and its errors — the
  // binding errors before any code is chosen, a bounds error inside the
  // specialised code with the same words.
  Var m("m"), n("n");
  PrimFunc f = matmul(m, n, i32(37), f32, f32);
  LlvmJit jit(f, {.use_cache = false, .specialize_shapes = true});
  EXPECT_EQ(jit.compile_ms(), 0.0);
  const double before = runtime::llvm_jit_compile_ms_total();
  double compiled = 0;
  for (runtime::DimBindings dims : {runtime::DimBindings{{"m", 19}, {"n", 23}}, {{"m", 4}, {"n", 64}}, {{"m", 19}, {"n", 23}}}) {
    std::vector<NDArray> want = runtime::make_random_args(f, dims, 7), got = want;
    runtime::interpret(f, want);
    jit.run(ptrs(got));
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(std::memcmp(want[i].data(), got[i].data(), want[i].nbytes()), 0) << "argument " << i;
    if (dims.at("m") == 4) compiled = jit.compile_ms();
  }
  EXPECT_GT(compiled, 0.0);
  EXPECT_EQ(jit.compile_ms(), compiled);  // the third run compiled nothing
  // (Within a rounding of the running total: the difference of two sums.)
  EXPECT_GE(runtime::llvm_jit_compile_ms_total() - before, compiled - 1e-6);
  std::vector<NDArray> bad = runtime::make_random_args(f, {{"m", 3}, {"n", 5}}, 1);
  bad[1] = NDArray(f32, {36, 5});
  const std::string want = interpreter_error(f, bad);
  EXPECT_NE(want.find("shape mismatch"), std::string::npos) << want;
  try {
    jit.run(ptrs(bad));
    ADD_FAILURE() << "no error";
  } catch (const InterpretError &e) {
    EXPECT_EQ(std::string(e.what()), want);
  }
  PrimFunc off_by_one = script::parse_func(kOffByOne);
  std::vector<NDArray> args = runtime::make_random_args(off_by_one, {{"n", 8}}, 4);
  const std::string oob = interpreter_error(off_by_one, args);
  EXPECT_NE(oob.find("out-of-bounds load A[8] (shape [8]) in block 'B'"), std::string::npos) << oob;
  try {
    LlvmJit(off_by_one, {.specialize_shapes = true}).run(ptrs(args));
    ADD_FAILURE() << "no error";
  } catch (const InterpretError &e) {
    EXPECT_EQ(std::string(e.what()), oob);
  }
}

}  // namespace
TEST(LlvmJit, SmallIntegersInFloat16AreNotRoundedAndLargerOnesAre) {
  // A dequantised weight: the cast of a 4-bit field, minus 8, times 2, plus
  // 3, exact in float16 at every step (no rounding in the IR: fptrunc for
  // the store only, no fpext back); a 12-bit field, which float16 rounds
  // above 2048, and a 9-bit one in bfloat16 (exact to 256 only), are
  // rounded: the interpreter's bits in every case, on random words.
  PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(W: T.Buffer((256,), "uint32"), Q: T.Buffer((256,), "float16"), R: T.Buffer((256,), "float16"), S: T.Buffer((256,), "bfloat16")) -> None:
    for i in range(256):
        with T.block("dequant"):
            vi = T.axis.spatial(256, i)
            Q[vi] = (T.Cast("float16", W[vi] >> T.uint32(4) & T.uint32(15)) - T.float16(8)) * T.float16(2) + T.float16(3)
            R[vi] = T.Cast("float16", W[vi] & T.uint32(4095)) - T.float16(1)
            S[vi] = T.Cast("bfloat16", W[vi] & T.uint32(511)) * T.bfloat16(3)
)");
  expect_same_bits(f, {}, 4);
  PrimFunc exact = script::parse_func(R"(
@T.prim_func
def main(W: T.Buffer((256,), "uint32"), Q: T.Buffer((256,), "float16")) -> None:
    for i in range(256):
        with T.block("dequant"):
            vi = T.axis.spatial(256, i)
            Q[vi] = (T.Cast("float16", W[vi] >> T.uint32(4) & T.uint32(15)) - T.float16(8)) * T.float16(2) + T.float16(3)
)");
  // Rounding is an fptrunc to half and an fpext back; the store's fptrunc has none after it.
  const std::string ir = optimised_ir(exact);
  EXPECT_GT(count(ir, "fptrunc"), 0u) << ir;
  EXPECT_EQ(count(ir, "fpext"), 0u) << "a rounding step: " << ir;
}

}  // namespace tessera::testing
