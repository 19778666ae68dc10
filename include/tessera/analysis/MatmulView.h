//===- tessera/analysis/MatmulView.h - A reduction block seen as a matmul ---===//
//
// The canonical view of `C[...] += A[...] * B[...]` that the matmul rules
// schedule: every iter of the block gets a role,
//
//   Batch  spatial, used by A, B and C        (b in C[b,i,j] += A[b,i,k] B[b,k,j])
//   M      spatial, used by A and C           (i)
//   N      spatial, used by B and C           (j)
//   K      reduce,  used by A and B           (k)
//
// and each operand the role of each of its dimensions, so the layout follows:
// "nn" is A[.., M, K] x B[.., K, N]; "nt" has B[.., N, K]; "tn" has
// A[.., K, M]. Operand loads may be wrapped in casts (float16 inputs with a
// float32 accumulator). Elementwise producers of A or B (a dequantisation, a
// cast) are the prologue, spatial consumers of C the epilogue.
//
// A convolution's window indices (`A[n, h + r, w + s, c]`) are not plain iter
// vars; match_matmul declines with a reason and the conv rule reindexes first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/Match.h"

namespace tessera::analysis {

enum class MatmulRole : char { Batch = 'B', M = 'M', N = 'N', K = 'K' };

struct MatmulOperand {
  ir::Buffer buffer;
  /// The role of each buffer dimension (outermost first).
  std::vector<MatmulRole> dims;
  /// The role of the innermost (contiguous) dimension.
  MatmulRole inner() const { return dims.back(); }
  /// "BMK", ...
  std::string roles() const;
};

struct MatmulView {
  /// The reduction block (position in FuncInfo::blocks).
  int block = -1;
  /// Iter positions (in BlockInfo::iters) by role, in iter order.
  std::vector<int> batch, m, n, k;
  MatmulOperand a, b, c;
  /// dtype of the operands as stored, and of the accumulation (C's dtype).
  ir::DataType a_dtype, b_dtype, acc_dtype;
  /// Both factors of the product are rounded by T.round_to_tf32: the program
  /// asks for tf32 products (tensor cores may run them).
  bool tf32 = false;
  /// Elementwise blocks producing A or B, and spatial blocks consuming C.
  std::vector<int> prologue, epilogue;

  /// "nn", "nt", "tn" or "tt" (see the file comment).
  std::string layout() const;
};

/// The Load a product's factor reads, under any number of casts and tf32
/// roundings (T.round_to_tf32), or nullptr.
const ir::Load *strip_casts(const ir::Expr &e);

/// Matches block `block` of `info` as a matmul, or says why not.
MatchResult<MatmulView> match_matmul(const FuncInfo &info, int block);

}  // namespace tessera::analysis
