//===- tests/codegen/SharedMemoryArchTest.cpp - Dynamic smem, arch gating --===//
//
// lower::plan_dynamic_shared_memory (which buffers go into dynamic shared
// memory, at which offsets, how many bytes the launch requests) and what
// CudaOptions::arch changes: the shared memory limit per thread block,
// unknown or malformed arch names, bfloat16 arithmetic before sm_80.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/arch/Arch.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Passes.h"
#include "tessera/script/Parser.h"
#include "../support/TuringArch.h"

namespace fs = std::filesystem;
using namespace tessera;

namespace {

const fs::path kDir = fs::path(TESSERA_TEST_DATA_DIR) / "codegen";

ir::PrimFunc load_kernel(const std::string &name) {
  std::ifstream in(kDir / "kernels" / (name + ".py"));
  std::stringstream ss;
  ss << in.rdbuf();
  return script::parse_func(ss.str(), name + ".py");
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

/// A kernel whose 256 threads fill `n_first` floats of one shared buffer in
/// scope `first_scope` and `n_second` of another ("shared"), then copy them out.
ir::PrimFunc two_buffers(int64_t n_first, const std::string &first_scope, int64_t n_second) {
  std::string s = std::to_string(n_first), t = std::to_string(n_second);
  return script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for tx in T.thread_binding(256, thread="threadIdx.x"):
        with T.block("tile"):
            vtx = T.axis.remap("S", [tx])
            X = T.alloc_buffer(()" + s + R"(,), "float32", scope=")" + first_scope + R"(")
            Y = T.alloc_buffer(()" + t + R"(,), "float32", scope="shared")
            with T.block("fill"):
                X[vtx % )" + s + R"(] = A[vtx]
                Y[vtx % )" + t + R"(] = A[vtx]
            with T.block("use"):
                B[vtx] = X[(vtx + 1) % )" + s + R"(] + Y[(vtx + 1) % )" + t + R"(]
)");
}

TEST(DynamicSharedMemory, SmallStaticBuffersStayStatic) {
  lower::LoweredFunc f = lower::lower(load_kernel("matmul_shared_f32"));
  EXPECT_EQ(f.dynamic_shared_bytes, 0);
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "  __shared__ __align__(16) float A_shared[1024];\n")) << cuda;
  EXPECT_FALSE(contains(cuda, "extern __shared__")) << cuda;
  EXPECT_FALSE(contains(cuda, "dynamic shared memory")) << cuda;
}

TEST(DynamicSharedMemory, MoreThan48KBOfTilesMoveToOnePool) {
  lower::LoweredFunc f = lower::lower(load_kernel("matmul_dynamic_shared_f32"));
  EXPECT_EQ(f.dynamic_shared_bytes, 65536);
  for (const ir::Buffer &b : f.allocs)
    EXPECT_EQ(b.scope(), b.name() == "C_local" || b.name().ends_with("_vec") ? "local" : "shared.dyn") << b.name();
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "// launch: grid (2, 2, 1), block (256, 1, 1), dynamic shared memory 65536 bytes\n"))
      << cuda;
  EXPECT_TRUE(contains(cuda, "  extern __shared__ __align__(16) unsigned char dynamic_shared[];\n"
                             "  float* A_shared = (float*)dynamic_shared;\n"
                             "  float* B_shared = (float*)(dynamic_shared + 32768);\n"))
      << cuda;
}

TEST(DynamicSharedMemory, ExactlyFortyEightKBIsStillStatic) {
  // 2 x 6144 floats = 49152 bytes: static; one float more: dynamic.
  EXPECT_EQ(lower::lower(two_buffers(6144, "shared", 6144)).dynamic_shared_bytes, 0);
  lower::LoweredFunc f = lower::lower(two_buffers(6145, "shared", 6144));
  // 6145 floats = 24580 bytes, padded to 24592; then 24576.
  EXPECT_EQ(f.dynamic_shared_bytes, 24592 + 24576);
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "float* Y = (float*)(dynamic_shared + 24592);")) << cuda;
}

TEST(DynamicSharedMemory, SharedDynScopeGoesToThePoolAtSixteenByteOffsets) {
  // X (3 floats, "shared.dyn") is dynamic, Y (small, "shared") stays static.
  lower::LoweredFunc f = lower::lower(two_buffers(3, "shared.dyn", 8));
  EXPECT_EQ(f.dynamic_shared_bytes, 16);
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "float* X = (float*)dynamic_shared;")) << cuda;
  EXPECT_TRUE(contains(cuda, "__shared__ __align__(16) float Y[8];")) << cuda;
  EXPECT_TRUE(contains(cuda, "dynamic shared memory 16 bytes")) << cuda;
}

