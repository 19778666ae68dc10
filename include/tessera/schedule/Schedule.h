//===- tessera/schedule/Schedule.h - The schedule primitives ---------------===//
//
// A Schedule holds one PrimFunc and rewrites it through primitives, TensorIR
// style. Every primitive checks all its preconditions first and replaces the
// function once; a ScheduleError leaves func() and trace() exactly as they
// were. Every call (lookups included) is recorded in trace(), which
// serialises to JSON and replays (Trace.h).
//
//   Schedule sch(func);
//   BlockRef c = sch.get_block("C");
//   auto loops = sch.get_loops(c);                        // i, j, k
//   auto i = sch.split(loops[0], {std::nullopt, 16});     // i_0, i_1
//   sch.bind(i[0], "blockIdx.x");
//
// Handles are stable IDs, resolved by lookup each time they are used:
//   - a LoopRef is the loop's variable. Primitives that only change a loop's
//     kind, annotations or body (bind, vectorize, annotate, reorder, and
//     anything that rebuilds what is under it) keep the variable, so the
//     handle stays valid; split and fuse remove the loop, and using its
//     handle afterwards is a StaleHandleError.
//   - a BlockRef is the block's name, unique in the function.
// Loop names are unique within the function so that traces can name loops:
// the constructor renames loops whose names repeat (`i`, `i_1`, ...; the
// function stays structurally equal), and new loops get the requested names
// or defaults (`i_0`, `i_1` for split, `i_j_fused` for fuse), suffixed `_1`,
// `_2`, ... when taken.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/schedule/Error.h"

namespace tessera::schedule {

class Trace;
namespace detail {
struct State;
}

/// A block, by its (unique) name.
struct BlockRef {
  std::string name;
  bool operator==(const BlockRef &o) const { return name == o.name; }
};

/// A loop, by its loop variable (identity, not name).
struct LoopRef {
  ir::Var var;
  const std::string &name() const { return var.name(); }
  bool operator==(const LoopRef &o) const { return var.same_as(o.var); }
};

using BlockOrLoop = std::variant<BlockRef, LoopRef>;

/// An index map for transform_layout: `src` (one variable per old dimension)
/// to `dst` (the new indices), written as a TVMScript lambda in traces:
///   lambda i, j: (i // 16, j // 16, i % 16, j % 16)
struct IndexMap {
  std::vector<ir::Var> src;
  std::vector<ir::Expr> dst;
  /// The lambda text (a one-output map ends with ",)").
  std::string str() const;
  /// Reads the lambda text back (inputs become int32 variables); a malformed
  /// text is a UserError (a script::ParseError for a bad output expression).
  static IndexMap parse(std::string_view text);
};

struct ScheduleOptions {
#ifdef NDEBUG
  static constexpr bool kVerifyByDefault = false;
#else
  static constexpr bool kVerifyByDefault = true;
#endif
  /// Run ir::verify after every primitive; an ill-formed result is an
  /// InternalError (a bug in the primitive), and the schedule is restored.
  bool verify = kVerifyByDefault;
  /// What a ScheduleError's what() includes.
  ErrorRenderLevel error_render_level = ErrorRenderLevel::Detail;
};

/// `f` with distinct block names (TVM allows repeated and empty ones; blocks
/// are looked up by name here): the first of several blocks named B keeps B,
/// the others become B_1, B_2, ...; an unnamed block becomes "block". The
/// rules call this before they analyse a function; deterministic, so a trace
/// recorded on the result replays on `f`.
ir::PrimFunc unique_block_names(const ir::PrimFunc &f);

class Schedule {
 public:
  /// Takes `func`, renaming loops whose names repeat and giving blocks
  /// distinct names (unique_block_names). get_block of a name several blocks
  /// of `func` shared is an error naming what they are called now.
  explicit Schedule(ir::PrimFunc func, ScheduleOptions options = {});
  Schedule(const Schedule &o);
  Schedule &operator=(const Schedule &o);
  Schedule(Schedule &&) noexcept;
  Schedule &operator=(Schedule &&) noexcept;
  ~Schedule();

