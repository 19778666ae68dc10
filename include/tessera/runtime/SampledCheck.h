//===- tessera/runtime/SampledCheck.h - Verifying a kernel on some of its blocks ===//
//
// A tensor-core GEMM at 4096^3 is 6.9e10 multiply-adds: on two CPU cores the
// oracle needs minutes for the float64 reference and more for the scheduled
// program's per-lane mma emulation. `tessera schedule --verify` checks such a
// kernel at its full size on a sample of its thread blocks instead, in three
// runs that together still say something about every output element:
//
//   1. Coverage, every block: `coverage_program` keeps only the loops, guards
//      and index arithmetic that lead to the kernel's stores into its outputs
//      and stores 1 there (everything else — loads, shared memory, mma — is
//      dropped). Run on zeroed outputs it proves that the whole grid writes
//      every output element: a guard that skips the last column of the last
//      block is caught even when that block is not sampled.
//   2. Values, some blocks: `sample_blocks` wraps the body of the innermost
//      blockIdx loop in `if by in {...} and bx in {...}` — per grid axis its
//      first and last index and a few others (seeded) — and the program runs
//      on outputs filled with a sentinel; the elements that changed are what
//      the sampled blocks wrote.
//   3. Reference, those elements: `restrict_reference` narrows the loops of
//      the float64 reference program (runtime/Verify.h) that enumerate an
//      output dimension (and the intermediates it is computed from) to the
//      index ranges the sampled blocks wrote, so a 128x128 tile of C costs
//      128*128*K instead of M*N*K.
//
// Sampling is sound only for a kernel whose blocks are independent: one
// kernel (one blockIdx loop nest), whose outputs are only stored to (never
// loaded, never handed to an intrinsic); `block_sample_refusal` says why
// otherwise, and --verify then checks the whole grid or refuses.
//
//   if (block_sample_refusal(scheduled).empty()) {
//     std::vector<Unwritten> missing =
//         unwritten_elements(coverage_program(scheduled), f, inputs, Oracle::Auto);
//     BlockSample s = sample_blocks(scheduled, dims, /*per_axis=*/3, seed);
//     std::vector<NDArray> got = inputs;
//     auto wrote = run_sampled_blocks(s, f, got, Oracle::Auto);  // per output, what they wrote
//     keep[c] = marked_ranges(wrote[c], got[c].shape(), 16);
//     ReferenceProgram narrowed = program;
//     narrowed.func = restrict_reference(program, f, keep, dims);   // then run, check where `wrote`
//   }
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/Verify.h"

namespace tessera::runtime {

/// Why `scheduled` cannot be verified on a sample of its thread blocks, or ""
/// when it can: it must be one kernel (one nest of blockIdx loops, every
/// store into a parameter inside it) whose parameters are each either read
/// or stored to, never both, and never passed to an intrinsic as a pointer,
/// with outputs of whole bytes (a sampled run tells what it wrote by them).
std::string block_sample_refusal(const ir::PrimFunc &scheduled);

/// One blockIdx axis of a kernel's grid and the indices a sample keeps.
struct GridAxis {
  std::string tag;  ///< "blockIdx.y"
  int64_t extent = 0;
  std::vector<int64_t> kept;  ///< sorted, distinct
};

/// A scheduled function that runs only some of its thread blocks.
struct BlockSample {
  ir::PrimFunc func;
  std::vector<GridAxis> axes;  ///< outermost first
  int64_t kept_blocks() const;
  int64_t total_blocks() const;
  /// "9 of 1024 thread blocks (blockIdx.y 0, 17, 31; blockIdx.x 0, 5, 31)"
  std::string str() const;
};

/// Keeps, on each blockIdx axis, up to `per_axis` indices: the first, then
/// the last (where partial tiles are), then others drawn with `seed`; grid
/// extents are evaluated at `dims`.
/// UserError when block_sample_refusal is not empty.
BlockSample sample_blocks(const ir::PrimFunc &scheduled, const DimBindings &dims, int per_axis, uint64_t seed);

/// The stores of `scheduled` into its parameters, each storing 1, with the
/// loops, guards and lets that decide where they go: run on zeroed outputs,
/// an element still 0 is one the kernel never writes. UserError when a store
/// index or a guard depends on loaded data (then no such program exists).
ir::PrimFunc coverage_program(const ir::PrimFunc &scheduled);

/// What the coverage run found for one output: how many elements it left
/// unwritten, and the first of them (flat, row-major; -1 when none).
struct Unwritten {
  int64_t count = 0, first = -1;
};

/// Runs `coverage` (coverage_program of a scheduled version of f) on
/// `inputs` with f's outputs zeroed, by `oracle`; per parameter of f, what it
/// left unwritten (zero for the parameters f does not write). `used`
/// receives the executor that ran.
std::vector<Unwritten> unwritten_elements(const ir::PrimFunc &coverage, const ir::PrimFunc &f,
                                          const std::vector<NDArray> &inputs, Oracle oracle, Oracle *used = nullptr);

/// Runs the sampled blocks on `args` (f's arguments) with f's outputs first
/// filled with a sentinel: all one bits in floats (a NaN no arithmetic
/// produces), 0xA5 bytes in integers (a written element that happens to equal
/// it goes unchecked; the coverage run still proves it written). Per
/// parameter, one byte per element: whether the run changed it (empty for the
/// parameters f does not write).
std::vector<std::vector<uint8_t>> run_sampled_blocks(const BlockSample &sample, const ir::PrimFunc &f,
                                                     std::vector<NDArray> &args, Oracle oracle,
                                                     Oracle *used = nullptr);

/// Element indices [begin, end) of one dimension.
struct IndexRange {
  int64_t begin = 0, end = 0;
};
/// Per dimension of an array, the ranges of indices kept (sorted, disjoint);
/// an empty list keeps the whole dimension.
using IndexRanges = std::vector<std::vector<IndexRange>>;

/// Per dimension of `shape`, the ranges of indices at which `mask` (one byte
/// per element, row-major) has a nonzero element; at most `max_ranges` per
/// dimension, chosen evenly from first to last when there are more.
IndexRanges marked_ranges(const std::vector<uint8_t> &mask, const std::vector<int64_t> &shape, size_t max_ranges);

/// The reference program computing only what the outputs need at `keep`
/// (one IndexRanges per parameter of f; empty for parameters not narrowed).
/// Walking the blocks from the last, each spatial iterator that a block
/// stores with as a whole index takes the ranges later blocks (or `keep`,
/// for an output and its error buffers) need of that dimension, and passes
/// them to the buffers the block loads at that iterator: an f16 matmul's
/// float32 accumulator is narrowed with the C that casts it. A loop is then
/// narrowed when every block below it binds one such iterator to exactly its
/// variable and they need the same ranges; everything else runs whole. The
/// values at `keep` are those of the whole program, bit for bit (the same
/// operations in the same order). Loop bounds are evaluated at `dims`.
ir::PrimFunc restrict_reference(const ReferenceProgram &program, const ir::PrimFunc &f,
                                const std::vector<IndexRanges> &keep, const DimBindings &dims);

/// `mask` cleared wherever an element lies outside `ranges`.
void keep_within(std::vector<uint8_t> &mask, const std::vector<int64_t> &shape, const IndexRanges &ranges);

}  // namespace tessera::runtime
