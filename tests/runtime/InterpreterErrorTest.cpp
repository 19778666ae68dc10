//===- InterpreterErrorTest.cpp - InterpretError, never undefined behaviour ===//
#include <gtest/gtest.h>

#include "Programs.h"

namespace tessera::testing {
namespace {

using runtime::InterpretError;
using runtime::NDArray;
const DataType f32 = DataType::float32(), f16 = DataType::float16(), i32t = DataType::int32();

/// The message of the InterpretError that running `f` on `args` throws.
std::string run_error(const PrimFunc &f, std::vector<NDArray> args) {
  try {
    run_program(f, args);
  } catch (const InterpretError &e) {
    return e.what();
  }
  return "(no error)";
}

/// for i in 0..4, j in 0..cols: block C (no iter vars) { B[i, j] = A[i, j] }
PrimFunc copy2d(int64_t cols_a, int64_t cols_loop, int64_t cols_b) {
  Buffer A = Buffer::make("A", f32, {i32(4), i32(cols_a)}), B = Buffer::make("B", f32, {i32(4), i32(cols_b)});
  Var i("i"), j("j");
  return func("copy", {A, B}, loop(i, 4, loop(j, cols_loop, block("C", {}, {}, Store::make(B, Load::make(A, {i, j}), {i, j})))));
}

TEST(Errors, OutOfBoundsLoad) {
  PrimFunc f = copy2d(128, 129, 129);
  EXPECT_EQ(run_error(f, {NDArray(f32, {4, 128}), NDArray(f32, {4, 129})}),
            "out-of-bounds load A[0, 128] (shape [4, 128]) in block 'C'");
}

TEST(Errors, OutOfBoundsStore) {
  PrimFunc f = copy2d(129, 129, 128);
  EXPECT_EQ(run_error(f, {NDArray(f32, {4, 129}), NDArray(f32, {4, 128})}),
            "out-of-bounds store to B[0, 128] (shape [4, 128]) in block 'C'");
}

TEST(Errors, NegativeIndexAndComputedIndex) {
  Buffer A = Buffer::make("A", f32, {i32(8)}), B = Buffer::make("B", f32, {i32(8)});
  Var i("i"), vi("vi");
  // B[vi] = A[vi - 1]: fails at vi = 0 with index -1.
  PrimFunc f = func("shift", {A, B}, loop(i, 8, block("S", {spatial(vi, i32(8))}, {i},
                                                         Store::make(B, Load::make(A, {vi - 1}), {vi}))));
  EXPECT_EQ(run_error(f, {NDArray(f32, {8}), NDArray(f32, {8})}), "out-of-bounds load A[-1] (shape [8]) in block 'S'");
}

TEST(Errors, DivisionByZero) {
  Buffer A = Buffer::make("A", i32t, {i32(2)}), B = Buffer::make("B", i32t, {i32(2)});
  Var i("i"), vi("vi");
  for (auto [op, name] : {std::pair{BinaryOp::FloorDiv, "floordiv"}, std::pair{BinaryOp::FloorMod, "floormod"},
                          std::pair{BinaryOp::Div, "truncdiv"}, std::pair{BinaryOp::Mod, "truncmod"}}) {
    PrimFunc f = func("div", {A, B}, loop(i, 2, block("D", {spatial(vi, i32(2))}, {i},
                                                         Store::make(B, Binary::make(op, i32(7), Load::make(A, {vi})), {vi}))));
    NDArray a(i32t, {2});
    a.set_int(0, 2);  // A[1] stays 0
    EXPECT_EQ(run_error(f, {a, NDArray(i32t, {2})}),
              std::string("integer division by zero in block 'D': ") + name + "(7, 0)");
  }
}

TEST(Errors, SymbolicDimensionMismatch) {
  Var n("n");
  Buffer A = Buffer::make("A", f32, {n, i32(4)}), B = Buffer::make("B", f32, {n});
  Var i("i"), vi("vi");
  PrimFunc f = func("rows", {A, B}, loop(i, i32(0), n, block("R", {spatial(vi, n)}, {i}, Store::make(B, Load::make(A, {vi, i32(0)}), {vi}))));
  EXPECT_EQ(run_error(f, {NDArray(f32, {3, 4}), NDArray(f32, {5})}),
            "shape mismatch for buffer 'B' dimension 0: expected n = 3 (bound from buffer 'A' dimension 0), got 5 "
            "(array float32[5])");
  EXPECT_EQ(run_error(f, {NDArray(f32, {3, 5}), NDArray(f32, {3})}),
            "shape mismatch for buffer 'A' dimension 1: expected 4, got 5 (array float32[3, 5])");
  EXPECT_EQ(run_error(f, {NDArray(f32, {3, 4}), NDArray(f32, {3})}), "(no error)");
}

TEST(Errors, ArgumentCountTypeAndRank) {
  PrimFunc f = copy2d(4, 4, 4);
  EXPECT_EQ(run_error(f, {NDArray(f32, {4, 4})}), "function 'copy' takes 2 arguments, got 1");
  EXPECT_EQ(run_error(f, {NDArray(f32, {4, 4}), NDArray(f16, {4, 4})}),
            "argument 1 ('B'): buffer 'B' has dtype float32 but the array is float16[4, 4]");
  EXPECT_EQ(run_error(f, {NDArray(f32, {16}), NDArray(f32, {4, 4})}),
            "argument 0 ('A'): buffer 'A' has 2 dimensions but the array is float32[16]");
  runtime::Interpreter interp(f);
  NDArray a(f32, {4, 4});
  EXPECT_THROW(interp.run({&a, nullptr}), InterpretError);
}

TEST(Errors, IterVarOutsideDomain) {
  // A split of 10 into 3 x 4 without the T.where predicate overshoots.
  Buffer A = Buffer::make("A", f32, {i32(10)});
  Var i0("i0"), i1("i1"), vi("vi");
  PrimFunc f = func("nopred", {A}, loop(i0, 3, loop(i1, 4, block("B", {spatial(vi, i32(10))}, {i0 * 4 + i1},
                                                                     Store::make(A, make_const(f32, 1), {vi})))));
  EXPECT_EQ(run_error(f, {NDArray(f32, {10})}), "iter var 'vi' = 10 is outside its domain [0, 10) in block 'B'");
}

TEST(Errors, CompileTimeScope) {
  Buffer A = Buffer::make("A", f32, {i32(4)}), T = Buffer::make("T", f32, {i32(4)});
  Var i("i"), stray("stray");
  // A variable that nothing binds.
  PrimFunc f1 = func("f1", {A}, loop(i, 4, block("B", {}, {}, Store::make(A, cast(f32, stray), {i}))));
  EXPECT_THROW(
      {
        try {
          runtime::Interpreter interp(f1);
        } catch (const InterpretError &e) {
          EXPECT_STREQ(e.what(), "variable 'stray' is used outside its scope in block 'B'");
          throw;
        }
      },
      InterpretError);
  // A buffer that is neither a parameter nor allocated.
  PrimFunc f2 = func("f2", {A}, loop(i, 4, block("B", {}, {}, Store::make(A, Load::make(T, {i}), {i}))));
  try {
    runtime::Interpreter interp(f2);
    FAIL() << "expected an InterpretError";
  } catch (const InterpretError &e) {
    EXPECT_STREQ(e.what(),
                 "load from buffer 'T' in block 'B', which is neither a parameter nor allocated by an enclosing block");
  }
}

TEST(Errors, MakeRandomArgsNeedsEveryDim) {
  Var n("n");
  Buffer A = Buffer::make("A", f32, {n, i32(4)});
  Var i("i");
  PrimFunc f = func("f", {A}, loop(i, 1, block("B", {}, {}, Evaluate::make(i32(0)))));
  try {
    runtime::make_random_args(f, {}, 1);
    FAIL() << "expected an InterpretError";
  } catch (const InterpretError &e) {
    EXPECT_STREQ(e.what(), "symbolic dimension 'n' of buffer 'A' (dimension 0) has no value; pass it in the dims");
  }
  auto args = runtime::make_random_args(f, {{"n", 6}}, 1);
  ASSERT_EQ(args.size(), 1u);
  EXPECT_EQ(args[0].shape(), (std::vector<int64_t>{6, 4}));
}

}  // namespace
}  // namespace tessera::testing