  /// The current function.
  const ir::PrimFunc &func() const;
  /// Every call so far, in order.
  const Trace &trace() const;
  const ScheduleOptions &options() const;

  //===--- Lookup (recorded in the trace) ---------------------------------===//

  /// The block named `name`. Requires: 1. it exists -> BlockNotFoundError
  /// (the message lists the block names there are).
  BlockRef get_block(const std::string &name);
  /// The loops between `block` and the nearest block above it, outermost first.
  std::vector<LoopRef> get_loops(const BlockRef &block);
  /// The blocks directly under a block or loop (not inside another block), in order.
  std::vector<BlockRef> get_child_blocks(const BlockOrLoop &parent);
  /// Blocks of the same scope (the nearest enclosing block) that write a
  /// buffer `block` reads, in program order.
  std::vector<BlockRef> get_producers(const BlockRef &block);
  /// Blocks of the same scope that read a buffer `block` writes, in program order.
  std::vector<BlockRef> get_consumers(const BlockRef &block);

  /// The statement a handle refers to (a Block or For node); StaleHandleError
  /// when it no longer exists. Not recorded.
  ir::Stmt get(const BlockRef &block) const;
  ir::Stmt get(const LoopRef &loop) const;

  //===--- Loop transformations -------------------------------------------===//

  /// Splits `loop` into nested loops with the given extents, outermost first;
  /// at most one factor may be nullopt (inferred as ceildiv(extent, product of
  /// the others)). When the factors overshoot the extent, the blocks directly
  /// under the loop get the predicate `fused < extent` (T.where), as in TVM.
  /// `names` (empty, or one per factor) names the new loops.
  ///   for i in range(128)  --split(i, {nullopt, 32})-->
  ///   for i_0, i_1 in T.grid(4, 32): ... vi = i_0 * 32 + i_1
  /// Requires:
  ///   1. `loop` is serial                                   -> LoopNotSerialError
  ///   2. `loop` has no annotations                          -> LoopHasAnnotationError
  ///   3. `loop` starts at 0                                 -> LoopNotStartAtZeroError
  ///   4. at least one factor; given factors > 0; at most one nullopt
  ///                                                         -> InvalidSplitFactorsError
  ///   5. the product covers the extent (with no inferred factor and a
  ///      constant extent: product >= extent; a symbolic extent needs an
  ///      inferred factor)                                   -> SplitFactorsMismatchError
  ///   6. `names` is empty or has one identifier per factor -> InvalidLoopNamesError
  /// \returns the new loops, outermost first.
  std::vector<LoopRef> split(const LoopRef &loop, const std::vector<std::optional<int64_t>> &factors,
                             const std::vector<std::string> &names = {});

  /// Fuses directly nested loops into one loop whose extent is the product;
  /// each old variable becomes `(f // stride) % extent`.
  ///   for i, j in T.grid(4, 8)  --fuse(i, j)-->  for i_j_fused in range(32):
  ///                                              vi = i_j_fused // 8; vj = i_j_fused % 8
  /// Requires:
  ///   1. at least one loop, none listed twice               -> InvalidLoopListError
  ///   2. each loop's body is exactly the next loop          -> LoopsNotNestedError
  ///   3. every loop is serial                               -> LoopNotSerialError
  ///   4. no loop has annotations                            -> LoopHasAnnotationError
  ///   5. every loop starts at 0                             -> LoopNotStartAtZeroError
  /// \returns the fused loop (named `name`, default the names joined by `_` + `_fused`).
  LoopRef fuse(const std::vector<LoopRef> &loops, const std::string &name = "");

