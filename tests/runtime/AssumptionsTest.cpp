//===- tests/runtime/AssumptionsTest.cpp - Random inputs that keep T.assume -===//
//
// runtime::make_random_args ends with satisfy_assumptions: the inputs keep
// what a program's T.assume calls say of them where that is a value (TVM's
// `T.assume(i < 14 or A[i] == 0)` in a loop, `T.assume(n == 0)` at the
// top), so such programs run; an assumption it cannot keep still stops the
// interpreter and the LLVM JIT with the same message, saying so.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/script/Parser.h"

namespace tessera::runtime {
namespace {

TEST(Assumptions, RandomInputsKeepTheValuesAssumed) {
  ir::PrimFunc f = script::parse_func(R"(@T.prim_func
def main(A: T.Buffer(16, "int32"), B: T.Buffer(1, "int32"), C: T.Buffer((4, 4), "float32"), n: T.int32) -> None:
    for i in T.serial(16):
        T.evaluate(T.assume(i < 14 or A[i] == 0))
    for i, j in T.grid(4, 4):
        if i != j:
            T.evaluate(T.assume(C[i, j] == T.float32(0)))
    T.evaluate(T.assume(n == 3))
    B[0] = n
    for i in T.serial(16):
        if i < 14:
            B[0] = B[0] + A[i]
)");
  for (uint64_t seed : {0, 1, 2}) {
    std::vector<NDArray> args = make_random_args(f, {}, seed);
    EXPECT_EQ(args[0].get_int(14), 0);
    EXPECT_EQ(args[0].get_int(15), 0);
    EXPECT_NE(args[0].get_int(0), 0) << "only where the other clause fails";
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        if (i != j) EXPECT_EQ(args[2].get(i * 4 + j), 0.0);
    EXPECT_NE(args[2].get(0), 0.0) << "the diagonal is not assumed";
    EXPECT_EQ(args[3].get_int(0), 3);
    EXPECT_NO_THROW(interpret(f, args));
  }
}

TEST(Assumptions, OneItCannotKeepIsStillAClearError) {
  ir::PrimFunc f = script::parse_func(R"(@T.prim_func
def main(A: T.Buffer(4, "int32")) -> None:
    T.evaluate(T.assume(A[0] > 1000000000 and A[1] < -1000000000))
    A[2] = A[0] + A[1]
)");
  std::vector<NDArray> args = make_random_args(f, {}, 0);
  std::string interpreter, jit;
  try {
    interpret(f, args);
  } catch (const InterpretError &e) {
    interpreter = e.what();
  }
  EXPECT_NE(interpreter.find("T.assume does not hold in block 'root': the inputs break an assumption"),
            std::string::npos)
      << interpreter;
  if (!llvm_jit_available()) return;
  try {
    LlvmJit(f).run(pointers_to(args));
  } catch (const InterpretError &e) {
    jit = e.what();
  }
  EXPECT_EQ(jit, interpreter);
}

}  // namespace
}  // namespace tessera::runtime