TEST(CudaArch, SharedMemoryLimitsAreTheGpuDescriptions) {
  test::use_turing_description();
  // Read from arch/*.json, not a table of the code generator's: every
  // preset's opt-in limit is its compute capability's.
  for (const Arch &a : Arch::presets())
    EXPECT_EQ(codegen::cuda_target(a.arch_flag()).max_shared_bytes_per_block, a.limits.smem_per_block_optin_bytes)
        << a.name;
  EXPECT_EQ(codegen::cuda_target("sm_75").max_shared_bytes_per_block, 65536);
  EXPECT_EQ(codegen::cuda_target("sm_80").max_shared_bytes_per_block, 166912);
  EXPECT_EQ(codegen::cuda_target("sm_86").max_shared_bytes_per_block, 101376);
  EXPECT_EQ(codegen::cuda_target("sm_89").max_shared_bytes_per_block, 101376);
  EXPECT_EQ(codegen::cuda_target("sm_90").max_shared_bytes_per_block, 232448);
  EXPECT_EQ(codegen::cuda_target("sm_90a").compute_capability, 90);
  EXPECT_FALSE(codegen::cuda_target("sm_75").has_bfloat16_arithmetic());
  EXPECT_TRUE(codegen::cuda_target("sm_80").has_bfloat16_arithmetic());
}

void expect_arch_error(const std::string &arch, const std::string &fragment) {
  try {
    codegen::codegen_cuda(load_kernel("gemv"), {.arch = arch});
    ADD_FAILURE() << "expected CodegenError for arch '" << arch << "'";
  } catch (const codegen::CodegenError &e) {
    EXPECT_TRUE(contains(e.what(), fragment)) << e.what();
  }
}

TEST(CudaArch, MalformedAndUnknownNamesAreRejected) {
  test::use_turing_description();
  for (const char *bad : {"", "80", "sm80", "sm_", "sm_8x", "compute_80", "SM_80", "sm_80b"})
    expect_arch_error(bad, "malformed CUDA architecture '" + std::string(bad) + "': expected sm_XX");
  expect_arch_error("sm_70", "unknown CUDA architecture 'sm_70': tessera knows sm_75, sm_80, sm_86");
  expect_arch_error("sm_81", "unknown CUDA architecture 'sm_81'");
  expect_arch_error("sm_100a", "(those of its GPU descriptions, arch/*.json; add one for another)");
}

TEST(CudaArch, SharedMemoryBeyondTheArchLimitIsRejected) {
  test::use_turing_description();
  // 120 KB of shared memory: fits sm_80 (163 KB) and sm_90 (227 KB), not sm_86/sm_89 (99 KB).
  lower::LoweredFunc f = lower::lower(two_buffers(15360, "shared", 15360));
  EXPECT_EQ(f.dynamic_shared_bytes, 122880);
  EXPECT_NO_THROW(codegen::codegen_cuda(f, {.arch = "sm_80"}));
  EXPECT_NO_THROW(codegen::codegen_cuda(f, {.arch = "sm_90"}));
  for (const char *arch : {"sm_86", "sm_89", "sm_75"}) {
    try {
      codegen::codegen_cuda(f, {.arch = arch});
      ADD_FAILURE() << "expected CodegenError for " << arch;
    } catch (const codegen::CodegenError &e) {
      std::string want = "kernel 'main_kernel' uses 122880 bytes of shared memory per thread block, more than the " +
                         std::to_string(codegen::cuda_target(arch).max_shared_bytes_per_block) + " bytes " + arch +
                         " allows";
      EXPECT_EQ(e.what(), want);
    }
  }
  // 200 KB: only sm_90.
  lower::LoweredFunc g = lower::lower(two_buffers(25600, "shared", 25600));
  EXPECT_THROW(codegen::codegen_cuda(g, {.arch = "sm_80"}), codegen::CodegenError);
  EXPECT_NO_THROW(codegen::codegen_cuda(g, {.arch = "sm_90"}));
}

TEST(CudaArch, BFloat16ArithmeticGoesThroughFloatBeforeSm80) {
  test::use_turing_description();
  std::string sm80 = codegen::codegen_cuda(load_kernel("math_bf16"), {.arch = "sm_80"});
  std::string sm75 = codegen::codegen_cuda(load_kernel("math_bf16"), {.arch = "sm_75"});
  EXPECT_TRUE(contains(sm80, "hexp(")) << sm80;
  EXPECT_FALSE(contains(sm75, "hexp(")) << sm75;
  EXPECT_FALSE(contains(sm75, "hrsqrt(")) << sm75;
  EXPECT_TRUE(contains(sm75, "__float2bfloat16(expf(__bfloat162float(A[")) << sm75;
  // Each operation rounds to bfloat16: a * a + 1 is two roundings.
  std::string dtypes = codegen::codegen_cuda(load_kernel("vector_dtypes"), {.arch = "sm_75"});
  EXPECT_TRUE(contains(dtypes, "Y_vec[v] = __float2bfloat16(__bfloat162float(__float2bfloat16("
                               "__bfloat162float(X_vec[v]) * __bfloat162float(X_vec[v]))) + 1.0f);"))
      << dtypes;
  // Other dtypes and everything but arithmetic print the same for both archs.
  EXPECT_EQ(codegen::codegen_cuda(load_kernel("softmax"), {.arch = "sm_75"}),
            codegen::codegen_cuda(load_kernel("softmax"), {.arch = "sm_90"}));
}

}  // namespace