  /// Reorders loops of one chain: the positions the given loops occupy are
  /// refilled in the given order; other loops of the chain keep their place.
  /// Legal (serial semantics kept) under TVM's condition: every block under
  /// the loops is a complete block (only spatial iter vars, does not read what
  /// it writes) or a reduction block (spatial and reduce iter vars, writes
  /// indexed by spatial ones only), with bindings affine in the loops.
  /// Requires:
  ///   1. at least one loop, none listed twice               -> InvalidLoopListError
  ///   2. the loops lie on one path from the outermost to the innermost,
  ///      on which every loop but the last has exactly one child loop
  ///                                                         -> LoopsNotInOneChainError
  ///   3. every loop of that path is serial                  -> LoopNotSerialError
  ///   4. no loop's min or extent uses another loop of the path
  ///                                                         -> DependentLoopRangeError
  ///   5. every block under the path is complete or a reduction block
  ///                                                         -> BlockNotCompleteOrReductionError
  ///   6. their bindings are affine in the loops             -> NonAffineBindingError
  void reorder(const std::vector<LoopRef> &loops);

  /// Splits each loop by its factors (as split, `names` optional per loop) and
  /// reorders all outer pieces before the inner ones: level 0 of every loop,
  /// then level 1, ...  tile({i, j}, {{nullopt, 16}, {nullopt, 16}}) gives
  /// i_0, j_0, i_1, j_1. Atomic: a failing split or reorder leaves nothing done.
  /// Requires: 1. one factor list per loop (and names list, when given)
  /// -> InvalidLoopListError; and the requirements of split and reorder.
  /// \returns the new loops per input loop.
  std::vector<std::vector<LoopRef>> tile(const std::vector<LoopRef> &loops,
                                         const std::vector<std::vector<std::optional<int64_t>>> &factors,
                                         const std::vector<std::vector<std::string>> &names = {});

  /// Wraps a block or loop in a new loop of extent 1 (named `name`, default "u").
  /// For the root block, wraps the root's body instead (the root stays the
  /// root): a loop around everything, statements outside blocks included,
  /// which the fallback binds to run a function as one serial GPU thread.
  /// \returns the new loop.
  LoopRef add_unit_loop(const BlockOrLoop &target, const std::string &name = "");

  //===--- Loop kinds ------------------------------------------------------===//

  /// Binds `loop` to a GPU thread axis (serial semantics in the interpreter).
  /// A reduction loop may be bound to threadIdx (cross-thread reduction,
  /// lowered later) but not to blockIdx or vthread.
  /// Requires:
  ///   1. `thread` is blockIdx.x/y/z, threadIdx.x/y/z, vthread or vthread.x/y/z
  ///                                                         -> InvalidThreadTagError
  ///   2. `loop` is serial (not already bound)               -> LoopNotSerialError
  ///   3. for blockIdx/vthread: every block iter var bound to `loop` is spatial
  ///                                                         -> LoopNotDataParallelError
  void bind(const LoopRef &loop, const std::string &thread);
  /// Marks `loop` parallel (CPU threads).
  /// Requires: 1. `loop` is serial -> LoopNotSerialError; 2. every block iter
  /// var bound to `loop` (through its bindings) is spatial -> LoopNotDataParallelError.
  void parallel(const LoopRef &loop);
  /// Marks `loop` vectorized. Requires: as parallel.
  void vectorize(const LoopRef &loop);
  /// Marks `loop` unrolled. Requires: 1. `loop` is serial -> LoopNotSerialError.
  void unroll(const LoopRef &loop);

  /// Sets annotation `key` on a loop or block (replacing an existing value):
  ///   annotate(k0, "software_pipeline_stage", AnnValue::List{0, 0, 1})
  /// Requires: 1. `key` is not empty -> InvalidAnnotationKeyError.
  void annotate(const BlockOrLoop &target, const std::string &key, const ir::AnnValue &value);
  /// Removes annotation `key`. Requires: 1. it is there -> AnnotationNotFoundError.
  void unannotate(const BlockOrLoop &target, const std::string &key);

  //===--- Data movement (primitive/CacheReadWrite.cpp, SetScope.cpp) ------===//
  // Storage scopes are "global", "shared", "shared.dyn" and "local".

