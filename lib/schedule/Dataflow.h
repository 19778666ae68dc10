//===- lib/schedule/Dataflow.h - Data-flow primitives (private) ------------===//
//
// The compute-location, caching and reduction-init primitives and the
// helpers they share (TVM's "block scope" questions: who writes and reads a
// buffer in a scope, which region a block touches seen from a loop, where to
// put a new statement, how to take a block out of its loop nest).
//
// Laid out like Primitive.h: the helpers (analysis/Dataflow.cpp), then one
// section per primitive file with its detail:: function and trace encoder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "Primitive.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/arith/IntSet.h"

namespace tessera::schedule::detail {

//===--- analysis/Dataflow.cpp ------------------------------------------===//

/// The storage scopes a cache or set_scope may use: global, shared, shared.dyn, local.
bool is_valid_storage_scope(const std::string &scope);
void check_storage_scope(std::string_view primitive, const StmtPath &block, const std::string &scope);
/// `index` is a valid position in `regions` (the block's reads or writes);
/// `what` is "read" or "write". Returns the region.
const ir::BufferRegion &check_buffer_index(std::string_view primitive, const StmtPath &block,
                                           const std::vector<ir::BufferRegion> &regions, int64_t index,
                                           std::string_view what);

/// True when `b` is a buffer parameter of `f` (an input or output of the function).
bool is_param_buffer(const ir::PrimFunc &f, const ir::Buffer &b);
bool reads_buffer(const ir::Block &b, const ir::Buffer &buf);
bool writes_buffer(const ir::Block &b, const ir::Buffer &buf);
/// The names of all blocks of `f`.
std::set<std::string> block_names(const ir::PrimFunc &f);
/// The names of all buffers of `f` (parameters and allocations).
std::set<std::string> buffer_names(const ir::PrimFunc &f);
/// The block that allocates `buf`, or an undefined Stmt for parameters.
ir::Stmt allocating_block(const ir::PrimFunc &f, const ir::Buffer &buf);

/// The path of `p`'s scope block (its ancestors are a prefix of `p`'s).
StmtPath scope_path_of(const StmtPath &p);
/// True when `anc` is one of `p`'s ancestors.
bool is_ancestor(const StmtPath &p, const ir::Stmt &anc);
/// The loops on `p`'s ancestor path strictly below `top` (all loops below
/// the scope when `top` is undefined), outermost first.
std::vector<ir::Stmt> loops_below(const StmtPath &p, const ir::Stmt &top);

/// A block's region seen from outside: `r` (in the block's iter vars) with
/// the bindings substituted and the loops of `relaxed` relaxed over their
/// ranges, each range the bounding interval, simplified.
std::vector<ir::Range> region_seen_from(const ir::Block &b, const ir::BufferRegion &r,
                                        const std::vector<ir::Stmt> &relaxed,
                                        const arith::Analyzer &ana);
/// `region` intersected with the buffer's shape where that is not provably
/// inside already (relaxing a guarded, non-dividing split overshoots).
std::vector<ir::Range> clamp_to_shape(const std::vector<ir::Range> &region, const ir::Buffer &buf,
                                      const arith::Analyzer &ana);
/// An analyzer that knows the range of every loop on `p`'s ancestor path
/// (and of `p` itself when it is a loop).
arith::Analyzer analyzer_for(const StmtPath &p);

/// `root` without `target`, and without the loops, ifs, lets and sequence
/// slots that held only it (TVM's "remove the leaf and its empty ancestors").
ir::Stmt remove_stmt(const ir::Stmt &root, const ir::StmtNode *target);
/// The child of `scope`'s body sequence that contains `stmt` (or is it), as
/// an index into body_items(scope).
std::vector<ir::Stmt> body_items(const ir::Block &scope);
size_t item_containing(const ir::Block &scope, const ir::Stmt &stmt);
/// `scope` with `stmt` inserted into its body sequence at position `pos`.
ir::Stmt insert_into_scope(const ir::Block &scope, size_t pos, const ir::Stmt &stmt);
/// `body` with `first` run before it / `last` after it, as one sequence.
ir::Stmt seq_before(const ir::Stmt &first, const ir::Stmt &body);
ir::Stmt seq_after(const ir::Stmt &body, const ir::Stmt &last);

/// A copy of a block with other regions / allocations / body and init.
ir::Stmt block_with_regions(const ir::Block &b, std::vector<ir::BufferRegion> reads,
                            std::vector<ir::BufferRegion> writes);
ir::Stmt block_with_allocs(const ir::Block &b, std::vector<ir::Buffer> allocs);
/// `b` with its reads and writes inferred from its (new) init and body.
ir::Stmt block_with_inferred_regions(const ir::Block &b);
/// Every reference to `from` (loads, stores, regions) in `s` replaced by `to`.
ir::Stmt replace_buffer(const ir::Stmt &s, const ir::Buffer &from, const ir::Buffer &to);

//===--- primitive/DecomposeReduction.cpp -------------------------------===//

BlockRef decompose_reduction(State &st, const BlockRef &block, const LoopRef &loop, const std::string &name);
Json encode_decompose_reduction(const BlockRef &block, const LoopRef &loop, const BlockRef &out);

//===--- primitive/CacheReadWrite.cpp -----------------------------------===//

BlockRef cache_read(State &st, const BlockRef &block, int64_t read_buffer_index, const std::string &scope,
                    const std::string &name);
BlockRef cache_write(State &st, const BlockRef &block, int64_t write_buffer_index, const std::string &scope,
                     const std::string &name);
Json encode_cache(std::string_view op, const BlockRef &block, int64_t index, const std::string &scope,
                  const BlockRef &out);

//===--- primitive/ComputeAt.cpp ----------------------------------------===//

void compute_at(State &st, const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops);
void reverse_compute_at(State &st, const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops);
Json encode_compute_at(std::string_view op, const BlockRef &block, const LoopRef &loop, bool preserve_unit_loops);

//===--- primitive/ComputeInline.cpp ------------------------------------===//

void compute_inline(State &st, const BlockRef &block);
void reverse_compute_inline(State &st, const BlockRef &block);
Json encode_block_op(std::string_view op, const BlockRef &block);

//===--- primitive/SetScope.cpp -----------------------------------------===//

void set_scope(State &st, const BlockRef &block, int64_t write_buffer_index, const std::string &scope);
void storage_align(State &st, const BlockRef &block, int64_t write_buffer_index, int64_t axis, int64_t factor,
                   int64_t offset);
Json encode_set_scope(const BlockRef &block, int64_t index, const std::string &scope);
Json encode_storage_align(const BlockRef &block, int64_t index, int64_t axis, int64_t factor, int64_t offset);

}  // namespace tessera::schedule::detail
