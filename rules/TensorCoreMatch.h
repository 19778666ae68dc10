//===- rules/TensorCoreMatch.h - What the tensor-core rule matched (private) ===//
//
// Private to rules/: the tensor-core rule's match (MatmulTensorCore.cpp),
// which the kernel construction (TensorCoreKernel.cpp) reads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/rules/MatmulTensorCore.h"

namespace tessera::rules::detail {

using analysis::Access;
using analysis::FuncInfo;
using ir::Buffer;
using ir::BufferNode;
using ir::DataType;
using ir::Expr;
using ir::PrimFunc;
using ir::Store;
using ir::Var;

/// A block whose single store produces an operand element by element (a
/// cast, a dequantisation, zero padding): inlined into the operand's loads.
struct Producer {
  const Store *store = nullptr;
  std::vector<Var> dim_vars;  ///< the iter var indexing each dimension of the store
};

/// One operand as the kernel reads it.
struct OperandInfo {
  Buffer buffer;
  Access access;      ///< the load in the matmul block (indices over its iters)
  bool k_inner = true;  ///< the contiguous dimension is K (else the M or N role)
  int64_t contig = -1;  ///< the contiguous extent (-1: symbolic)
  bool elementwise = false;  ///< copied element by element (computed by inlined producers, or rows not 4-byte aligned)
};

/// One epilogue block folded into the store.
struct EpilogueStep {
  Buffer reads;       ///< the buffer it reads (the accumulator or the previous step's output)
  const Store *store = nullptr;
  std::vector<Var> iters;  ///< its iter vars, by the matmul iter each stands for (-1: none)
  std::vector<int> matmul_iter;
};

struct TensorCoreMatch final : Match {
  /// The function matched: the one given, or a convolution's GEMM form.
  PrimFunc func;
  FuncInfo info;
  int block = -1;
  std::vector<int> batch;
  int m = -1, n = -1, k = -1;
  OperandInfo a, b;
  Access c;  ///< the accumulator's write
  DataType in_dtype, acc_dtype;
  std::vector<EpilogueStep> epilogue;
  /// Inlined producers of A, B and the epilogue's other inputs (and of what
  /// they read), by the buffer they write.
  std::map<const BufferNode *, Producer> producers;
  /// The same buffers in the order they were found (iterate this: the map's
  /// order is the pointers').
  std::vector<const BufferNode *> producer_order;
  std::string layout;

  std::string describe() const override {
    std::string s = "block '" + info.blocks[block].name + "': " + layout + " matmul on tensor cores, " +
                    in_dtype.str() + " -> " + acc_dtype.str();
    if (!batch.empty()) s += ", batched";
    if (!epilogue.empty()) s += ", " + std::to_string(epilogue.size()) + " epilogue block(s)";
    return s;
  }
};


/// Empty when TMA can copy both operands' tiles (TensorCoreConfig::tma),
/// else why not: each operand a parameter read as it is, each of its
/// dimensions indexed by one iter of the matmul, K-major or (16-bit, with
/// `c`'s block_m / block_n a multiple of 64 when a config is given) M- or
/// N-major.
std::string tma_refusal(const TensorCoreMatch &m, const TensorCoreConfig *c = nullptr);

/// Empty when a tensor map can describe `b` at every size, else why not
/// (ir::tma::check_tensor with its symbolic extents taken as 1: a stride
/// that a symbolic extent multiplies keeps the 16-byte rule at every size
/// exactly when its constant factor does).
std::string tensor_map_shape_refusal(const Buffer &b);

/// The buffer the kernel's epilogue writes: the last epilogue step's, or
/// the accumulator's when there is none.
const Buffer &output_buffer(const TensorCoreMatch &m);

/// The matmul iter (an index into the block's iters) indexing each
/// dimension of the output buffer, or -1 where a dimension's index is not
/// one iter of the matmul.
std::vector<int> output_iters(const TensorCoreMatch &m);

/// Empty when TMA can store the output tile (TensorCoreConfig::tma_store),
/// else why not: the output a parameter, at most 5 dimensions, each indexed
/// by its own iter of the matmul, the last by N and one by M; an element
/// type TMA copies; its rows a multiple of 16 bytes (when constant); with a
/// config, block_n a multiple of 128 bytes of elements.
std::string tma_store_refusal(const TensorCoreMatch &m, const TensorCoreConfig *c = nullptr);

/// The kernel for `m` at `c` (see MatmulTensorCore.h): the thread-bound
/// loops around the block that allocates the shared tiles and fragments.
ir::Stmt build_tensor_core_kernel(const TensorCoreMatch &m, const TensorCoreConfig &c);

}  // namespace tessera::rules::detail