  /// Adds a block that copies the region of `block`'s read buffer
  /// `read_buffer_index` (its position in T.reads) that the readers of the
  /// buffer in `block`'s scope touch into a new buffer of `scope` (same shape,
  /// named `<buffer>_<scope>`, allocated by the scope block), placed in the
  /// scope right before the first reader; every reader in the scope then
  /// loads from the copy.
  ///   for i, j, k: C[vi, vj] += A[vi, vk] * ...   --cache_read(C, 0, "shared")-->
  ///   for ax0, ax1 in T.grid(64, 48): A_shared[v0, v1] = A[v0, v1]
  ///   for i, j, k: C[vi, vj] += A_shared[vi, vk] * ...
  /// Requires:
  ///   1. 0 <= read_buffer_index < number of reads          -> BufferIndexOutOfRangeError
  ///   2. `scope` is a valid storage scope                   -> InvalidStorageScopeError
  ///   (the buffer may already be in `scope`: TVM caches a global A into
  ///   A_global, a copy that can be laid out anew)
  ///   3. neither `block` nor a block of the scope running after the first
  ///      reader writes the buffer                           -> CachedBufferWrittenError
  /// \returns the copy block, named `name` (default: the new buffer's name),
  /// made unique.
  BlockRef cache_read(const BlockRef &block, int64_t read_buffer_index, const std::string &scope,
                      const std::string &name = "");
  /// Makes `block` write (and read back) a new buffer of `scope` instead of
  /// its write buffer `write_buffer_index`, and adds a block right after
  /// `block`'s loop nest that copies the region `block` writes back.
  /// Requires: 1-2 as cache_read (for the writes);
  ///   3. no other block of the scope writes the buffer      -> BufferHasOtherWriterError
  /// \returns the write-back block (default name: the new buffer's name).
  BlockRef cache_write(const BlockRef &block, int64_t write_buffer_index, const std::string &scope,
                       const std::string &name = "");
  /// Moves the write buffer `write_buffer_index` of `block` (allocated in
  /// the function) to `scope`: the buffer is replaced everywhere by a copy
  /// with the new scope.
  /// Requires: 1-2 as cache_write;
  ///   3. the buffer is not a parameter of the function      -> OutputBlockError
  void set_scope(const BlockRef &block, int64_t write_buffer_index, const std::string &scope);
  /// Asks lowering to pad dimension `axis` of the write buffer
  /// `write_buffer_index` so that its stride is `factor * k + offset`
  /// (against shared-memory bank conflicts). Recorded as TVM does, as the
  /// block annotation "buffer_dim_align": a list of [buffer_index, axis,
  /// factor, offset] entries (one per call; a later call on the same buffer
  /// and axis replaces the entry).
  /// Requires: 1 as cache_write;
  ///   2. 0 <= axis < ndim, factor > 0, 0 <= offset < factor -> InvalidStorageAlignError
  void storage_align(const BlockRef &block, int64_t write_buffer_index, int64_t axis, int64_t factor,
                     int64_t offset);

  //===--- Compute location (primitive/ComputeAt.cpp, ComputeInline.cpp) ----===//

