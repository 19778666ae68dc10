//===- tessera/lower/Lower.h - From a scheduled PrimFunc to a kernel -------===//
//
// `lower` turns a scheduled PrimFunc (blocks, thread-bound loops, shared and
// local buffers, serial semantics) into a LoweredFunc: the body of one GPU
// kernel in which
//   - a reduction whose reduce loops include a threadIdx-bound loop is
//     combined across the threads (per-thread partials, warp shuffles or
//     shared memory, one writer), never raced on;
//   - blocks are gone: iter vars are replaced by their (simplified) bindings,
//     block predicates and reduction inits are `if` guards;
//   - function-level "shared"/"local" buffers (cache_read/cache_write copies
//     at the cached buffer's shape) shrink to the tile their accesses touch;
//   - loops annotated "software_pipeline_stage" (TVM's keys) run as
//     software pipelines: multi-buffered tiles, cp.async for async stages;
//   - thread-bound loops are gone: their variables are the launch variables
//     (`launch.thread_vars`, printed blockIdx.x / threadIdx.x by codegen) and
//     their extents make up the grid and block dimensions;
//   - every buffer is one-dimensional, indexed in int32 or int64;
//   - vectorized loops are vector moves (or, where illegal, unrolled loops);
//   - shared buffers beyond 48 KB are dynamic shared memory ("shared.dyn");
//   - `T.evaluate(T.syncthreads())` barriers separate the thread-bound loop
//     nests that communicate through shared memory.
// The passes, one per file, are declared in Passes.h; the pipeline is in
// lib/lower/Lower.cpp. TESSERA_DUMP=lower prints the function after each
// pass, TESSERA_TIME_PASSES=1 prints the time each pass took.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <array>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/support/Error.h"

namespace tessera::lower {

/// A program that cannot be lowered to a kernel as written (inconsistent
/// thread extents, an unsupported thread tag, a shared buffer of symbolic
/// size, ...). The message names the loops or buffers involved.
class LowerError : public UserError {
 public:
  explicit LowerError(const std::string &msg) : UserError(msg) {}
};

/// One kernel parameter: a buffer (its data pointer) or an integer scalar
/// (a scalar parameter or a symbolic shape variable).
struct KernelParam {
  ir::Var var;
  /// Defined for buffer parameters.
  ir::Buffer buffer;
  bool is_buffer() const { return buffer.defined(); }
};

/// The launch configuration. Index 0/1/2 is x/y/z. An undefined extent is 1
/// (the axis is unused); extents may be symbolic in the kernel's scalar
/// parameters (`(n + 255) // 256`).
struct LaunchConfig {
  std::array<ir::Expr, 3> grid, block;
  /// The variables standing for blockIdx.{x,y,z} and threadIdx.{x,y,z}
  /// (undefined when the axis is unused).
  std::array<ir::Var, 3> block_vars, thread_vars;
  /// Threads per block when every block extent is constant, else -1.
  int64_t threads_per_block() const;
};

struct LoweredFunc {
  std::string name;
  std::vector<KernelParam> params;
  /// Buffers allocated inside the kernel ("shared", "local"), kernel-wide.
  std::vector<ir::Buffer> allocs;
  LaunchConfig launch;
  /// Bytes of dynamic shared memory the launch must request (0 = none).
  int64_t dynamic_shared_bytes = 0;
  ir::Stmt body;
};

/// Runs the lowering pipeline. Throws LowerError for programs that have no
/// kernel form yet (see the class).
LoweredFunc lower(const ir::PrimFunc &f);

/// A function run as several kernels, in order (see split_kernels).
struct KernelSplit {
  /// One function per kernel. Each takes the original parameters, in order,
  /// followed by one buffer parameter per workspace buffer.
  std::vector<ir::PrimFunc> kernels;
  /// Intermediate buffers the host allocates (the function's "global"
  /// allocations); they may have symbolic shapes in the function's shape
  /// variables.
  std::vector<ir::Buffer> workspace;
};

/// One kernel when the function is one (its top-level statements share one
/// launch configuration and it allocates no global memory): `kernels` is
/// {f} and `workspace` empty. Otherwise one kernel per top-level statement of
/// the root block, in order: a statement with no thread-bound loop runs as
/// a single GPU thread; function-level "global" allocations become workspace;
/// "shared"/"local" function-level allocations go with the one kernel that
/// uses them (LowerError when two kernels use one: shared memory does not
/// outlive a kernel).
KernelSplit split_kernels(const ir::PrimFunc &f);

/// The lowered function as TVMScript text (for TESSERA_DUMP and tests):
/// allocations at function level, launch variables as free variables.
std::string print(const LoweredFunc &f);

}  // namespace tessera::lower
