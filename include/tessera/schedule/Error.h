//===- tessera/schedule/Error.h - Errors of schedule primitives ------------===//
//
// A `ScheduleError` is an illegal request (a precondition of a primitive does
// not hold). It is thrown after the checks and before any mutation, so the
// schedule is exactly as it was (STYLE.md 3.4, 3.8). Each numbered "Requires:"
// line of a primitive in Schedule.h names the class thrown when it fails.
//
// An error has three parts: `brief()` (one line, no IR: used while tuning),
// `detail()` (may reference the offending nodes as {0}, {1}, ...) and
// `locations()` (the For/Block statements {i} refer to). The Schedule attaches
// the function the primitive failed on, and `what()` renders at the
// schedule's level:
//
//   None    schedule primitive 'fuse' failed
//   Brief   schedule primitive 'fuse' failed: loop 'j' is not the only child of loop 'i'
//   Detail  the brief line, then the detail, then the function as TVMScript
//           with each location's line tagged:
//             loop {1} is not the only child of loop {0}
//             ...
//                 for i in range(128):  # {0}
//                     for j in range(64):  # {1}
//
// Messages start lower-case, have no trailing period, and name the objects
// and numbers: "split factors multiply to 96 but loop 'i' has extent 128".
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/support/Error.h"

namespace tessera::schedule {

/// How much a ScheduleError's what() says (TVM's error_render_level).
enum class ErrorRenderLevel { Detail, Brief, None };

/// What an error points at: a loop (For) or block statement of the function.
using NodeRef = ir::Stmt;

class ScheduleError : public UserError {
 public:
  ScheduleError() : UserError("schedule error") {}
  /// The primitive that failed: "split", "fuse", ...
  virtual std::string_view primitive() const = 0;
  /// One line without IR.
  virtual std::string brief() const = 0;
  /// The explanation; {i} stands for locations()[i].
  virtual std::string detail() const = 0;
  virtual std::vector<NodeRef> locations() const = 0;

  /// The text at `level` (see the file comment). The function is printed only
  /// when one is attached.
  std::string render(ErrorRenderLevel level) const;
  /// render() at the attached level (Detail when none was attached).
  const char *what() const noexcept override;

  /// Called by the Schedule when the error passes through it: the function the
  /// primitive failed on and the level for what().
  void attach(ir::PrimFunc func, ErrorRenderLevel level);
  /// Prepends context to the first line, e.g. "trace instruction 3 (split)".
  void add_context(std::string context);
  const ir::PrimFunc &func() const { return func_; }

 private:
  ir::PrimFunc func_;
  ErrorRenderLevel level_ = ErrorRenderLevel::Detail;
  std::string context_;
  mutable std::string what_;
};

/// A ScheduleError whose parts are fixed at construction: the base of every
/// concrete error class below (they differ in type, so tests and callers can
/// tell the preconditions apart).
class SimpleScheduleError : public ScheduleError {
 public:
  SimpleScheduleError(std::string primitive, std::string brief, std::string detail = "",
                      std::vector<NodeRef> locations = {})
      : primitive_(std::move(primitive)), brief_(std::move(brief)), detail_(std::move(detail)),
        locations_(std::move(locations)) {}
  std::string_view primitive() const override { return primitive_; }
  std::string brief() const override { return brief_; }
  std::string detail() const override { return detail_.empty() ? brief_ : detail_; }
  std::vector<NodeRef> locations() const override { return locations_; }

