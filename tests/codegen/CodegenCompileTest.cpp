//===- tests/codegen/CodegenCompileTest.cpp - Goldens compile with NVRTC ----===//
//
// Label `nvrtc` (toolkit, no device): the CUDA C of every kernel in
// kernels/*.py compiles to a cubin for sm_80 and sm_90.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "Kernels.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/runtime/NVRTC.h"

using namespace tessera;
using tessera::test::kernel_names;
using tessera::test::load_kernel;

namespace {

class CompileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CompileTest, CompilesForSm80AndSm90) {
  ir::PrimFunc f = load_kernel(GetParam());
  lower::LoweredFunc lowered = lower::lower(f);
  std::string src = codegen::codegen_cuda(lowered);
  for (const char *arch : {"sm_80", "sm_90"}) {
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
