//===- NvrtcTest.cpp - NVRTC compilation (label nvrtc: toolkit, no device) -===//
#include "tessera/runtime/NVRTC.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/ScratchDir.h"

namespace tessera::runtime {
namespace {

namespace fs = std::filesystem;

const char *kVaddF32 = R"(
extern "C" __global__ void vadd(const float *__restrict__ a, const float *__restrict__ b,
                                float *__restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

const char *kVaddHalf2 = R"(
#include <cuda_fp16.h>
extern "C" __global__ void vadd_h2(const __half2 *a, const __half2 *b, __half2 *c, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) c[i] = __hadd2(a[i], b[i]);
}
)";

/// A kernel with static shared memory and a barrier, for the resource parser.
const char *kSmemReverse = R"(
extern "C" __global__ void reverse256(float *x) {
  __shared__ float tile[256];
  tile[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
  __syncthreads();
  x[blockIdx.x * 256 + threadIdx.x] = tile[255 - threadIdx.x];
}
)";

bool is_elf(const std::vector<uint8_t> &bytes) {
  return bytes.size() > 4 && bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';
}

/// A dump directory of this test's own, so parallel ctest runs never share one.
fs::path test_dump_dir() { return test::scratch_dir("tessera_nvrtc_test"); }

struct ScopedEnv {
  ScopedEnv(const char *name, const std::string &value) : name_(name) { setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name_); }
  const char *name_;
};

TEST(Nvrtc, AvailableWithSupportedArchs) {
  ASSERT_TRUE(nvrtc_available());
  EXPECT_FALSE(nvrtc_version().empty());
  const std::vector<int> &archs = nvrtc_supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 80), archs.end());
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

class NvrtcArch : public ::testing::TestWithParam<std::string> {};

TEST_P(NvrtcArch, VaddFloatCompilesToCubin) {
  CompileResult r = compile_cuda(kVaddF32, {.arch = GetParam(), .name = "vadd"});
  EXPECT_TRUE(is_elf(r.cubin)) << r.cubin.size() << " bytes";
  EXPECT_TRUE(r.ptx.empty());
  EXPECT_EQ(r.arch, GetParam());
  EXPECT_GT(r.compile_ms, 0);
  const KernelResources *k = r.find_kernel("vadd");
  ASSERT_NE(k, nullptr) << r.log;
  EXPECT_GT(k->registers, 0) << r.log;
  EXPECT_EQ(k->spill_stores, 0);
}

TEST_P(NvrtcArch, Half2WithCudaFp16Header) {
  CompileResult r = compile_cuda(kVaddHalf2, {.arch = GetParam(), .name = "vadd_h2"});
  EXPECT_TRUE(is_elf(r.cubin));
  ASSERT_NE(r.find_kernel("vadd_h2"), nullptr) << r.log;
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcArch, ::testing::Values("sm_80", "sm_90"));

TEST(Nvrtc, PtxOnRequest) {
  CompileResult r = compile_cuda(kVaddF32, {.arch = "sm_90", .name = "vadd", .want_ptx = true});
  EXPECT_TRUE(is_elf(r.cubin));
  EXPECT_NE(r.ptx.find(".target sm_90"), std::string::npos) << r.ptx.substr(0, 400);
  EXPECT_NE(r.ptx.find(".entry vadd"), std::string::npos);
  EXPECT_EQ(r.ptx.find('\0'), std::string::npos);
}

TEST(Nvrtc, ResourceUsageFromPtxas) {
  CompileResult r = compile_cuda(kSmemReverse, {.arch = "sm_80", .name = "reverse256"});
  const KernelResources *k = r.find_kernel("reverse256");
  ASSERT_NE(k, nullptr) << r.log;
  EXPECT_GT(k->registers, 0);
  EXPECT_EQ(k->shared_bytes, 1024) << r.log;
  EXPECT_EQ(k->barriers, 1) << r.log;
}

TEST(Nvrtc, ExtraOptionsArePassed) {
  CompileResult r = compile_cuda(
      "extern \"C\" __global__ void k(float *x) { x[0] = SCALE; }",
      {.arch = "sm_90", .name = "k", .extra_options = {"-DSCALE=2.0f"}});
  EXPECT_TRUE(is_elf(r.cubin));
}

