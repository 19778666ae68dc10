//===- PolicyBench.cpp - Speed of the GEMM policy's proposals ---------------===//
//
// A policy runs before anything is compiled or timed, for every new shape an
// application meets, so it must take milliseconds (policies/Policy.h). This
// times policies::propose for the top 20 configs of a 4096^3 float32 matmul
// and of a 3x3 float16 convolution (batch 32, 56x56, 64 -> 64 channels, the
// corpus's conv2d at full size) on the H100 preset: the match is made once,
// outside the loop.
//
//   build/bench/tessera_bench_policy --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//
#include <benchmark/benchmark.h>

#include "tessera/policies/Policy.h"
#include "tessera/rules/Rule.h"
#include "tessera/script/Parser.h"

namespace {

using namespace tessera;

const char *kMatmul = R"(
@T.prim_func
def main(A: T.Buffer((4096, 4096), "float32"), B: T.Buffer((4096, 4096), "float32"), C: T.Buffer((4096, 4096), "float32")):
    for i, j, k in T.grid(4096, 4096, 4096):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

const char *kConv2d = R"(
@T.prim_func
def main(inputs: T.Buffer((32, 56, 56, 64), "float16"), weight: T.Buffer((3, 3, 64, 64), "float16"), out: T.Buffer((32, 56, 56, 64), "float16")):
    T.func_attr({"tir.noalias": True})
    pad = T.alloc_buffer((32, 58, 58, 64), "float16")
    acc = T.alloc_buffer((32, 56, 56, 64), "float32")
    for b, y, x, c in T.grid(32, 58, 58, 64):
        with T.block("pad"):
            v_b, v_y, v_x, v_c = T.axis.remap("SSSS", [b, y, x, c])
            pad[v_b, v_y, v_x, v_c] = T.if_then_else(1 <= v_y and v_y < 57 and 1 <= v_x and v_x < 57, inputs[v_b, v_y - 1, v_x - 1, v_c], T.float16(0))
    for b, y, x, o, r, s, c in T.grid(32, 56, 56, 64, 3, 3, 64):
        with T.block("acc"):
            v_b, v_y, v_x, v_o, v_r, v_s, v_c = T.axis.remap("SSSSRRR", [b, y, x, o, r, s, c])
            with T.init():
                acc[v_b, v_y, v_x, v_o] = T.float32(0)
            acc[v_b, v_y, v_x, v_o] = acc[v_b, v_y, v_x, v_o] + T.Cast("float32", pad[v_b, v_y + v_r, v_x + v_s, v_c]) * T.Cast("float32", weight[v_r, v_s, v_c, v_o])
    for b, y, x, o in T.grid(32, 56, 56, 64):
        with T.block("out"):
            v_b, v_y, v_x, v_o = T.axis.remap("SSSS", [b, y, x, o])
            out[v_b, v_y, v_x, v_o] = T.Cast("float16", acc[v_b, v_y, v_x, v_o])
)";

void propose_top20(benchmark::State &state, const char *text, const char *rule_name) {
  const Arch arch = Arch::by_name("h100");
  const ir::PrimFunc f = script::parse_func(text);
  const rules::Rule &rule = *rules::find_rule(rule_name);
  auto m = rule.match(f, arch);
  if (!m) {
    state.SkipWithError(m.reason().c_str());
    return;
  }
  size_t proposed = 0;
  for (auto _ : state) {
    policies::Proposal p = policies::propose(f, rule, **m, arch, {.topk = 20});
    proposed = p.candidates.size();
    benchmark::DoNotOptimize(p);
  }
  state.counters["candidates"] = double(proposed);
}

void BM_ProposeMatmul4096F32H100(benchmark::State &state) {
  propose_top20(state, kMatmul, "matmul");
}
BENCHMARK(BM_ProposeMatmul4096F32H100)->Unit(benchmark::kMillisecond);

void BM_ProposeConv2dResNetF16H100(benchmark::State &state) {
  propose_top20(state, kConv2d, "conv2d");
}
BENCHMARK(BM_ProposeConv2dResNetF16H100)->Unit(benchmark::kMillisecond);

}  // namespace
