//===- LlvmJitFmaTest.cpp - The CPU target's fused multiply-adds -----------===//
//
// LlvmJitOptions::fuse_multiply_add: a float32 multiply and the add that
// takes it become one fused multiply-add (one rounding), float16 stays
// rounded after every operation, the oracle's code (the option off) keeps
// the interpreter's bits, and the two codes are cached apart.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "tessera/runtime/Backend.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/script/Parser.h"

namespace tessera::testing {
namespace {

using runtime::LlvmJit;
using runtime::NDArray;
using ir::DataType;

/// D[i] = A[i] * B[i] + C[i] in `dtype`.
ir::PrimFunc multiply_add(const std::string &dtype) {
  return script::parse_func(R"(
@T.prim_func
def main(
    A: T.Buffer((4,), ")" + dtype +
                       R"("),
    B: T.Buffer((4,), ")" + dtype +
                       R"("),
    C: T.Buffer((4,), ")" + dtype +
                       R"("),
    D: T.Buffer((4,), ")" + dtype +
                       R"("),
) -> None:
    for i in range(4):
        with T.block("D"):
            v_i = T.axis.spatial(4, i)
            D[v_i] = A[v_i] * B[v_i] + C[v_i]
)");
}

bool host_has_fma() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("fma");
#else
  return true;  // AArch64: fused multiply-add is in the base instruction set
#endif
}

/// D = A * B + C's arguments: A = B = 1 + 2^-p, C = -(1 + 2^-(p-1)), in
/// `dtype`. The exact product is 1 + 2^-(p-1) + 2^-2p; a type of fewer than
/// 2p fraction bits rounds it to 1 + 2^-(p-1) (float32, 23 bits for p = 12:
/// a tie, to even), so D is 0 with two roundings and 2^-2p with one.
std::vector<NDArray> tie_arguments(DataType dtype, int p) {
  std::vector<NDArray> args(4, NDArray(dtype, {4}));
  for (int64_t i = 0; i < 4; ++i) {
    args[0].set(i, 1.0 + std::ldexp(1.0, -p));
    args[1].set(i, 1.0 + std::ldexp(1.0, -p));
    args[2].set(i, -(1.0 + std::ldexp(1.0, -(p - 1))));
  }
  return args;
}

/// float32 (23 fraction bits): p = 12.
std::vector<NDArray> tie_arguments() { return tie_arguments(DataType::float32(), 12); }

using runtime::pointers_to;

TEST(LlvmJitFma, TheCpuTargetFusesAFloat32MultiplyAddTheOracleDoesNot) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  if (!host_has_fma()) GTEST_SKIP() << "this CPU has no fused multiply-add";
  ir::PrimFunc f = multiply_add("float32");
  // The oracle's code first, so that a cache ignoring the option would hand
  // the fused code the unfused one.
  std::vector<NDArray> plain = tie_arguments();
  LlvmJit(f).run(pointers_to(plain));
  std::vector<NDArray> interp = tie_arguments();
  runtime::Interpreter(f).run(pointers_to(interp));
  std::vector<NDArray> fused = tie_arguments();
  LlvmJit(f, {.fuse_multiply_add = true}).run(pointers_to(fused));
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(interp[3].get(i), 0.0);
    EXPECT_EQ(plain[3].get(i), 0.0) << "the oracle's code must round the product";
    EXPECT_EQ(fused[3].get(i), std::ldexp(1.0, -24)) << "the CPU target's code must fuse";
  }
  // The CPU target's backend fuses; the default one (references) does not.
  std::vector<NDArray> via_backend = tie_arguments();
  runtime::make_backend("llvm", {.fuse_multiply_add = true})->build(f)->run(via_backend);
  EXPECT_EQ(via_backend[3].get(0), std::ldexp(1.0, -24));
  std::vector<NDArray> via_reference = tie_arguments();
  runtime::make_backend("llvm")->build(f)->run(via_reference);
  EXPECT_EQ(via_reference[3].get(0), 0.0);
}

TEST(LlvmJitFma, Float16IsRoundedAfterEachOperationAllTheSame) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  // (1 + 2^-6)^2 = 1 + 2^-5 + 2^-12: float16 (10 fraction bits) rounds the
  // product to 1 + 2^-5 before the add, fused or not.
  ir::PrimFunc f = multiply_add("float16");
  std::vector<NDArray> interp = tie_arguments(DataType::float16(), 6);
  std::vector<NDArray> fused = interp;
  runtime::Interpreter(f).run(pointers_to(interp));
  LlvmJit(f, {.fuse_multiply_add = true}).run(pointers_to(fused));
  EXPECT_EQ(interp[3].get(0), 0.0);
  EXPECT_EQ(std::memcmp(interp[3].data(), fused[3].data(), interp[3].nbytes()), 0);
}

}  // namespace
}  // namespace tessera::testing
