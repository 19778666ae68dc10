//===- tessera/lower/Passes.h - The lowering passes -------------------------===//
//
// One declaration per pass; each pass lives in lib/lower/<Pass>.cpp and is
// run, in this order, by `lower` (lib/lower/Lower.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <vector>

#include "tessera/lower/Lower.h"

namespace tessera::lower {

/// The buffers allocated by blocks (`T.alloc_buffer`), outermost first. Each
/// must be "shared", "shared.dyn" or "local" (a kernel cannot allocate global
/// memory) -> LowerError naming the buffer.
std::vector<ir::Buffer> collect_allocations(const ir::Stmt &s);

/// Gives each reduction block with a threadIdx-bound reduce loop its parallel
/// form: per-thread partials in a "local" register, an all-reduce across the
/// reduce thread axes (`T.shfl_xor` warp shuffles, or shared memory and
/// `T.syncthreads()`), then the thread with reduce index 0 (every thread for
/// a "local" output) writes `B[i] = init op total`; new buffers join `allocs`.
/// Spatial loops inside the reduce loops stay in place when their constant
/// extents multiply to at most 64 (the partials an array over them, one
/// all-reduce per element afterwards), else move outside the reduction.
/// Combiners: + * max min, & | ^ on integers. What it cannot make parallel
/// safely (unknown combiner, a reduce thread loop feeding a spatial index,
/// threads diverging around it, symbolic thread extents, ...) -> LowerError
/// naming the block and the loop.
LoweredFunc lower_cross_thread_reduction(const LoweredFunc &f);

/// Virtual threads (loops bound to "vthread", "vthread.x/y/z", as TVM's dlight
/// binds register tiles) become unrolled loops inside each real thread: every
/// thread does the work of all its virtual threads, one after the other.
/// Buffers indexed by a virtual thread keep their extent along it, so each
/// virtual thread still has its own elements.
ir::Stmt lower_virtual_threads(const ir::Stmt &s);

/// The buffers a block lists under "tessera.swizzle" (ir/Annotation.h) get
/// their 16-byte chunks XOR-permuted by row in every access; LowerError for a
/// name the block does not allocate in shared memory, or rows that are not
/// a multiple of 64 bytes.
ir::Stmt swizzle_shared_buffers(const ir::Stmt &s);

/// Replaces every block by its body with the iter vars substituted by their
/// simplified bindings; a predicate becomes `if pred:` and an init runs under
/// `if` every reduce binding is at its domain's minimum. Allocations are dropped
/// (see collect_allocations).
ir::Stmt lower_blocks(const ir::Stmt &s);

/// `warp` buffers (tensor-core fragments: [thread dims..., per-lane]) become
/// per-thread "local" arrays of their last dimension; an access whose
/// leading indices are not threadIdx-bound loop variables -> LowerError.
LoweredFunc lower_warp_buffers(const LoweredFunc &f);

/// Shrinks each function-level (root block) "shared"/"local" allocation to
/// the box its accesses touch at their innermost common loop (threadIdx
/// relaxed for shared, per thread for local; an origin over the block
/// indices, the kernel's scalars and the serial loops above, moving with a
/// serial loop only when its boxes are disjoint), indices made relative to the box;
/// pads strides per the storage_align requests recorded on the blocks of
/// `blocks` (the body before lower_blocks). Buffers it cannot shrink to a
/// constant box stay as they are.
LoweredFunc compact_buffers(const LoweredFunc &f, const ir::Stmt &blocks);

/// Runs each serial loop annotated "software_pipeline_stage" (with optional
/// "software_pipeline_order" and "software_pipeline_async_stages", as TVM's
/// schedules write them) as a software pipeline: child statement c of
/// iteration i runs at step i + stage[c]: a prologue of the first steps, then
/// one loop over the rest whose earlier-stage children are guarded by the
/// extent (no epilogue: the body is not duplicated); buffers read
/// across stages get a leading version dimension (stage distance + 1); in
/// async stages, global-to-shared copies become cp.async with one commit per
/// step and a wait plus barrier before their readers. Serial and unrolled
/// loops. Where the pipeline would break a dependence (a buffer read across
/// stages that is a parameter, has two writers, is read before written, or
/// lives outside the loop; an order that swaps conflicting statements) the
/// loop runs as written, annotated {"software_pipeline_fallback": "<why>"};
/// a malformed annotation (list lengths, types, not a permutation) ->
/// LowerError naming the loop.
LoweredFunc inject_software_pipeline(const LoweredFunc &f);

/// Rewrites integer `//` and `%` as C's truncating `/` and `%` where both
/// operands are provably non-negative (loop ranges known), so codegen needs
/// the floor helpers only where signs are unknown.
ir::Stmt simplify_division(const ir::Stmt &s);

/// Gives a store to shared or global memory outside every threadIdx-bound
/// loop one writer: thread-bound loops around `if tx == 0 (and ty, tz)`, with
/// the kernel's extents, so the threads do not all store at once.
ir::Stmt guard_single_thread_stores(const ir::Stmt &s);

/// Inserts `T.evaluate(T.syncthreads())` between a statement (outside any
/// threadIdx-bound loop) that writes a shared buffer and a later one reading
/// it (or reading then overwriting it, also across iterations of an enclosing
/// serial loop), and nowhere else. Barriers already there count as such.
ir::Stmt insert_barriers(const ir::Stmt &s);

/// Removes thread-bound loops: their variables become the launch variables and
/// their extents the grid/block dimensions. Every loop bound to one tag must
/// have the same extent -> LowerError naming both loops; tags other than
/// blockIdx/threadIdx.{x,y,z} -> LowerError.
LoweredFunc extract_launch_config(const LoweredFunc &f);

/// Makes every buffer (parameters, allocations) one-dimensional: row-major
/// (or the buffer's strides), indices in int32 when the buffer's element
/// count provably fits in int32, else int64. Shared and local buffers must
/// have constant shapes -> LowerError.
LoweredFunc flatten_buffers(const LoweredFunc &f);

/// Turns each `T.vectorized` loop into 2/4/8/16-byte vector moves where legal:
/// constant extent; a body of straight-line stores (no loop, branch, let or
/// call statement, no load under T.if_then_else); every global or shared
/// store `base + v` with `base` a provable multiple of the lanes of one move
/// (runs wider than 16 bytes are several moves); a written buffer accessed at
/// its one run only. Loads of such runs move too; other loads of memory the
/// loop does not write (invariant, strided, misaligned) stay scalar.
/// Afterwards a `T.vectorized` loop is exactly one move, one vector access in
/// CUDA (buffers start 16-byte aligned):
///   for v in T.vectorized(8): A_vec[v] = A[tx * 8 + v]   # *(uint4*)A_vec = *(const uint4*)(A + tx * 8)
/// A body that is not a single copy loads its runs into registers `<buffer>_vec`
/// (added to f.allocs), runs an unrolled lane-wise loop, then stores them.
/// Illegal loops become unrolled scalar loops annotated {"vectorize_fallback": "<why>"}.
/// A serial or unrolled loop annotated ir::kVectorLoadsAnnotation (a reduce loop:
/// lanes carry a register from one to the next) gets the same rewrite, its
/// lanes still in order; a lane-invariant `if` around its body is taken out
/// first. Where illegal it stays as it is, annotated
/// {"vector_loads_fallback": "<why>"}.
LoweredFunc legalize_vectorize(const LoweredFunc &f);

/// Puts the "shared.dyn" allocations, and every shared one when the static
/// ones exceed 48 KB (49152 bytes, the limit without opt-in), into dynamic
/// shared memory: those become "shared.dyn" and, in allocation order, each
/// starts at the next multiple of 16 bytes of one pool whose size is
/// f.dynamic_shared_bytes.
LoweredFunc plan_dynamic_shared_memory(const LoweredFunc &f);

}  // namespace tessera::lower
