//===- tessera/bench/WorkloadFacts.h - What a benchmark needs to judge a time ------===//
//
// Read from a workload function whose shapes are all constants (every size
// variable specialised), without running anything:
//   - bytes:      of every parameter buffer, each counted once (the unique
//                 inputs and outputs: what an ideal kernel moves);
//   - flops:      2 per iteration of every block that accumulates a sum of
//                 products (matmul, batched matmul, gemv, convolution); 0
//                 for memory-bound work;
//   - iterations: of every block (what the interpreter would execute);
//   - gemm:       the cuBLAS GEMM that computes the same matrix product,
//                 when there is one: the function's single reduction is
//                 C[b.., i, j] += A[..] * B[..] (analysis::match_matmul) or a
//                 matrix-vector product y[i] += W[i, k] * x[k] (N = 1), with
//                 at most one batch, M, N and K iter, and operands cuBLAS
//                 takes (float16, bfloat16 or float32, the same for A and B).
//
// `gemm_exact` says whether that GEMM is the whole function, so cuBLAS can
// be the correctness reference: A, B and the output are its only parameters
// and at most one epilogue block copies (or casts) the accumulator into the
// output. Otherwise the GEMM is still the speed reference, on random data
// (a bias + ReLU epilogue, an int4 dequantising prologue: cuBLAS is given
// the float16 weights), and `gemm_note` says why it is not exact.
//
//   WorkloadFacts facts = workload_facts(analysis::specialize(f, full_sizes));
//   if (facts.gemm) puts(facts.gemm->str().c_str());  // "gemm 4096x4096x4096 nt float16->float16"
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tessera/ir/Func.h"
#include "tessera/runtime/Cublas.h"

namespace tessera::bench {

struct WorkloadFacts {
  size_t bytes = 0;
  double flops = 0;
  int64_t iterations = 0;
  std::optional<runtime::GemmDesc> gemm;
  /// Why there is no GEMM equivalent, or why it is not exact (empty when exact).
  std::string gemm_note;
  bool gemm_exact = false;
  /// Parameter positions of A, B and the output when gemm_exact.
  int a_param = -1, b_param = -1, c_param = -1;
};

/// The facts of `f`; UserError when some shape is not a constant.
WorkloadFacts workload_facts(const ir::PrimFunc &f);

}  // namespace tessera::bench
