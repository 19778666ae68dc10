//===- tests/codegen/CodegenCompileTest.cpp - Goldens compile with NVRTC ----===//
//
// Label `nvrtc` (toolkit, no device): the CUDA C of every kernel in
// kernels/*.py, generated for each arch, compiles to a cubin for sm_75, sm_80
// and sm_90.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "Kernels.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"
#include "tessera/runtime/NVRTC.h"
#include "../support/TuringArch.h"

using namespace tessera;
using tessera::test::kernel_names;
using tessera::test::load_kernel;

namespace {

class CompileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CompileTest, CompilesForSm75Sm80AndSm90) {
  test::use_turing_description();
  ir::PrimFunc f = load_kernel(GetParam());
  lower::LoweredFunc lowered = lower::lower(f);
  // sm_75 computes bfloat16 in float; the others natively.
  // Kernels of tensor-core instructions need sm_80: for sm_75 the code generator says so.
  bool ampere = false;
  ir::pre_order_visit(
      lowered.body,
      [&](const ir::Expr &e) {
        if (const auto *c = e.as<ir::Call>(); c && ir::is_async_or_warp_statement(c->op)) ampere = true;
      },
      nullptr);
  for (const char *arch : {"sm_75", "sm_80", "sm_90"}) {
    if (ampere && std::string(arch) == "sm_75") {
      try {
        codegen::codegen_cuda(lowered, {.arch = arch});
        ADD_FAILURE() << GetParam() << " generated code for sm_75";
      } catch (const codegen::CodegenError &e) {
        EXPECT_NE(std::string(e.what()).find("needs sm_80"), std::string::npos) << e.what();
      }
      continue;
    }
    std::string src = codegen::codegen_cuda(lowered, {.arch = arch});
    try {
      runtime::CompileResult r = runtime::compile_cuda(src, {.arch = arch, .name = GetParam()});
      EXPECT_FALSE(r.cubin.empty()) << arch;
      EXPECT_NE(r.find_kernel(codegen::cuda_kernel_name(lowered)), nullptr) << arch << "\n" << r.log;
    } catch (const runtime::CompileError &e) {
      ADD_FAILURE() << GetParam() << " for " << arch << ": " << e.what() << "\n" << src;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, CompileTest, ::testing::ValuesIn(kernel_names()),
                         [](const auto &info) { return info.param; });

}  // namespace
