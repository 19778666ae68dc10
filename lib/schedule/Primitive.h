//===- lib/schedule/Primitive.h - Primitives as functions on State ---------===//
//
// Private to lib/schedule (TVM's primitive.h): each primitive is a free
// function on State in its own file under primitive/, laid out as
//   1. error messages (the classes are declared in schedule/Error.h),
//   2. check_* helpers,
//   3. detail::<primitive>(State&, ...): Step 1 check, Step 2 build, Step 3 replace,
//   4. trace registration (replay) and the encoder the Schedule records with.
// Shared checks live in analysis/ as is_X / check_X pairs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <unordered_set>
#include <string>
#include <string_view>
#include <vector>

#include "State.h"
#include "tessera/arith/Analyzer.h"

namespace tessera::schedule::detail {

//===--- analysis/LoopProperties.cpp ------------------------------------===//

/// A loop's display name: 'i'.
std::string loop_name(const ir::For &loop);
void check_loop_serial(std::string_view primitive, const StmtPath &loop);
void check_loop_no_annotation(std::string_view primitive, const StmtPath &loop);
void check_loop_start_at_zero(std::string_view primitive, const StmtPath &loop);
/// The first (block, iter var index) under `loop` whose binding uses the loop
/// variable and whose iter var is not spatial; nullopt when data parallel.
struct IterUse {
  ir::Stmt block;
  size_t iter;
};
std::optional<IterUse> find_non_spatial_use(const ir::Stmt &loop);
bool is_loop_data_parallel(const ir::Stmt &loop);
void check_loop_data_parallel(std::string_view primitive, const StmtPath &loop, std::string_view why = "");
/// a * b, folding constants and multiplications by one (extents and strides
/// of split and fuse).
ir::Expr mul_fold(const ir::Expr &a, const ir::Expr &b);
/// The handles in `loops` must be distinct and non-empty.
void check_loop_list(std::string_view primitive, const std::vector<LoopRef> &loops);

//===--- analysis/BlockProperties.cpp -----------------------------------===//

/// Only spatial iter vars and no buffer both read and written.
bool is_complete_block(const ir::Block &b);
/// Spatial and at least one reduce iter var (no opaque ones); every write
/// index uses spatial iter vars only.
bool is_reduction_block(const ir::Block &b);
void check_complete_or_reduction_block(std::string_view primitive, const ir::Stmt &block);

//===--- analysis/AffineBinding.cpp -------------------------------------===//

/// Empty when the bindings (and predicate) of the block at `block` are a
/// surjective affine map of the loops between it and its scope
/// (arith::detect_iter_map, IterMapLevel::Surjective); otherwise why not.
std::string why_not_affine_binding(const StmtPath &block);
bool is_affine_binding(const StmtPath &block);
/// NonAffineBindingError (for `primitive`) naming the bindings and the why-not.
void check_affine_binding(std::string_view primitive, const StmtPath &block);
/// An analyzer with every loop among `p`'s ancestors bound to its range.
arith::Analyzer analyzer_at(const StmtPath &p);
/// `s` with the bindings and predicates of the blocks under it simplified by
/// `ana`, extended with the ranges of the loops (and iter vars) inside `s`;
/// only those that mention a variable of `only` when it is not empty.
ir::Stmt simplify_bindings(const ir::Stmt &s, const arith::Analyzer &ana, const std::vector<ir::Var> &only = {});
/// The loop variables of every loop in `f`.
std::unordered_set<const ir::VarNode *> loop_vars_of(const ir::PrimFunc &f);

//===--- primitive/*.cpp ------------------------------------------------===//

std::vector<LoopRef> split(State &st, const LoopRef &loop, const std::vector<std::optional<int64_t>> &factors,
                           const std::vector<std::string> &names);
Json encode_split(const LoopRef &loop, const std::vector<std::optional<int64_t>> &factors,
                  const std::vector<LoopRef> &out);

LoopRef fuse(State &st, const std::vector<LoopRef> &loops, const std::string &name);
Json encode_fuse(const std::vector<LoopRef> &loops, const LoopRef &out);

void reorder(State &st, const std::vector<LoopRef> &loops);
Json encode_reorder(const std::vector<LoopRef> &loops);

std::vector<std::vector<LoopRef>> tile(State &st, const std::vector<LoopRef> &loops,
                                       const std::vector<std::vector<std::optional<int64_t>>> &factors,
                                       const std::vector<std::vector<std::string>> &names);
Json encode_tile(const std::vector<LoopRef> &loops, const std::vector<std::vector<std::optional<int64_t>>> &factors,
                 const std::vector<std::vector<LoopRef>> &out);

LoopRef add_unit_loop(State &st, const BlockOrLoop &target, const std::string &name);
Json encode_add_unit_loop(const BlockOrLoop &target, const LoopRef &out);

/// Changes a loop's kind (bind/parallel/vectorize/unroll).
void bind(State &st, const LoopRef &loop, const std::string &thread);
void parallel(State &st, const LoopRef &loop);
void vectorize(State &st, const LoopRef &loop);
void unroll(State &st, const LoopRef &loop);
Json encode_bind(const LoopRef &loop, const std::string &thread);
Json encode_for_kind(std::string_view op, const LoopRef &loop);

void annotate(State &st, const BlockOrLoop &target, const std::string &key, const ir::AnnValue &value);
void unannotate(State &st, const BlockOrLoop &target, const std::string &key);
Json encode_annotate(const BlockOrLoop &target, const std::string &key, const ir::AnnValue &value);
Json encode_unannotate(const BlockOrLoop &target, const std::string &key);
/// AnnValue <-> JSON (bool, integer, float, string, list).
Json ann_to_json(const ir::AnnValue &v);
std::optional<ir::AnnValue> ann_from_json(const Json &j);

/// Factors as JSON: integers and null; and back (a TraceError naming `field`).
std::vector<std::optional<int64_t>> split_factors_from_json(const ReplayContext &ctx, const Json &j,
                                                            std::string_view field);
Json factors_to_json(const std::vector<std::optional<int64_t>> &factors);

//===--- primitive/RFactor.cpp ------------------------------------------===//

BlockRef rfactor(State &st, const LoopRef &loop, int64_t factor_axis);
Json encode_rfactor(const LoopRef &loop, int64_t factor_axis, const BlockRef &out);

//===--- primitive/Blockize.cpp, Tensorize.cpp --------------------------===//

BlockRef blockize(State &st, const LoopRef &loop, const std::string &name);
Json encode_blockize(const LoopRef &loop, const BlockRef &out);
BlockRef tensorize(State &st, const BlockOrLoop &target, const std::string &intrin);
Json encode_tensorize(const BlockOrLoop &target, const std::string &intrin, const BlockRef &out);

}  // namespace tessera::schedule::detail
