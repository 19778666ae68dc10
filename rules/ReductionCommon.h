//===- rules/ReductionCommon.h - Shared by the reduction rules (private) ---===//
//
// What the reduction and general_reduction rules both need: inlining the
// elementwise blocks on a scratch schedule to see what is left, the checks
// that make a reduction block safe to split over threads, the memory layout
// of its dominant read, thread counts derived from the Arch, and the split of
// a serial loop into [serial, unrolled, threads, vector] pieces.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/Match.h"
#include "tessera/arch/Arch.h"
#include "tessera/schedule/Schedule.h"

namespace tessera::rules::reduction_detail {

/// The function after every inlinable block (BlockInfo::is_inlinable) was
/// inlined into its consumers, in program order, on a scratch schedule.
struct Inlined {
  std::vector<std::string> blocks;  ///< the inlined blocks, in the order to inline them
  analysis::FuncInfo info;          ///< the analysis of the function after inlining
};

/// Inlines what can be inlined; a block that compute_inline refuses is a
/// failure naming it and the primitive's reason. Never throws for a valid function.
analysis::MatchResult<Inlined> inline_elementwise(const ir::PrimFunc &f);

/// Why reduction block `b` cannot be split over threads ("" when it can):
/// a combiner the cross-thread lowering knows (+ * max min & | ^), loops
/// one-to-one with its iters and nested around it alone, no guard, and one
/// simple write indexed by every spatial iter (no two threads write one element).
std::string why_not_splittable_reduction(const analysis::BlockInfo &b);

/// Why injective block `b` cannot have its loops fused and split ("" when it can).
std::string why_not_plain_injective(const analysis::BlockInfo &b);

/// The read that decides the memory layout: among the reads using a reduce
/// iter (else all reads), the one using the most iters, the first on ties.
/// nullptr when the block reads nothing.
const analysis::Access *dominant_read(const analysis::BlockInfo &b);

/// Why `b` is a contraction rather than a reduction ("" when it is not):
/// two or more of its spatial iters are each missing from some read that
/// uses a reduce iter, i.e. its operands are reused along several output
/// axes (matmul, convolution), which the matmul-like rules schedule.
std::string why_contraction(const analysis::BlockInfo &b);


/// Loop extent when constant.
std::optional<int64_t> const_extent(const ir::Stmt &loop);
/// Product of the constant extents of `b`'s loops for the iters of `kind`, or
/// nullopt when one is symbolic.
std::optional<int64_t> iter_extent(const analysis::BlockInfo &b, ir::IterKind kind);

int64_t pow2_floor(int64_t x);
int64_t pow2_ceil(int64_t x);
int64_t ceil_div(int64_t a, int64_t b);

/// Threads per thread block the rules aim for: two warps per warp scheduler
/// (enough to hide latency), within the per-block limit.
int64_t target_block_threads(const Arch &arch);
/// Threads to put on a row of `extent` elements (nullopt: symbolic), so that
/// each thread has about eight: a power of two from one warp (or fewer when
/// the row is shorter) up to target_block_threads.
int64_t row_threads(std::optional<int64_t> extent, const Arch &arch);
/// Unroll factor for a serial per-thread loop of `extent` iterations.
int64_t serial_unroll(std::optional<int64_t> extent);

/// The pieces of a loop split for threads, outermost first in the nest.
struct ThreadSplit {
  schedule::LoopRef serial;                   ///< the per-thread serial loop
  std::optional<schedule::LoopRef> unrolled;  ///< inside `serial`, to unroll
  std::optional<schedule::LoopRef> thread;    ///< bound by the caller
  std::optional<schedule::LoopRef> vector;    ///< innermost, vectorized by the caller
  bool unroll_serial = false;                 ///< unroll `serial` itself (the unroll covers it)
  /// The vector piece divides the extent: a tail predicate does not involve it.
  bool whole_vectors = false;
  /// The extent was constant (the pieces may be reordered: reorder needs
  /// tail predicates against constants).
  bool constant = false;
  /// The serial loops in nest order (serial, unrolled).
  std::vector<schedule::LoopRef> serial_loops() const;
};

/// Splits `loop` (serial, from 0, of `extent` when constant) as [serial,
/// unrolled, thread, vector] with the given factors; a factor of 1 leaves
/// its piece out, and an unroll at least the serial extent marks the serial
/// loop itself for unrolling. Names the pieces `<prefix>_o`, `_u`, `_t`, `_v`.
/// Nothing is unrolled yet (reorder needs serial loops): see unroll_pieces.
ThreadSplit split_for_threads(schedule::Schedule &sch, const schedule::LoopRef &loop, std::optional<int64_t> extent,
                              int64_t threads, int64_t unroll, int64_t vector, const std::string &prefix);
/// Puts the thread piece (when there is one) outside the serial pieces, so
/// the nest reads like the CUDA it becomes: each thread strides the loop.
/// Only for constant extents (see ThreadSplit::constant); the order does
/// not matter to lowering, which runs thread loops "transparently".
void thread_outermost(schedule::Schedule &sch, const ThreadSplit &s);
/// Unrolls what split_for_threads marked.
void unroll_pieces(schedule::Schedule &sch, const ThreadSplit &s);
/// The vector piece of a reduce loop (when there is one), which cannot be
/// vectorized: unrolled and annotated for vector loads (ir::
/// kVectorLoadsAnnotation), so that each thread reads `vector` contiguous
/// elements in one access where lowering proves them aligned.
void vector_loads(schedule::Schedule &sch, const ThreadSplit &s);

/// Fuses `loops` (at least one) into one loop named `name` (the loop itself when alone).
schedule::LoopRef fuse_all(schedule::Schedule &sch, const std::vector<schedule::LoopRef> &loops,
                           const std::string &name);

/// Common config checks (ConfigError naming the field).
void require_block_threads(const char *rule, const std::string &field, int64_t threads, const Arch &arch);
void require_unroll(const char *rule, int64_t unroll);

}  // namespace tessera::rules::reduction_detail