TEST(Nvrtc, SyntaxErrorGivesLogAndDumpedSource) {
  fs::path dir = test_dump_dir();
  ScopedEnv env("TESSERA_DUMP_DIR", dir.string());
  std::string broken = "extern \"C\" __global__ void bad(float *x) { x[0] = 1.0f }\n";
  try {
    compile_cuda(broken, {.arch = "sm_90", .name = "bad"});
    FAIL() << "expected CompileError";
  } catch (const CompileError &e) {
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
    EXPECT_NE(e.log().find("expected a \";\""), std::string::npos) << e.log();
    ASSERT_FALSE(e.source_path().empty());
    EXPECT_TRUE(fs::exists(e.source_path()));
    EXPECT_EQ(fs::path(e.source_path()).parent_path(), dir);
    std::ifstream in(e.source_path());
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), broken);
    std::string what = e.what();
    EXPECT_NE(what.find("'bad'"), std::string::npos) << what;
    EXPECT_NE(what.find(e.source_path()), std::string::npos) << what;
  }
  fs::remove_all(dir);
}

TEST(Nvrtc, DumpsToTempDirWithoutEnv) {
  unsetenv("TESSERA_DUMP_DIR");
  try {
    compile_cuda("this is not CUDA", {.arch = "sm_80", .name = "garbage"});
    FAIL() << "expected CompileError";
  } catch (const CompileError &e) {
    EXPECT_TRUE(fs::exists(e.source_path())) << e.source_path();
    EXPECT_EQ(fs::path(e.source_path()).parent_path(), fs::temp_directory_path() / "tessera-dump");
    fs::remove(e.source_path());
    fs::remove(fs::path(e.source_path()).replace_extension(".log"));
  }
}

TEST(Nvrtc, UnsupportedArchIsClearError) {
  try {
    compile_cuda(kVaddF32, {.arch = "sm_70", .name = "vadd"});
    FAIL() << "expected CompileError";
  } catch (const CompileError &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'sm_70' is not supported"), std::string::npos) << what;
    EXPECT_NE(what.find("sm_80"), std::string::npos) << what;
    EXPECT_TRUE(e.source_path().empty());
  }
  EXPECT_THROW(compile_cuda(kVaddF32, {.arch = "compute90", .name = "vadd"}), CompileError);
  EXPECT_THROW(compile_cuda(kVaddF32, {.arch = "sm_", .name = "vadd"}), CompileError);
}

TEST(Nvrtc, CompileManyReportsFailureInItsSlot) {
  fs::path dir = test_dump_dir();
  ScopedEnv env("TESSERA_DUMP_DIR", dir.string());
  std::vector<std::string> sources;
  for (int i = 0; i < 6; ++i) {
    std::string s = "extern \"C\" __global__ void k" + std::to_string(i) +
                    "(float *x) { x[threadIdx.x] *= " + std::to_string(i + 1) + ".0f; }\n";
    if (i == 3) s = "extern \"C\" __global__ void k3(float *x) { undeclared_name(x); }\n";
    sources.push_back(s);
  }
  std::vector<CompileOutcome> out = compile_many(sources, {.arch = "sm_90", .name = "many"}, 2);
  ASSERT_EQ(out.size(), 6u);
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    if (i == 3) {
      ASSERT_FALSE(out[i].ok());
      ASSERT_TRUE(out[i].error.has_value());
      EXPECT_NE(out[i].error->log().find("undeclared_name"), std::string::npos);
      EXPECT_NE(std::string(out[i].error->what()).find("many_3"), std::string::npos);
      EXPECT_TRUE(fs::exists(out[i].error->source_path()));
      continue;
    }
    ASSERT_TRUE(out[i].ok()) << out[i].error->what();
    EXPECT_FALSE(out[i].error.has_value());
    EXPECT_TRUE(is_elf(out[i].result->cubin));
    EXPECT_EQ(out[i].result->name, "many_" + std::to_string(i));
    EXPECT_NE(out[i].result->find_kernel("k" + std::to_string(i)), nullptr);
  }
  fs::remove_all(dir);
}

TEST(Nvrtc, CompileManyMixedArchsAndDefaultThreads) {
  std::vector<CompileJob> jobs = {{kVaddF32, {.arch = "sm_80", .name = "a"}},
                                  {kVaddHalf2, {.arch = "sm_90", .name = "b"}},
                                  {kVaddF32, {.arch = "sm_70", .name = "c"}}};
  std::vector<CompileOutcome> out = compile_many(jobs);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].ok());
  EXPECT_TRUE(out[1].ok());
  ASSERT_FALSE(out[2].ok());
  EXPECT_NE(std::string(out[2].error->what()).find("sm_70"), std::string::npos);
  EXPECT_TRUE(compile_many(std::vector<std::string>{}, {}).empty());
}

}  // namespace
}  // namespace tessera::runtime
