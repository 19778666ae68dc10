//===- CrossThreadAllReduce.h - Combining one value per thread -------------===//
//
// Private to lib/lower (used by LowerCrossThreadReduction.cpp). Builds the
// statements that combine the per-thread partials of a reduction across the
// threads of the reduce thread axes, for every group of threads that agree
// on the other axes:
//
//   - reduce over threadIdx.x only, R threads, R a power of two <= 32 (and the
//     block a whole number of warps, or less than one): warp shuffles,
//       p[0] = p[0] + T.shfl_xor(mask, p[0], 16, 32) ... offsets R/2 .. 1;
//   - reduce over threadIdx.x only, R a multiple of 32: shuffles within each
//     warp, each warp's lane 0 stores its total in shared memory, a barrier,
//     then every warp combines the R/32 totals with shuffles again;
//   - otherwise (threadIdx.y/z, several axes, R not a power of two below 32):
//     a tree in shared memory, halving the active threads each step, one
//     barrier per step.
//
// After the warp paths every thread of a group holds the group's total in
// `partial`; after the tree only the thread with reduce index 0 does, unless
// `broadcast` asks for one more barrier and a read of the total by all.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <string>
#include <vector>

#include "tessera/ir/Stmt.h"

namespace tessera::lower::detail {

/// One threadIdx axis of the kernel around a reduction. `var` is undefined
/// when the kernel does not use the axis (extent 1); the thread's index on
/// the axis is `var - min`.
struct ThreadAxis {
  ir::Var var;
  ir::Expr min;
  int64_t extent = 1;
  /// True when the reduction combines values across this axis.
  bool reduce = false;
};

struct AllReduceSpec {
  /// "local", one element: the thread's partial; the total afterwards.
  ir::Buffer partial;
  ir::BinaryOp op;
  /// The combiner's identity in partial's dtype (what a masked lane adds).
  ir::Expr identity;
  /// x, y, z.
  std::array<ThreadAxis, 3> axes;
  /// Every thread needs the total, not only the one with reduce index 0.
  bool broadcast = false;
  /// Prefix for the names of the shared buffers (the reduced buffer's name).
  std::string name;
};

struct AllReduce {
  std::vector<ir::Stmt> stmts;
  /// The shared buffers the statements use (kernel-wide allocations).
  std::vector<ir::Buffer> allocs;
  /// True on the thread whose index on every reduce axis is 0.
  ir::Expr is_first_thread;
};

/// The statements of the all-reduce of `spec.partial` (see the file comment).
/// The reduce axes must have constant extents whose product is at least 2.
AllReduce build_all_reduce(const AllReduceSpec &spec);

}  // namespace tessera::lower::detail
