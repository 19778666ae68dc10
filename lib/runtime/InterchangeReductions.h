//===- lib/runtime/InterchangeReductions.h - Reductions not innermost ------===//
//
// Private to lib/runtime. The float64 reference program of a matmul runs its
// K loop innermost, as the program is written, and each term carries the
// error bound's bookkeeping (a square root among it): one long dependent
// chain per output, neither vectorized nor interleaved. Moving the innermost
// spatial loop below the reduction loops (for i, j, k -> for i, k, j) keeps
// every output's terms in k order — the same bits — and makes the inner loop
// run over independent outputs, contiguous in the operand it reads along j:
// the JIT vectorizes it. Where the spatial loop indexes the innermost
// dimension of some read; else where it indexes another dimension of an
// operand that another output loop reuses (C += A[i, k] * B[j, k]), that
// operand is first copied with the dimension last (cache_read into
// B_global[k, j], transform_layout) — values moved, not computed, so the
// bits stay. The init then goes into a loop of its own before the
// reduction (decompose_reduction): a "first step?" branch in the inner
// loop kept LLVM from vectorizing it on some programs. A row sum keeps its order (its reduction is the contiguous
// one, its operand read once), unless each term is costly (softmax's sum of
// exps): then its rows go in groups of 16, the group's loop below the
// reduction, so that 16 rows' exps are computed side by side (vectorized),
// each row's terms still in k order. Only what the primitives accept.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/ir/Func.h"

namespace tessera::runtime::detail {

/// `f` with the loop interchange of the file comment applied to each block
/// it suits; `f` itself when none does.
ir::PrimFunc interchange_reductions(const ir::PrimFunc &f);

}  // namespace tessera::runtime::detail
