//===- SassNvrtcTest.cpp - NVRTC cubins through cuobjdump (label nvrtc) ----===//
//
// Kernels whose machine code is known compiled with NVRTC, disassembled by
// the real tool (runtime::find_disassembler) and summarised. Skipped, with
// the reason, when no cuobjdump is installed (./dev.sh installs one).
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/Sass.h"

namespace tessera::runtime {
namespace {

#define SKIP_WITHOUT_DISASSEMBLER()                              \
  if (!find_disassembler()) GTEST_SKIP() << kNoDisassemblerHint; \
  static_assert(true, "")

SassSummary compile_and_summarise(const char *source, const std::string &arch = "sm_90") {
  CompileResult r = compile_cuda(source, {.arch = arch, .name = "sass_test"});
  std::vector<SassSummary> s = parse_sass(disassemble(r.cubin));
  EXPECT_EQ(s.size(), 1u);
  if (s.empty()) return {};
  EXPECT_EQ(s[0].arch, arch);
  return s[0];
}

const char *kCopyFloat4 = R"(
extern "C" __global__ void copy4(const float4 *__restrict__ a, float4 *__restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}
)";

TEST(SassNvrtc, Float4CopyIsOne16ByteLoadAndStore) {
  SKIP_WITHOUT_DISASSEMBLER();
  SassSummary s = compile_and_summarise(kCopyFloat4);
  EXPECT_EQ(s.name, "copy4");
  EXPECT_EQ(s.global_loads, (WidthCounts{{16, 1}})) << s.str();
  EXPECT_EQ(s.global_stores, (WidthCounts{{16, 1}})) << s.str();
  EXPECT_FALSE(width_contradiction(s, 16));
}

const char *kCopyHalf = R"(
#include <cuda_fp16.h>
extern "C" __global__ void copy_half(const half *__restrict__ a, half *__restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b[i] = a[i];
}
)";

TEST(SassNvrtc, HalfCopyIsTwoByteAndContradictsAVectorRequest) {
  SKIP_WITHOUT_DISASSEMBLER();
  SassSummary s = compile_and_summarise(kCopyHalf);
  EXPECT_EQ(s.global_loads, (WidthCounts{{2, 1}})) << s.str();
  EXPECT_EQ(s.global_stores, (WidthCounts{{2, 1}})) << s.str();
  EXPECT_TRUE(width_contradiction(s, 16));
}

/// cp.async, ldmatrix and one mma.sync: sm_80 and later.
const char *kTensorCore = R"(
#include <cuda_fp16.h>
extern "C" __global__ void tc(const half *a, float *c) {
  __shared__ __align__(16) half s[512];
  unsigned sa = (unsigned)__cvta_generic_to_shared(s + threadIdx.x * 8);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(sa), "l"(a + threadIdx.x * 8));
  asm volatile("cp.async.wait_all;\n");
  __syncthreads();
  unsigned r0, r1, r2, r3;
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(sa));
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(r0), "r"(r1));
  reinterpret_cast<float4 *>(c)[threadIdx.x] = make_float4(d0, d1, d2, d3);
}
)";

TEST(SassNvrtc, TensorCoresLdmatrixAndCpAsync) {
  SKIP_WITHOUT_DISASSEMBLER();
  for (const char *arch : {"sm_80", "sm_90"}) {
    SassSummary s = compile_and_summarise(kTensorCore, arch);
    EXPECT_EQ(s.async_copies, (WidthCounts{{16, 1}})) << arch << ": " << s.str();
    EXPECT_EQ(s.ldmatrix, 1) << arch << ": " << s.str();
    EXPECT_EQ(s.tensor_ops, (std::map<std::string, int64_t>{{"HMMA", 1}})) << arch << ": " << s.str();
    EXPECT_EQ(s.global_stores, (WidthCounts{{16, 1}})) << arch << ": " << s.str();
  }
}

/// A local array indexed by a runtime value lives in local memory; two atomics.
const char *kLocalAndAtomics = R"(
extern "C" __global__ void local_atomics(const float *a, float *b, int *counters, int k) {
  float local[64];
  for (int j = 0; j < 64; ++j) local[j] = a[j * 64 + threadIdx.x];
  for (int j = 0; j < 64; ++j) local[(j * k) & 63] += 1.0f;
  atomicAdd(counters, 1);
  int old = atomicAdd(counters + 1, 1);
  b[threadIdx.x] = local[k & 63] * local[(k + 1) & 63] + a[old];
}
)";

