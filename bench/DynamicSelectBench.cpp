//===- DynamicSelectBench.cpp - What dispatching a dynamic kernel costs -----===//
//
// DynamicKernel::select (tune/DynamicKernel.h) runs before every launch of an
// engine's kernels: the cell by a binary search per symbol, the grid by flat
// integer programs, no lock, no allocation. The target (issue 15) is 100 ns.
// Two plans built once outside the loop (the kernel cache of a temporary
// directory): a GEMM with M in [1, 4096] and one with M and N symbolic; the
// sizes cycle through 64 values so the branch predictor cannot learn one.
//
//   build/bench/tessera_bench_dynamic_select --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>

#include <filesystem>

#include "tessera/analysis/Specialize.h"
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

tune::DynamicKernel build(const std::vector<std::string> &ranges, const std::map<std::string, int64_t> &bind) {
  static runtime::KernelCache cache(std::filesystem::temp_directory_path() / "tessera-bench-dynamic-select");
  ir::PrimFunc f = script::parse_func(kMatmul);
  if (!bind.empty()) f = analysis::specialize(f, bind);
  tune::DynamicSpec spec{.max_kernels = 8};
  for (const std::string &r : ranges) spec.symbols.push_back(tune::SymbolRange::parse(r));
  return tune::DynamicKernel::create(f, spec, Arch::by_name("h100"), {.cache = &cache});
}

void BM_SelectOneSymbol(benchmark::State &state) {
  static tune::DynamicKernel k = build({"m=1:4096"}, {{"n", 4096}});
  int64_t sizes[64];
  for (int i = 0; i < 64; ++i) sizes[i] = 1 + (i * 2654435761u) % 4096;
  size_t i = 0;
  for (auto _ : state) {
    tune::KernelLaunch l = k.select(&sizes[i++ & 63]);
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_SelectOneSymbol);

void BM_SelectTwoSymbols(benchmark::State &state) {
  static tune::DynamicKernel k = build({"m=1:4096", "n=64:8192"}, {});
  int64_t sizes[128];
  for (int i = 0; i < 64; ++i) {
    sizes[2 * i] = 1 + (i * 2654435761u) % 4096;
    sizes[2 * i + 1] = 64 + (i * 40503u) % 8129;
  }
  size_t i = 0;
  for (auto _ : state) {
    tune::KernelLaunch l = k.select(&sizes[2 * (i++ & 63)]);
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_SelectTwoSymbols);

}  // namespace
