//===- DynamicSelectBench.cpp - What dispatching a dynamic kernel costs -----===//
//
// DynamicKernel::select (tune/DynamicKernel.h) runs before every launch of an
// engine's kernels: the cell by a binary search per symbol, the grid by flat
// integer programs, no lock, no allocation. The target (issue 15) is 100 ns.
// Two plans built once outside the loop (the kernel cache of a temporary
// directory): a GEMM with M in [1, 4096] and one with M and N symbolic; the
// sizes cycle through 64 values so the branch predictor cannot learn one.
//
// On a GPU, the launch: BM_LaunchRaw enqueues one bound kernel through
// cuLaunchKernel directly (Kernel::launch_raw with a prepared argument
// block), BM_LaunchDynamic goes through bind(sizes, buffers) + launch for
// sizes cycling through 64 values (the target: within 1 us of the raw
// launch). Both time the host side (the launch is asynchronous; the stream
// is drained every 256 launches, outside the timing). Without a device they
// are skipped with the reason.
//
//   build/bench/tessera_bench_dynamic_select --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>

#include <filesystem>

#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/DetectArch.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/script/Parser.h"
#include "tessera/tune/DynamicKernel.h"

namespace {

using namespace tessera;

const char *kMatmul = R"(
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    m = T.int32()
    n = T.int32()
    A = T.match_buffer(a, (m, 4096), "float16")
    B = T.match_buffer(b, (n, 4096), "float16")
    C = T.match_buffer(c, (m, n), "float32")
    for i, j, k in T.grid(m, n, 4096):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vj, vk])
)";

tuning::DynamicKernel build(const std::vector<std::string> &ranges, const std::map<std::string, int64_t> &bind) {
  static runtime::KernelCache cache(std::filesystem::temp_directory_path() / "tessera-bench-dynamic-select");
  ir::PrimFunc f = script::parse_func(kMatmul);
  if (!bind.empty()) f = analysis::specialize(f, bind);
  tuning::DynamicSpec spec{.max_kernels = 8};
  for (const std::string &r : ranges) spec.symbols.push_back(tuning::SymbolRange::parse(r));
  return tuning::DynamicKernel::create(f, spec, Arch::by_name("h100"), {.cache = &cache});
}

void BM_SelectOneSymbol(benchmark::State &state) {
  static tuning::DynamicKernel k = build({"m=1:4096"}, {{"n", 4096}});
  int64_t sizes[64];
  for (int i = 0; i < 64; ++i) sizes[i] = 1 + (i * 2654435761u) % 4096;
  size_t i = 0;
  for (auto _ : state) {
    tuning::KernelLaunch l = k.select(&sizes[i++ & 63]);
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_SelectOneSymbol);

void BM_SelectTwoSymbols(benchmark::State &state) {
  static tuning::DynamicKernel k = build({"m=1:4096", "n=64:8192"}, {});
  int64_t sizes[128];
  for (int i = 0; i < 64; ++i) {
    sizes[2 * i] = 1 + (i * 2654435761u) % 4096;
    sizes[2 * i + 1] = 64 + (i * 40503u) % 8129;
  }
  size_t i = 0;
  for (auto _ : state) {
    tuning::KernelLaunch l = k.select(&sizes[2 * (i++ & 63)]);
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_SelectTwoSymbols);

const char *kScale = R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i in range(n):
        with T.block("B"):
            v = T.axis.remap("S", [i])
            B[v] = A[v] * T.float32(2)
)";

/// A small elementwise kernel for n in [1, 65536], loaded on device 0, with
/// its buffers; nullptr without a device.
struct LaunchSetup {
  tuning::DynamicKernel kernel;
  runtime::DeviceBuffer a, b;
  uint64_t pointers[2] = {};
};
LaunchSetup *launch_setup() {
  static LaunchSetup *setup = [] () -> LaunchSetup * {
    if (runtime::driver_status() != runtime::DriverStatus::Ok || runtime::device_count() == 0) return nullptr;
    static runtime::KernelCache cache(std::filesystem::temp_directory_path() / "tessera-bench-dynamic-select");
    tuning::DynamicSpec spec{.symbols = {tuning::SymbolRange::parse("n=1:65536")}, .max_kernels = 4};
    auto *s = new LaunchSetup{tuning::DynamicKernel::create(script::parse_func(kScale), spec, runtime::detect_arch(),
                                                          {.cache = &cache}),
                              runtime::DeviceBuffer(65536 * 4), runtime::DeviceBuffer(65536 * 4)};
    s->kernel.load(0);
    s->pointers[0] = s->a.ptr(), s->pointers[1] = s->b.ptr();
    return s;
  }();
  return setup;
}

void drain(benchmark::State &state, size_t i) {
  if ((i & 255) != 255) return;
  state.PauseTiming();
  runtime::Device::get(0).synchronize();
  state.ResumeTiming();
}

void BM_LaunchRaw(benchmark::State &state) {
  LaunchSetup *s = launch_setup();
  if (!s) return state.SkipWithError("no CUDA device");
  int64_t n = 4096;
  tuning::BoundLaunch b = s->kernel.bind(&n, s->pointers, 2);
  void **params = b.params();
  size_t i = 0;
  for (auto _ : state) {
    b.step[0].kernel->launch_raw(b.dims.step[0].grid, b.dims.step[0].block, params, b.dims.step[0].dynamic_shared_bytes);
    drain(state, i++);
  }
  runtime::Device::get(0).synchronize();
}
BENCHMARK(BM_LaunchRaw);

void BM_LaunchDynamic(benchmark::State &state) {
  LaunchSetup *s = launch_setup();
  if (!s) return state.SkipWithError("no CUDA device");
  int64_t sizes[64];
  for (int i = 0; i < 64; ++i) sizes[i] = 1 + (i * 2654435761u) % 65536;
  size_t i = 0;
  for (auto _ : state) {
    s->kernel.bind(&sizes[i & 63], s->pointers, 2).launch();
    drain(state, i++);
  }
  runtime::Device::get(0).synchronize();
}
BENCHMARK(BM_LaunchDynamic);

}  // namespace