TEST(SassNvrtc, LocalMemoryAndAtomics) {
  SKIP_WITHOUT_DISASSEMBLER();
  SassSummary s = compile_and_summarise(kLocalAndAtomics);
  EXPECT_GT(s.local_stores, 0) << s.str();
  EXPECT_GT(s.local_loads, 0) << s.str();
  EXPECT_EQ(s.atomics, 2) << s.str();
}

TEST(SassNvrtc, DisassemblyRunsFromManyThreadsAtOnce) {
  SKIP_WITHOUT_DISASSEMBLER();
  CompileResult r = compile_cuda(kCopyFloat4, {.arch = "sm_90", .name = "copy4"});
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      std::vector<SassSummary> s = parse_sass(disassemble(r.cubin));
      if (s.size() == 1 && s[0].widest_global_load() == 16) ++ok;
    });
  for (std::thread &t : threads) t.join();
  EXPECT_EQ(ok.load(), 4);
}

// summarise_cubins reads many cubins in one nvdisasm run (the tuner's path):
// the same functions and counts as cuobjdump gives one cubin at a time.
TEST(SassNvrtc, OneBatchRunAgreesWithCuobjdumpPerCubin) {
  SKIP_WITHOUT_DISASSEMBLER();
  std::filesystem::path tool = *find_disassembler();
  if (!std::filesystem::exists(tool.parent_path() / "nvdisasm"))
    GTEST_SKIP() << "no nvdisasm beside " << tool << ": summarise_cubins falls back to cuobjdump";
  std::vector<std::vector<uint8_t>> cubins;
  for (const char *source : {kCopyFloat4, kCopyHalf, kTensorCore, kLocalAndAtomics})
    cubins.push_back(compile_cuda(source, {.arch = "sm_90", .name = "batch"}).cubin);
  std::vector<const std::vector<uint8_t> *> pointers;
  for (const std::vector<uint8_t> &c : cubins) pointers.push_back(&c);
  // A cuobjdump that always fails beside the real nvdisasm: any cubin the
  // batch could not read would come back with an error.
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "tessera_sass_nvrtc_test" / "batch";
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir / "nvdisasm");
  std::filesystem::create_symlink(tool.parent_path() / "nvdisasm", dir / "nvdisasm");
  { std::ofstream(dir / "cuobjdump") << "#!/bin/sh\necho 'not the batch' >&2\nexit 1\n"; }
  std::filesystem::permissions(dir / "cuobjdump", std::filesystem::perms::owner_all);
  std::vector<CubinSass> batch = summarise_cubins(pointers, "sm_90", dir / "cuobjdump");
  ASSERT_EQ(batch.size(), cubins.size());
  for (size_t i = 0; i < cubins.size(); ++i) {
    std::vector<SassSummary> want = parse_sass(disassemble(cubins[i], tool));
    EXPECT_EQ(batch[i].error, "");
    ASSERT_EQ(batch[i].functions.size(), want.size()) << i;
    for (size_t f = 0; f < want.size(); ++f) {
      EXPECT_EQ(batch[i].functions[f].name, want[f].name);
      EXPECT_EQ(batch[i].functions[f].arch, "sm_90");
      EXPECT_EQ(batch[i].functions[f].instructions, want[f].instructions) << want[f].name;
      EXPECT_EQ(batch[i].functions[f].str(), want[f].str()) << want[f].name;
    }
  }
}

TEST(SassNvrtc, AnythingButACubinIsAnErrorWithTheToolsMessage) {
  SKIP_WITHOUT_DISASSEMBLER();
  std::vector<uint8_t> junk = {'n', 'o', 't', ' ', 'a', 'n', ' ', 'e', 'l', 'f'};
  try {
    disassemble(junk);
    FAIL() << "expected a DisassembleError";
  } catch (const DisassembleError &e) {
    EXPECT_NE(std::string(e.what()).find("cuobjdump"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::runtime
