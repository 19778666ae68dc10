//===- bench/FacadeCallBench.cpp - What one call of a tuned kernel costs -----===//
//
// tessera::Kernel::run on DLPack tensors from C++, for a CPU kernel small
// enough that the call is what is timed (a 33 x 70 float16 add, 2,310
// elements). bench/python_call_overhead.py times the same kernel called from
// Python; the difference is the Python layer's overhead.
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/tessera.h"

namespace {

/// The program both benches time (bench/programs/add_33x70_f16.py).
std::string add_program() {
  std::ifstream in(TESSERA_CALL_BENCH_PROGRAM);
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) throw std::runtime_error("cannot read " + std::string(TESSERA_CALL_BENCH_PROGRAM));
  return text.str();
}

void BM_KernelRunOnDLTensors(benchmark::State &state) {
  static const tessera::Kernel k = tessera::tune(add_program(), tessera::Target::cpu());
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