  /// Moves producer `block` to the start of `loop`'s body, in new loops
  /// (`ax0`, ...) that cover exactly the region its consumers under `loop`
  /// read in one iteration of `loop`; iter vars keep their domains, bindings
  /// become `region min + ax`, a predicate guards overshooting tail tiles;
  /// loops of extent 1 are dropped unless `preserve_unit_loops`.
  ///   compute_at(A_shared, k0):  for k0: for ax0, ax1 in T.grid(16, 8):
  ///                                        v0 = i0 * 16 + ax0; v1 = k0 * 8 + ax1
  /// Requires:
  ///   1. `loop` is in `block`'s scope and not its ancestor  -> InvalidComputeLocationError
  ///   2. `block` is complete or a reduction block           -> BlockNotCompleteOrReductionError
  ///   3. `block` has no predicate                           -> BlockHasPredicateError
  ///   4. `block` writes no parameter (output) buffer        -> OutputBlockError
  ///   5. `block` has consumers in its scope, all under `loop` -> ConsumersNotUnderLoopError
  ///   6. no block under `loop` writes a buffer `block` reads -> ProducerUnderLoopError
  ///   7. `block` writes the buffers its consumers read at distinct iter
  ///      vars (B[v0, v1])                                    -> NonIterVarIndexError
  void compute_at(const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops = false);
  /// Moves consumer `block` to the end of `loop`'s body, covering what its
  /// producers under `loop` write in one iteration (seed 002: the light
  /// consumer goes under the heavy producer's tiles, no splits repeated).
  /// Requires:
  ///   1. `loop` is in `block`'s scope and not its ancestor  -> InvalidComputeLocationError
  ///   2. `block` is a complete block                        -> BlockNotCompleteError
  ///   3. `block` has no predicate                           -> BlockHasPredicateError
  ///   4. `block` has producers in its scope, all under `loop` -> ProducersNotUnderLoopError
  ///   5. no block under `loop` reads a buffer `block` writes -> ConsumerUnderLoopError
  ///   6. `block` reads the produced buffers at distinct iter vars -> NonIterVarIndexError
  void reverse_compute_at(const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops = false);
  /// Substitutes the value `block` stores into every load of its buffer and
  /// removes the block and the buffer's allocation.
  ///   B[vi] = A[vi] + 1; C[vi] = B[vi] * 2  --compute_inline(B)-->  C[vi] = (A[vi] + 1) * 2
  /// Requires:
  ///   1. `block` is a complete block                        -> BlockNotCompleteError
  ///   2. its body is one store `B[v0, ..., vn] = value` at distinct iter
  ///      vars, every iter var used                          -> NotInlineableBodyError
  ///   3. `block` has no predicate                           -> BlockHasPredicateError
  ///   4. B is not a parameter (output) buffer               -> OutputBlockError
  ///   5. no other block writes B                            -> BufferHasOtherWriterError
  void compute_inline(const BlockRef &block);
  /// Folds consumer `block` into its only producer: the producer stores the
  /// consumer's value, computed from the producer's value, straight into the
  /// consumer's buffer; the consumer and the intermediate buffer are removed.
  ///   B[vi] = A[vi] + 1; C[vi] = B[vi] * 2  --reverse_compute_inline(C)-->  C[vi] = (A[vi] + 1) * 2
  /// Requires:
  ///   1. `block` is a complete block                        -> BlockNotCompleteError
  ///   2. its body is one store; the producer's body is one store at distinct
  ///      iter vars, every iter var used                     -> NotInlineableBodyError
  ///   3. `block` has no predicate (the producer keeps its own) -> BlockHasPredicateError
  ///   4. exactly one buffer `block` reads is written in its scope, by exactly
  ///      one block                                          -> ProducerNotUniqueError
  ///   5. `block` loads that buffer at distinct iter vars covering all its
  ///      iter vars, with the producer's domains            -> NonIterVarIndexError
  ///   6. the buffer is not a parameter buffer               -> OutputBlockError
  ///   7. no other block reads the buffer                    -> BufferHasOtherReaderError
  void reverse_compute_inline(const BlockRef &block);

  //===--- Reductions (primitive/DecomposeReduction.cpp) --------------------===//

  /// Moves the init statement of reduction `block` into a new block placed
  /// right before `loop`, under copies (`<loop>_init`) of the loops between
  /// `loop` and `block` that feed spatial iter vars; `block` loses its init.
  /// Requires:
  ///   1. `block` is a reduction block with an init          -> NotReductionBlockError
  ///   2. `loop` is an ancestor of `block` in its scope       -> LoopNotAncestorError
  ///   3. no loop above `loop` (in the scope) feeds a reduction iter var
  ///                                                          -> ReductionLoopAboveError
  /// \returns the init block, named `name` (default `<block>_init`), made unique.
  BlockRef decompose_reduction(const BlockRef &block, const LoopRef &loop, const std::string &name = "");

  //===--- Reductions: rfactor (primitive/RFactor.cpp) ----------------------===//