 private:
  std::string primitive_, brief_, detail_;
  std::vector<NodeRef> locations_;
};

#define TESSERA_SCHEDULE_ERROR(Name)                 \
  class Name : public SimpleScheduleError {          \
   public:                                           \
    using SimpleScheduleError::SimpleScheduleError;  \
  }

// Handles and lookup (Schedule.cpp, State.cpp).
/// A handle whose loop or block no longer exists (e.g. a loop removed by split).
TESSERA_SCHEDULE_ERROR(StaleHandleError);
/// get_block: no block has that name (the message lists the names there are).
TESSERA_SCHEDULE_ERROR(BlockNotFoundError);
/// A malformed or unreplayable trace: names the instruction index and field.
TESSERA_SCHEDULE_ERROR(TraceError);

// Shared loop preconditions (analysis/LoopProperties.cpp).
/// The loop is parallel, vectorized, unrolled or thread-bound, not serial.
TESSERA_SCHEDULE_ERROR(LoopNotSerialError);
/// The loop carries annotations that the primitive would have to drop.
TESSERA_SCHEDULE_ERROR(LoopHasAnnotationError);
/// The loop's min is not 0.
TESSERA_SCHEDULE_ERROR(LoopNotStartAtZeroError);
/// A block iter var bound to the loop is a reduction (or opaque) iter var.
TESSERA_SCHEDULE_ERROR(LoopNotDataParallelError);
/// bind: the loop would nest on one thread axis with another in a way whose
/// GPU meaning (one thread) differs from its serial one (analysis/ThreadBindings.h).
TESSERA_SCHEDULE_ERROR(NestedThreadBindingError);
/// Empty list of loops, or a loop listed twice, or lists of different lengths.
TESSERA_SCHEDULE_ERROR(InvalidLoopListError);

// split (primitive/Split.cpp).
/// No factors, a factor <= 0, or more than one inferred factor.
TESSERA_SCHEDULE_ERROR(InvalidSplitFactorsError);
/// The factors cannot cover the loop: their product is below its extent.
TESSERA_SCHEDULE_ERROR(SplitFactorsMismatchError);
/// The names for the new loops do not match the factors in number, or are not identifiers.
TESSERA_SCHEDULE_ERROR(InvalidLoopNamesError);

// fuse (primitive/Fuse.cpp).
/// The loops are not directly nested, each the only child of the previous one.
TESSERA_SCHEDULE_ERROR(LoopsNotNestedError);

// reorder / tile (primitive/Reorder.cpp).
/// The loops are not on one path of single-child loops.
TESSERA_SCHEDULE_ERROR(LoopsNotInOneChainError);
/// A loop's min or extent uses another loop of the chain.
TESSERA_SCHEDULE_ERROR(DependentLoopRangeError);
/// A block under the loops is neither a complete nor a reduction block.
TESSERA_SCHEDULE_ERROR(BlockNotCompleteOrReductionError);
/// A block under the loops has a binding that is not affine in the loops.
TESSERA_SCHEDULE_ERROR(NonAffineBindingError);

// add_unit_loop (primitive/AddUnitLoop.cpp).
/// The root block cannot get a loop around it.
TESSERA_SCHEDULE_ERROR(RootBlockError);

// bind (primitive/ForKind.cpp).
/// Not one of blockIdx.x/y/z, threadIdx.x/y/z, vthread, vthread.x/y/z.
TESSERA_SCHEDULE_ERROR(InvalidThreadTagError);

// annotate / unannotate (primitive/Annotate.cpp).
/// An empty annotation key.
TESSERA_SCHEDULE_ERROR(InvalidAnnotationKeyError);
/// unannotate: the loop or block has no annotation with that key.
TESSERA_SCHEDULE_ERROR(AnnotationNotFoundError);

//===--- Data flow: caching, compute location, reduction init -------------===//
// (analysis/Dataflow.cpp, primitive/{CacheReadWrite,ComputeAt,ComputeInline,
// DecomposeReduction,SetScope}.cpp)
/// A read/write buffer index outside the block's reads/writes list.
TESSERA_SCHEDULE_ERROR(BufferIndexOutOfRangeError);
/// A storage scope other than global, shared, shared.dyn, local.
TESSERA_SCHEDULE_ERROR(InvalidStorageScopeError);
/// cache_read/cache_write/set_scope: the buffer already lives in that scope.
/// cache_read: the buffer is written by the block or by a block that runs after the cache point.
TESSERA_SCHEDULE_ERROR(CachedBufferWrittenError);
/// Another block of the scope also writes the buffer (cache_write, compute_inline).
TESSERA_SCHEDULE_ERROR(BufferHasOtherWriterError);
/// A block other than the one being inlined reads the buffer (reverse_compute_inline).
TESSERA_SCHEDULE_ERROR(BufferHasOtherReaderError);
/// The block writes a parameter buffer (an output of the function).
TESSERA_SCHEDULE_ERROR(OutputBlockError);
/// The block has reduction or opaque iter vars, or reads what it writes.
TESSERA_SCHEDULE_ERROR(BlockNotCompleteError);
/// decompose_reduction: not a reduction block with an init statement.
TESSERA_SCHEDULE_ERROR(NotReductionBlockError);
/// The block has a predicate (T.where) that moving or inlining it would lose.
TESSERA_SCHEDULE_ERROR(BlockHasPredicateError);
/// decompose_reduction: the loop is not an ancestor of the block in its scope.
TESSERA_SCHEDULE_ERROR(LoopNotAncestorError);
/// decompose_reduction: a loop above the given one feeds a reduction iter var.
TESSERA_SCHEDULE_ERROR(ReductionLoopAboveError);
/// compute_at/reverse_compute_at: the loop is not in the block's scope, or is an ancestor of the block.
TESSERA_SCHEDULE_ERROR(InvalidComputeLocationError);
/// compute_at: the block has no consumer, or one not under the loop.
TESSERA_SCHEDULE_ERROR(ConsumersNotUnderLoopError);
/// reverse_compute_at: the block has no producer, or one not under the loop.
TESSERA_SCHEDULE_ERROR(ProducersNotUnderLoopError);
/// compute_at: a block under the loop writes a buffer the block reads.
TESSERA_SCHEDULE_ERROR(ProducerUnderLoopError);
/// reverse_compute_at: a block under the loop reads a buffer the block writes.
TESSERA_SCHEDULE_ERROR(ConsumerUnderLoopError);
/// The block accesses a buffer at indices that are not distinct iter vars (B[vi, vj]).
TESSERA_SCHEDULE_ERROR(NonIterVarIndexError);
/// compute_inline/reverse_compute_inline: the body is not a single store.
TESSERA_SCHEDULE_ERROR(NotInlineableBodyError);
/// reverse_compute_inline: not exactly one producer block for exactly one read buffer.
TESSERA_SCHEDULE_ERROR(ProducerNotUniqueError);
/// storage_align: axis out of range, factor <= 0, or offset outside [0, factor).
TESSERA_SCHEDULE_ERROR(InvalidStorageAlignError);

//===--- Reductions: rfactor (primitive/RFactor.cpp) -----------------------===//
// rfactor also raises NotReductionBlockError, NonAffineBindingError,
// LoopNotStartAtZeroError and BlockHasPredicateError (declared above).
/// rfactor: the loop has no block or several under it, or the block shares its loop nest.
TESSERA_SCHEDULE_ERROR(NotSingleBlockError);
/// rfactor: the body is not C[v] = C[v] op f(...) with a known op (+, *, max, min) and its identity as init.
TESSERA_SCHEDULE_ERROR(UnknownReducerError);
/// rfactor: the loop feeds no reduce iter var, or a loop feeds both spatial and reduce iter vars.
TESSERA_SCHEDULE_ERROR(LoopNotReductionError);
/// rfactor: factor_axis outside [-(ndim + 1), ndim] of the reduced buffer.
TESSERA_SCHEDULE_ERROR(InvalidFactorAxisError);

//===--- Tensor intrinsics: blockize, tensorize ----------------------------===//
// (primitive/{Blockize,Tensorize}.cpp; they also raise NotSingleBlockError,
// NonAffineBindingError and BlockHasPredicateError, declared above.)
/// blockize: a binding cannot be divided into a multiple of E above the loop plus a part over [0, E) below it.
TESSERA_SCHEDULE_ERROR(BindingNotDivisibleError);
/// tensorize: no tensor intrinsic of that name is registered (Intrinsic.h).
TESSERA_SCHEDULE_ERROR(UnknownIntrinsicError);
/// tensorize: the block's body does not compute what the intrinsic's description computes.
TESSERA_SCHEDULE_ERROR(TensorizeMismatchError);
/// tensorize: a region the block accesses does not have the shape of the description's buffer.
TESSERA_SCHEDULE_ERROR(TensorizeRegionMismatchError);

//===--- Layout: pad_einsum, reindex, transform_layout, transform_block_layout ===//
// (primitive/{PadEinsum,Reindex,TransformLayout,TransformBlockLayout}.cpp; they also raise
// BufferIndexOutOfRangeError, BlockNotCompleteOrReductionError,
// NonIterVarIndexError, NotReductionBlockError, BlockHasPredicateError,
// CachedBufferWrittenError, declared above.)
/// pad_einsum: not one positive padding per iter var of the block.
TESSERA_SCHEDULE_ERROR(InvalidPaddingError);
/// pad_einsum: the body is not one store whose accesses index distinct plain iter vars, one index list per buffer.
TESSERA_SCHEDULE_ERROR(NotEinsumBlockError);
/// pad_einsum: the block is not alone under its loops, each iter var bound to its own loop (vi = i), no predicate.
TESSERA_SCHEDULE_ERROR(NotPlainLoopNestError);
/// pad_einsum: an iter var has a symbolic extent.
TESSERA_SCHEDULE_ERROR(SymbolicExtentError);
/// pad_einsum: padding a reduction iter var would add non-zero terms.
TESSERA_SCHEDULE_ERROR(PaddingChangesReductionError);
/// reindex: the block accesses the buffer at several index lists, or another block of its loop nest touches it.
TESSERA_SCHEDULE_ERROR(ReindexAccessError);
/// transform_layout: the index map is malformed (arity, free variables, not integer).
TESSERA_SCHEDULE_ERROR(InvalidIndexMapError);
/// transform_layout: the index map is not a bijection of the buffer's shape onto the new shape.
TESSERA_SCHEDULE_ERROR(NonBijectiveIndexMapError);
/// transform_layout: the buffer is a parameter of the function (its layout is the caller's).
TESSERA_SCHEDULE_ERROR(ParamBufferLayoutError);
/// transform_block_layout: an output of the index map combines spatial and reduce iter vars.
TESSERA_SCHEDULE_ERROR(MixedIterKindError);

#undef TESSERA_SCHEDULE_ERROR

}  // namespace tessera::schedule
