//===- bench/CpuMatmulBench.cpp - The CPU target's matmul against Eigen ----===//
//
// issue 17's CPU target: a float32 matmul n x n x n scheduled for this CPU
// (cpu/CpuSchedule.h: the fastest of cpu_matmul_candidates, picked by a
// quick timing first, as `tessera tune --target cpu` picks it) and run by the
// LLVM JIT, against Eigen's GEMM on the same machine. Eigen runs on one core
// (built without OpenMP); tessera on one core (/1) and on every core (/0).
//
//   build/bench/tessera_bench_cpu --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <chrono>
#include <map>

#include "tessera/cpu/CpuSchedule.h"
#include "tessera/runtime/Backend.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/script/Parser.h"

namespace {

using namespace tessera;

ir::PrimFunc matmul(int64_t n) {
  const std::string s = std::to_string(n);
  return script::parse_func(R"(
@T.prim_func
def matmul(A: T.Buffer(()" + s + ", " + s + R"(), "float32"), B: T.Buffer(()" + s + ", " + s + R"(), "float32"), C: T.Buffer(()" + s + ", " + s + R"(), "float32")):
    for i, j, k in T.grid()" + s + ", " + s + ", " + s + R"():
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
}

/// The fastest CPU schedule of the n^3 matmul on `threads` threads (three
/// runs of each candidate), built.
std::unique_ptr<runtime::Executable> tuned(int64_t n, std::string &label) {
  ir::PrimFunc f = matmul(n);
  const cpu::CpuArch host = cpu::CpuArch::detect();
  std::unique_ptr<runtime::Backend> llvm = runtime::make_backend("llvm", {.fuse_multiply_add = true});
  std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 1);
  std::unique_ptr<runtime::Executable> best;
  double best_ms = 1e30;
  for (const cpu::CpuMatmulConfig &c : cpu::cpu_matmul_candidates(f, host)) {
    std::unique_ptr<runtime::Executable> e = llvm->build(cpu::schedule_for_cpu(f, host, c).func);
    double ms = e->time(args, {.warmup_ms = 0, .measure_ms = 0, .min_reps = 3, .max_reps = 3}).median_ms;
    if (ms < best_ms) best_ms = ms, best = std::move(e), label = c.str();
  }
  return best;
}

void BM_TesseraCpuMatmul(benchmark::State &state) {
  if (!runtime::llvm_jit_available()) return state.SkipWithError("built without LLVM");
  const int64_t n = state.range(0);
  const unsigned saved = runtime::llvm_jit_threads();
  if (state.range(1) > 0) runtime::set_llvm_jit_threads(unsigned(state.range(1)));
  std::string label;
  std::unique_ptr<runtime::Executable> e = tuned(n, label);
  std::vector<runtime::NDArray> args = runtime::make_random_args(matmul(n), {}, 2);
  for (auto _ : state) e->run(args);
  state.counters["flop/s"] = benchmark::Counter(2.0 * double(n * n * n), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(label + ", " + std::to_string(runtime::llvm_jit_threads()) + " threads");
  runtime::set_llvm_jit_threads(saved);
}
BENCHMARK(BM_TesseraCpuMatmul)->Args({512, 1})->Args({512, 0})->Args({1024, 1})->Args({1024, 0})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EigenMatmul(benchmark::State &state) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Index n = state.range(0);
  Matrix a = Matrix::Random(n, n), b = Matrix::Random(n, n), c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["flop/s"] = benchmark::Counter(2.0 * double(n * n * n), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("1 thread");
}
BENCHMARK(BM_EigenMatmul)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
