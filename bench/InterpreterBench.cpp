//===- InterpreterBench.cpp - Speed of the reference interpreter -----------===//
//
// The interpreter is the numeric oracle of every schedule test, so its speed
// bounds how large those tests can be. Goal: a 256x256x256 float32 matmul in
// TensorIR form (a reduce block with init) in well under a second on one core.
//
//   build-interp/bench/tessera_bench_interpreter --benchmark_min_time=2
//
// The LLVM JIT (runtime/LlvmJit.h) runs the same programs (BM_Jit_*: issue
// 17's target is 50x the interpreter) and BM_JitCompile_* times generating,
// optimising (O2) and JIT-compiling one function, the cache bypassed.
//
// The programs are built with the C++ builders (ir/Op.h), not parsed.
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>

#include <cstring>
#include <thread>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/ir/Op.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/Verify.h"

namespace {

using namespace tessera;
using namespace tessera::ir;

Stmt loop(const Var &v, int64_t extent, Stmt body) {
  return For::make(v, i32(0), i32(extent), ForKind::Serial, std::move(body));
}

/// C[i, j] = sum_k A[i, k] * B[k, j], one block "C" with init.
PrimFunc matmul(int64_t m, int64_t n, int64_t k, DataType t) {
  Var a("a", DataType::handle()), b("b", DataType::handle()), c("c", DataType::handle());
  Buffer A = Buffer::make("A", t, {i32(m), i32(k)});
  Buffer B = Buffer::make("B", t, {i32(k), i32(n)});
  Buffer C = Buffer::make("C", t, {i32(m), i32(n)});
  Var i("i"), j("j"), kk("k"), vi("vi"), vj("vj"), vk("vk");
  Stmt init = Store::make(C, make_const(t, 0), {vi, vj});
  Stmt body = Store::make(C, Load::make(C, {vi, vj}) + Load::make(A, {vi, vk}) * Load::make(B, {vk, vj}), {vi, vj});
  Stmt blk = Block::make("C",
                         {{vi, Range::from_extent(i32(m)), IterKind::Spatial},
                          {vj, Range::from_extent(i32(n)), IterKind::Spatial},
                          {vk, Range::from_extent(i32(k)), IterKind::Reduce}},
                         {i, j, kk}, Expr(), {}, {}, {}, init, body);
  return PrimFunc::make("matmul", {a, b, c}, {{a, A}, {b, B}, {c, C}}, loop(i, m, loop(j, n, loop(kk, k, blk))));
}

/// Row softmax of A[rows, cols] into B: max, exp-sum, normalise (three blocks per row).
PrimFunc softmax(int64_t rows, int64_t cols) {
  DataType t = DataType::float32();
  Var a("a", DataType::handle()), b("b", DataType::handle());
  Buffer A = Buffer::make("A", t, {i32(rows), i32(cols)});
  Buffer B = Buffer::make("B", t, {i32(rows), i32(cols)});
  Buffer M = Buffer::make("M", t, {i32(rows)});
  Buffer S = Buffer::make("S", t, {i32(rows)});
  Var i0("i0"), k0("k0"), v0("v0"), vk0("vk0");
  Stmt mx = loop(i0, rows, loop(k0, cols, Block::make("max", {{v0, Range::from_extent(i32(rows)), IterKind::Spatial},
                                                               {vk0, Range::from_extent(i32(cols)), IterKind::Reduce}},
                                                       {i0, k0}, Expr(), {}, {}, {},
                                                       Store::make(M, Expr(Call::make(t, Intrinsic::MinValue, {})), {v0}),
                                                       Store::make(M, max(Load::make(M, {v0}), Load::make(A, {v0, vk0})), {v0}))));
  Var i1("i1"), k1("k1"), v1("v1"), vk1("vk1");
  Stmt sum = loop(i1, rows, loop(k1, cols, Block::make("sum", {{v1, Range::from_extent(i32(rows)), IterKind::Spatial},
                                                                {vk1, Range::from_extent(i32(cols)), IterKind::Reduce}},
                                                        {i1, k1}, Expr(), {}, {}, {}, Store::make(S, make_const(t, 0), {v1}),
                                                        Store::make(S, Load::make(S, {v1}) + call(Intrinsic::Exp, {Load::make(A, {v1, vk1}) - Load::make(M, {v1})}), {v1}))));
  Var i2("i2"), j2("j2"), v2("v2"), vj2("vj2");
  Stmt norm = loop(i2, rows, loop(j2, cols, Block::make("norm", {{v2, Range::from_extent(i32(rows)), IterKind::Spatial},
                                                                  {vj2, Range::from_extent(i32(cols)), IterKind::Spatial}},
                                                          {i2, j2}, Expr(), {}, {}, {}, std::nullopt,
                                                          Store::make(B, call(Intrinsic::Exp, {Load::make(A, {v2, vj2}) - Load::make(M, {v2})}) / Load::make(S, {v2}), {v2, vj2}))));
  Stmt root = Block::make("root", {}, {}, Expr(), {}, {}, {M, S}, std::nullopt, Seq::make({mx, sum, norm}));
  return PrimFunc::make("softmax", {a, b}, {{a, A}, {b, B}}, root);
}

/// C = A + B over n float32 elements (one block): memory-bound.
PrimFunc add(int64_t n) {
  DataType t = DataType::float32();
  Var a("a", DataType::handle()), b("b", DataType::handle()), c("c", DataType::handle());
  Buffer A = Buffer::make("A", t, {i32(n)}), B = Buffer::make("B", t, {i32(n)}), C = Buffer::make("C", t, {i32(n)});
  Var i("i"), vi("vi");
  Stmt blk = Block::make("C", {{vi, Range::from_extent(i32(n)), IterKind::Spatial}}, {i}, Expr(), {}, {}, {},
                         std::nullopt, Store::make(C, Load::make(A, {vi}) + Load::make(B, {vi}), {vi}));
  return PrimFunc::make("add", {a, b, c}, {{a, A}, {b, B}, {c, C}}, loop(i, n, blk));
}

/// `f` on random arguments, run by `Executor` (the Interpreter or the LlvmJit,
/// compiled once) every iteration.
template <typename Executor>
void run_bench(benchmark::State &state, const PrimFunc &f, double flops) {
  auto args = runtime::make_random_args(f, {}, 1);
  std::vector<runtime::NDArray *> ptrs = runtime::pointers_to(args);
  Executor executor(f);
  for (auto _ : state) {
    executor.run(ptrs);
    benchmark::DoNotOptimize(args.back().data());
  }
  state.counters["flop/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Matmul256_f32(benchmark::State &state) {
  run_bench<runtime::Interpreter>(state, matmul(256, 256, 256, DataType::float32()), 2.0 * 256 * 256 * 256);
}
BENCHMARK(BM_Matmul256_f32)->Unit(benchmark::kMillisecond);

void BM_Matmul128_f16(benchmark::State &state) {
  run_bench<runtime::Interpreter>(state, matmul(128, 128, 128, DataType::float16()), 2.0 * 128 * 128 * 128);
}
BENCHMARK(BM_Matmul128_f16)->Unit(benchmark::kMillisecond);

void BM_Softmax_256x1024_f32(benchmark::State &state) {
  run_bench<runtime::Interpreter>(state, softmax(256, 1024), 5.0 * 256 * 1024);
}
BENCHMARK(BM_Softmax_256x1024_f32)->Unit(benchmark::kMillisecond);

void BM_Jit_Matmul256_f32(benchmark::State &state) {
  run_bench<runtime::LlvmJit>(state, matmul(256, 256, 256, DataType::float32()), 2.0 * 256 * 256 * 256);
}
BENCHMARK(BM_Jit_Matmul256_f32)->Unit(benchmark::kMillisecond);

void BM_Jit_Matmul128_f16(benchmark::State &state) {
  run_bench<runtime::LlvmJit>(state, matmul(128, 128, 128, DataType::float16()), 2.0 * 128 * 128 * 128);
}
BENCHMARK(BM_Jit_Matmul128_f16)->Unit(benchmark::kMillisecond);

void BM_Jit_Softmax_256x1024_f32(benchmark::State &state) {
  run_bench<runtime::LlvmJit>(state, softmax(256, 1024), 5.0 * 256 * 1024);
}
BENCHMARK(BM_Jit_Softmax_256x1024_f32)->Unit(benchmark::kMillisecond);

/// Memory-bound: the JIT's add of 16M float32 (192 MiB moved: two arrays
/// read, one written) against memcpy moving as many bytes (96 MiB copied)
/// on as many threads as the JIT uses. bytes/s counts bytes read + written.
constexpr int64_t kAddElements = int64_t(1) << 24;
void BM_Jit_Add16M_f32(benchmark::State &state) {
  PrimFunc f = add(kAddElements);
  auto args = runtime::make_random_args(f, {}, 1);
  std::vector<runtime::NDArray *> ptrs = runtime::pointers_to(args);
  runtime::LlvmJit jit(f);
  for (auto _ : state) jit.run(ptrs);
  state.SetBytesProcessed(int64_t(state.iterations()) * 3 * kAddElements * 4);
  state.SetLabel(std::to_string(runtime::llvm_jit_threads()) + " threads");
}
BENCHMARK(BM_Jit_Add16M_f32)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Memcpy96MiB(benchmark::State &state) {
  const size_t bytes = size_t(kAddElements) * 4 * 3 / 2;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  const unsigned threads = runtime::llvm_jit_threads();
  for (auto _ : state) {
    std::vector<std::thread> workers;
    const size_t share = bytes / threads;
    for (unsigned t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        const size_t begin = t * share, end = t + 1 == threads ? bytes : begin + share;
        std::memcpy(dst.data() + begin, src.data() + begin, end - begin);
      });
    for (std::thread &w : workers) w.join();
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * 2 * int64_t(bytes));
  state.SetLabel(std::to_string(threads) + " threads");
}
BENCHMARK(BM_Memcpy96MiB)->Unit(benchmark::kMillisecond)->UseRealTime();

/// The oracle's real work: the float64 reference program of `f` (values,
/// error variances and sums of squares; runtime/Verify.h) by one executor.
void run_reference(benchmark::State &state, const PrimFunc &f, runtime::Oracle oracle) {
  auto args = runtime::make_random_args(f, {}, 1);
  runtime::Oracle used = oracle;
  for (auto _ : state) benchmark::DoNotOptimize(runtime::compute_reference(f, args, oracle, &used));
  state.SetLabel(runtime::oracle_name(used));
}
void BM_Reference_Matmul256_f32(benchmark::State &state) {
  run_reference(state, matmul(256, 256, 256, DataType::float32()), runtime::Oracle(state.range(0)));
}
BENCHMARK(BM_Reference_Matmul256_f32)
    ->Arg(int(runtime::Oracle::Interpreter))
    ->Arg(int(runtime::Oracle::Llvm))
    ->Unit(benchmark::kMillisecond);
void BM_Reference_Softmax_256x1024_f32(benchmark::State &state) {
  run_reference(state, softmax(256, 1024), runtime::Oracle(state.range(0)));
}
BENCHMARK(BM_Reference_Softmax_256x1024_f32)
    ->Arg(int(runtime::Oracle::Interpreter))
    ->Arg(int(runtime::Oracle::Llvm))
    ->Unit(benchmark::kMillisecond);

void BM_JitCompile_matmul(benchmark::State &state) {
  PrimFunc f = matmul(256, 256, 256, DataType::float32());
  for (auto _ : state) benchmark::DoNotOptimize(runtime::LlvmJit(f, {.use_cache = false}));
}
BENCHMARK(BM_JitCompile_matmul)->Unit(benchmark::kMillisecond);

void BM_JitCompile_softmax(benchmark::State &state) {
  PrimFunc f = softmax(256, 1024);
  for (auto _ : state) benchmark::DoNotOptimize(runtime::LlvmJit(f, {.use_cache = false}));
}
BENCHMARK(BM_JitCompile_softmax)->Unit(benchmark::kMillisecond);

void BM_Compile_matmul(benchmark::State &state) {
  PrimFunc f = matmul(256, 256, 256, DataType::float32());
  for (auto _ : state) benchmark::DoNotOptimize(runtime::Interpreter(f));
}
BENCHMARK(BM_Compile_matmul)->Unit(benchmark::kMicrosecond);

}  // namespace