  /// Factors the reduction under `loop` (a reduce loop, typically the inner
  /// part of a split reduce loop) into an rfactor block, which reduces into a
  /// new buffer `<C>_rf` with the factored loop as an extra spatial dimension
  /// at `factor_axis` (negative counts from the end), and a write-back block
  /// that keeps `block`'s name and reduces `<C>_rf` into C under new copies of
  /// the spatial loops and of `loop`; the write-back nest follows the
  /// rfactor nest. When `loop` is the only reduction loop, the rfactor block
  /// has nothing left to reduce and just stores f(...) in its slot. Binding
  /// the rfactor loop and its write-back copy to threadIdx is the classic
  /// cross-thread reduction.
  ///   for i, k_0, k_1 in T.grid(256, 8, 128): B[vi] += A[vi, k_0 * 128 + k_1]
  ///   --rfactor(k_1, 0)-->
  ///   for i, k_0, k_1 in T.grid(256, 8, 128): B_rf[vk_1, vi] += A[vi, vk_0 * 128 + vk_1]   # "B_rf"
  ///   for i_1, k_1_1 in T.grid(256, 128):     B[vi] += B_rf[vk_1, vi]                     # "B"
  /// Requires:
  ///   1. exactly one block is under `loop`, alone under the loops of its
  ///      scope                                              -> NotSingleBlockError
  ///   2. it is a reduction block with an init               -> NotReductionBlockError
  ///   3. its body is `C[v] = C[v] op f(...)` (either operand order, f not
  ///      reading C) with op one of +, *, max, min, and its init stores op's
  ///      identity (0, 1, min_value/-inf, max_value/+inf) to C[v]
  ///                                                         -> UnknownReducerError
  ///   4. its bindings are an affine map of its loops        -> NonAffineBindingError
  ///   5. `loop` starts at 0                                 -> LoopNotStartAtZeroError
  ///   6. `loop` feeds reduce iter vars only, and no loop of the nest feeds
  ///      both a spatial and a reduce iter var               -> LoopNotReductionError
  ///   7. the block's predicate uses no reduction loop       -> BlockHasPredicateError
  ///   8. factor_axis is in [-(ndim + 1), ndim] for C's ndim -> InvalidFactorAxisError
  /// \returns the rfactor block (`<block>_rf`, made unique).
  BlockRef rfactor(const LoopRef &loop, int64_t factor_axis);

  //===--- Tensor intrinsics (primitive/Blockize.cpp, Tensorize.cpp) --------===//

  /// Wraps the loop nest from `loop` down to the block under it in a new
  /// outer block. Each binding of the block is divided at `loop`: its part
  /// over the loops above becomes an iter var of the outer block (`vi` when
  /// the binding uses no loop below; `v_o` = outer / E when it uses loops on
  /// both sides, the block keeping `v_i` over [0, E) and v = v_o * E + v_i).
  /// The outer block's T.reads/T.writes are the block's relaxed over the
  /// loops below; the block's init moves to the outer block (inside loops
  /// and a block `<block>_init` when spatial iter vars have parts below).
  ///   for i, k_0, k_1 in T.grid(64, 16, 4): C: vi = i; vk = k_0 * 4 + k_1
  ///   --blockize(k_1)-->
  ///   for i, k_0 in T.grid(64, 16): C_o: vi = i; vk_o = k_0
  ///       for k_1 in range(4): C: vk_i = k_1; ... A[vi, vk_o * 4 + vk_i]
  /// Requires:
  ///   1. the loops from `loop` down form a chain ending in exactly one block
  ///                                                         -> NotSingleBlockError
  ///   2. the block's bindings are an affine map of its loops -> NonAffineBindingError
  ///   3. no conjunct of the block's predicate uses loops on both sides
  ///                                                         -> BlockHasPredicateError
  ///   4. each binding using loops on both sides is a multiple of E above
  ///      plus a part over [0, E) below, E dividing the iter var's domain
  ///                                                         -> BindingNotDivisibleError
  /// \returns the outer block, named `name` (default `<block>_o`), made unique.
  BlockRef blockize(const LoopRef &loop, const std::string &name = "");

