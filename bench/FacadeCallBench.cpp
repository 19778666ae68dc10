//===- bench/FacadeCallBench.cpp - What one call of a tuned kernel costs -----===//
//
// tessera::Kernel::run on DLPack tensors from C++, for a CPU kernel small
// enough that the call is what is timed (a 33 x 70 float16 add, 2,310
// elements), and the same kernel's launch when its arguments are bound once
// (the JIT's own run). bench/python_call_overhead.py times the same kernel
// called from Python; the difference is the Python layer's overhead.
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>

#include <vector>

#include "tessera/tessera.h"

namespace {

const char *kAdd = R"(
@T.prim_func
def add(A: T.Buffer((T.int64(33), T.int64(70)), "float16"), bias: T.Buffer((T.int64(70),), "float16"),
        C: T.Buffer((T.int64(33), T.int64(70)), "float16")) -> None:
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(T.int64(33), T.int64(70)):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            C[v_i, v_j] = A[v_i, v_j] + bias[v_j]
)";

void BM_KernelRunOnDLTensors(benchmark::State &state) {
  static const tessera::Kernel k = tessera::tune(kAdd, tessera::Target::cpu());
  std::vector<uint16_t> a(33 * 70, 0x3c00), bias(70, 0x3c00), c(33 * 70);
  int64_t sa[] = {33, 70}, sb[] = {70};
  DLTensor ta{a.data(), {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, sa, nullptr, 0};
  DLTensor tb{bias.data(), {kDLCPU, 0}, 1, {kDLFloat, 16, 1}, sb, nullptr, 0};
  DLTensor tc{c.data(), {kDLCPU, 0}, 2, {kDLFloat, 16, 1}, sa, nullptr, 0};
  const std::vector<DLTensor *> args = {&ta, &tb, &tc};
  for (auto _ : state) k.run(args);
  benchmark::DoNotOptimize(c.data());
}
BENCHMARK(BM_KernelRunOnDLTensors);

}  // namespace
