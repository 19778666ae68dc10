//===- tests/runtime/ExpTest.cpp - T.exp: accurate, and the same in both executors ===//
//
// lib/runtime/Exp.h computes T.exp from exact IEEE operations so that the
// JIT can inline and vectorize it with the interpreter's bits. Checked here:
// within 2 ulp of libm's exp over the whole float64 range that is neither 0
// nor infinite (the subnormal results included), the special values exact,
// and the JIT's bits equal to the interpreter's for float64, float32 and
// float16, in a loop the JIT vectorizes.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/script/Parser.h"

using namespace tessera;
using runtime::NDArray;

namespace {

/// B[i] = exp(A[i]) over n elements of `dtype`.
ir::PrimFunc exp_program(int64_t n, const std::string &dtype) {
  return script::parse_func(fmt::format(R"(
@T.prim_func
def main(A: T.Buffer(({0},), "{1}"), B: T.Buffer(({0},), "{1}")):
    for i in range({0}):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.exp(A[vi])
)",
                                        n, dtype));
}

/// The distance in units in the last place between two finite doubles of the same sign.
int64_t ulps(double a, double b) {
  int64_t x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  return x > y ? x - y : y - x;
}

const double kInf = std::numeric_limits<double>::infinity();

/// Arguments: every special value, the edges of the range, then random ones
/// spread over [-746, 711].
std::vector<double> arguments(int64_t n) {
  std::vector<double> x{0.0, -0.0, 1.0, -1.0, kInf, -kInf, std::nan(""), 709.78, 709.79, -745.13, -745.14,
                        -708.4, -720.0, -740.0, 1e-300, -1e-300, 0.5, 88.7, -87.3, 11.0};
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> wide(-746.0, 711.0), narrow(-20.0, 20.0);
  while (int64_t(x.size()) < n) x.push_back(x.size() % 2 ? wide(rng) : narrow(rng));
  return x;
}

TEST(Exp, WithinTwoUlpOfLibmAndExactAtTheSpecialValues) {
  const int64_t n = 200000;
  ir::PrimFunc f = exp_program(n, "float64");
  std::vector<NDArray> args{NDArray(ir::DataType::float64(), {n}), NDArray(ir::DataType::float64(), {n})};
  const std::vector<double> x = arguments(n);
  for (int64_t i = 0; i < n; ++i) args[0].set(i, x[size_t(i)]);
  runtime::execute(f, args, runtime::Oracle::Interpreter);
  int64_t worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double got = args[1].get(i), want = std::exp(x[size_t(i)]);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << "exp(" << x[size_t(i)] << ")";
    } else if (want == 0 || std::isinf(want)) {
      EXPECT_EQ(got, want) << "exp(" << x[size_t(i)] << ")";
    } else {
      ASSERT_FALSE(std::isnan(got) || std::isinf(got)) << "exp(" << x[size_t(i)] << ") = " << got;
      worst = std::max(worst, ulps(got, want));
      EXPECT_LE(ulps(got, want), 2) << fmt::format("exp({:.17g}): {:.17g}, libm {:.17g}", x[size_t(i)], got, want);
    }
  }
  EXPECT_EQ(args[1].get(0), 1.0) << "exp(0) is exactly 1";
  std::printf("# worst distance from libm's exp over %lld arguments: %lld ulp\n", (long long)n, (long long)worst);
}

TEST(Exp, TheJitComputesTheInterpretersBits) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  const int64_t n = 4099;  // not a multiple of any vector width
  for (const char *dtype : {"float64", "float32", "float16", "bfloat16"}) {
    SCOPED_TRACE(dtype);
    ir::PrimFunc f = exp_program(n, dtype);
    const ir::DataType t = f.buffer_of(f.params()[0]).dtype();
    std::vector<NDArray> a{NDArray(t, {n}), NDArray(t, {n})};
    const std::vector<double> x = arguments(n);
    for (int64_t i = 0; i < n; ++i) a[0].set(i, x[size_t(i)] / (t.bits() == 64 ? 1 : 8));  // in range for narrow types
    std::vector<NDArray> b = a;
    runtime::execute(f, a, runtime::Oracle::Interpreter);
    runtime::execute(f, b, runtime::Oracle::Llvm);
    ASSERT_EQ(std::memcmp(a[1].data(), b[1].data(), a[1].nbytes()), 0);
  }
}

}  // namespace