  /// Replaces the body of `target` (a block, or a loop: blockized first) by
  /// the implementation of the registered tensor intrinsic `intrin`
  /// (Intrinsic.h), after checking that the body computes what the
  /// intrinsic's description computes. Buffers are matched in order of first
  /// access; the implementation's accesses are offset by the starts of the
  /// matched regions. The block keeps its iter vars, regions and init.
  ///   tensorize(C_o, "tessera.dot4_f32"):  the loop k_1 and block C become
  ///   C[vi] = C[vi] + A[vi, vk_o * 4] * B[vk_o * 4] + ... + A[vi, vk_o * 4 + 3] * B[vk_o * 4 + 3]
  /// Requires:
  ///   1. `intrin` is registered                             -> UnknownIntrinsicError
  ///   2. for a loop: the requirements of blockize
  ///   3. the block has no predicate                         -> BlockHasPredicateError
  ///   4. the body accesses as many buffers as the description, with the same
  ///      dtypes, and is structurally equal to the description's body once
  ///      its accesses are taken relative to the block's regions
  ///                                                         -> TensorizeMismatchError
  ///   5. each region the block reads/writes has the shape of the matching
  ///      description buffer (leading extents of 1 dropped)  -> TensorizeRegionMismatchError
  /// \returns the tensorized block.
  BlockRef tensorize(const BlockOrLoop &target, const std::string &intrin);

  //===--- Layout (primitive/PadEinsum.cpp, Reindex.cpp, TransformLayout.cpp,
  //          TransformBlockLayout.cpp) --------------------------------------===//

  /// Pads the iteration space of einsum-like `block` so that each iter var's
  /// extent becomes a multiple of `padding[i]`: every buffer indexed by a
  /// growing iter var is replaced by `<buffer>_pad` (allocated in the scope,
  /// dims = the padded extents of its iter vars); inputs are filled by a block
  /// `<buffer>_pad` placed before the nest, zero outside the original extent
  /// (T.if_then_else); the padded output is copied back by a block `<C>_pad`
  /// placed after it. The interpreter's answer is unchanged. Symbolic extents
  /// are an error for now (Requires 5). Nothing changes when no extent grows.
  ///   for i, j, k in T.grid(100, 77, 50): C[vi, vj] += A[vi, vk] * B[vk, vj]
  ///   --pad_einsum(C, {32, 32, 32})-->  A_pad (128, 64), B_pad (64, 96),
  ///   for i, j, k in T.grid(128, 96, 64): C_pad[vi, vj] += A_pad[vi, vk] * B_pad[vk, vj]
  ///   for ax0, ax1 in T.grid(100, 77): C[v0, v1] = C_pad[v0, v1]
  /// Requires:
  ///   1. `block` is complete or a reduction block          -> BlockNotCompleteOrReductionError
  ///   2. one padding per iter var, each > 0                 -> InvalidPaddingError
  ///   3. the body is one store (and the init one store to the same buffer,
  ///      loading nothing) whose every access indexes distinct plain iter
  ///      vars, one index list per buffer; reading the output needs an init
  ///                                                         -> NotEinsumBlockError
  ///   4. the block has no predicate and is alone under its loops, each iter
  ///      var bound to its own loop (vi = i), both over [0, extent)
  ///                                                         -> NotPlainLoopNestError
  ///   5. every iter var has a constant extent               -> SymbolicExtentError
  ///   6. a growing reduce iter var only adds zeros: the update is
  ///      `C = C + x * y * ...` with a factor loading a buffer it indexes
  ///                                                         -> PaddingChangesReductionError
  void pad_einsum(const BlockRef &block, const std::vector<int64_t> &padding);

