//===- NvrtcBench.cpp - NVRTC compile time, one thread vs the pool ---------===//
//
// What the tuner pays to compile its candidates: eight register-tiled
// shared-memory float32 GEMM kernels (one per tile configuration, so eight
// distinct programs, as the policy's top-k would produce) compiled to sm_90
// cubins with compile_many on 1 thread and on every core. The speed-up is the
// ratio of the two real times. Also the single-kernel latency of a trivial
// vadd and one GEMM.
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tessera/runtime/NVRTC.h"

namespace {

using namespace tessera::runtime;

/// C = A * B for row-major MxK, KxN; each thread computes a TMxTN tile.
std::string gemm_source(int bm, int bn, int bk, int tm, int tn) {
  char head[256];
  std::snprintf(head, sizeof head, "#define BM %d\n#define BN %d\n#define BK %d\n#define TM %d\n#define TN %d\n",
                bm, bn, bk, tm, tn);
  return std::string(head) + R"(
extern "C" __global__ void __launch_bounds__((BM / TM) * (BN / TN))
gemm(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int M, int N, int K) {
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int threads = (BM / TM) * (BN / TN);
  const int tid = threadIdx.x;
  const int tr = tid / (BN / TN), tc = tid % (BN / TN);
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = tid; e < BM * BK; e += threads) {
      int r = e / BK, c = e % BK;
      As[c][r] = (row0 + r < M && k0 + c < K) ? A[(row0 + r) * K + k0 + c] : 0.f;
    }
    for (int e = tid; e < BK * BN; e += threads) {
      int r = e / BN, c = e % BN;
      Bs[r][c] = (k0 + r < K && col0 + c < N) ? B[(k0 + r) * N + col0 + c] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[kk][tr * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tc * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      int r = row0 + tr * TM + i, c = col0 + tc * TN + j;
      if (r < M && c < N) C[r * N + c] = acc[i][j];
    }
}
)";
}

std::vector<std::string> eight_gemms() {
  const int configs[8][5] = {{64, 64, 8, 4, 4},    {64, 64, 16, 4, 4},  {128, 64, 8, 8, 4},
                             {64, 128, 8, 4, 8},   {128, 128, 8, 8, 8}, {128, 128, 16, 8, 8},
                             {32, 64, 16, 2, 4},   {128, 32, 16, 8, 2}};
  std::vector<std::string> out;
  for (const auto &c : configs) out.push_back(gemm_source(c[0], c[1], c[2], c[3], c[4]));
  return out;
}

const char *kVadd = R"(
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
)";

void BM_CompileMany8Gemms(benchmark::State &state) {
  std::vector<std::string> sources = eight_gemms();
  unsigned threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) {
    std::vector<CompileOutcome> out = compile_many(sources, {.arch = "sm_90", .name = "gemm"}, threads);
    for (const CompileOutcome &o : out)
      if (!o.ok()) state.SkipWithError(o.error->what());
    benchmark::DoNotOptimize(out);
  }
  state.counters["kernels/s"] =
      benchmark::Counter(static_cast<double>(sources.size()) * state.iterations(), benchmark::Counter::kIsRate);
}

void BM_CompileOne(benchmark::State &state) {
  std::string source = state.range(0) == 0 ? kVadd : eight_gemms()[4];
  for (auto _ : state) {
    CompileResult r = compile_cuda(source, {.arch = "sm_90", .name = "one"});
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(state.range(0) == 0 ? "vadd" : "gemm 128x128x8, 8x8 per thread");
}

void thread_args(benchmark::internal::Benchmark *b) {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  b->Arg(1);
  if (cores > 1) b->Arg(cores);
}

}  // namespace

BENCHMARK(BM_CompileMany8Gemms)->Apply(thread_args)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileOne)->Arg(0)->Arg(1)->ArgName("gemm")->UseRealTime()->Unit(benchmark::kMillisecond);