  /// Makes `block` access a new buffer `<buffer>_reindex` indexed by the
  /// block's iter vars instead of its read (is_write false) or write buffer
  /// `buffer_index`: the new buffer has one dimension per iter var the
  /// original indices use, in the block's iter var order, of that iter var's
  /// extent. A copy block (named as the new buffer) over those iter vars'
  /// domains is placed before the block's loop nest (read) or after it
  /// (write). This is what normalises a matmul's operands to [vi, vk] layout.
  ///   C[vi, vj] += A[vi, vk] * B[vj, vk]  --reindex(C, 1, false)-->
  ///   for ax0, ax1 in T.grid(80, 48): B_reindex[v0, v1] = B[v0, v1]
  ///   C[vi, vj] += A[vi, vk] * B_reindex[vj, vk]
  /// Requires:
  ///   1. 0 <= buffer_index < number of reads (writes)       -> BufferIndexOutOfRangeError
  ///   2. the block accesses the buffer at one index list, and no other block
  ///      under the block's outermost loop (in its scope) touches it
  ///                                                         -> ReindexAccessError
  ///   3. read: the block does not write the buffer          -> CachedBufferWrittenError
  ///   4. write: the indices are distinct iter vars          -> NonIterVarIndexError
  ///   5. write: the block has no predicate                  -> BlockHasPredicateError
  ///   6. write: a block reading the buffer it writes has an init
  ///                                                         -> NotReductionBlockError
  /// \returns the copy block (`<buffer>_reindex`, made unique).
  BlockRef reindex(const BlockRef &block, int64_t buffer_index, bool is_write);

  /// Rewrites the layout of an allocated buffer (`block`'s write buffer
  /// `buffer_index`, or read buffer when !is_write) everywhere in the
  /// function: loads, stores and regions index it through `index_map`, and
  /// its allocation gets the shape of the map's range over the old shape.
  ///   B[vi, vj]  --transform_layout(B, 0, true, lambda i, j: (i // 16, j // 16, i % 16, j % 16))-->
  ///   B[vi // 16, vj // 16, vi % 16, vj % 16]   (B: (64, 32) -> (4, 2, 16, 16))
  /// Requires:
  ///   1. 0 <= buffer_index < number of writes (reads)       -> BufferIndexOutOfRangeError
  ///   2. the buffer is allocated in the function, not a parameter
  ///                                                         -> ParamBufferLayoutError
  ///   3. the map takes one index per dimension and gives integer outputs
  ///      over its inputs only                               -> InvalidIndexMapError
  ///   4. the map is a bijection of the old shape onto the new one (affine,
  ///      detect_iter_map Bijective), each output starting at 0
  ///                                                         -> NonBijectiveIndexMapError
  void transform_layout(const BlockRef &block, int64_t buffer_index, bool is_write, const IndexMap &index_map);

  /// Re-iterates `block` over the image of its iteration space under
  /// `index_map` (one input per iter var, in order): one new iter var and
  /// loop per output (an output that is one iter var keeps it and its loop
  /// variable; others are named after what they combine, the loops
  /// `<loops>_fused`), and the body reads the old iter vars through the
  /// inverse map. With transform_layout, this turns a convolution into a GEMM
  /// over [m, n, k] (TVM's transform_block_layout).
  ///   for i, j in T.grid(4, 8): B[vi * 8 + vj] = A[vi, vj]
  ///   --transform_block_layout(B, lambda vi, vj: (vi * 8 + vj,))-->
  ///   for i_j_fused in range(32): vi_vj = i_j_fused; B[vi_vj] = A[vi_vj // 8, vi_vj % 8]
  /// Requires:
  ///   1. the block has iter vars and no predicate, and is alone under the
  ///      serial, unannotated loops of its scope, each binding one iter var
  ///      directly (vi = i) over the same range [0, extent)
  ///                                                         -> NotPlainLoopNestError
  ///   2. the map takes one index per iter var and gives integer outputs over
  ///      its inputs only                                    -> InvalidIndexMapError
  ///   3. the map is a bijection of the iteration space onto the new one
  ///      (affine, detect_iter_map Bijective), each output starting at 0
  ///                                                         -> NonBijectiveIndexMapError
  ///   4. no output combines spatial and reduce iter vars    -> MixedIterKindError
  void transform_block_layout(const BlockRef &block, const IndexMap &index_map);

  //===--- Traces ----------------------------------------------------------===//

  /// Replays a JSON trace (Trace::from_json + Trace::apply) on this schedule.
  void replay(std::string_view json);

  /// Internal: the state primitives act on (lib/schedule only).
  detail::State &state() { return *state_; }

 private:
  std::unique_ptr<detail::State> state_;
};

/// The trace name of a handle: the block name or the loop variable's name.
std::string name_of(const BlockOrLoop &h);

}  // namespace tessera::schedule
