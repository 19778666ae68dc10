//===- analysis/BlockProperties.cpp - Complete and reduction blocks --------===//
//
// TVM's block classes, as far as reorder needs them. A complete block
// computes its outputs from scratch (only spatial iter vars, no output read
// back); a reduction block folds its reduce iter vars into outputs indexed by
// its spatial iter vars. TVM also asks for "dominant writer" and region cover;
// those concern compute_at and are left to it.
//
//===----------------------------------------------------------------------===//
#include "../Primitive.h"

namespace tessera::schedule::detail {

using namespace ir;

namespace {

bool reads_what_it_writes(const Block &b) {
  for (const BufferRegion &w : b.writes)
    for (const BufferRegion &r : b.reads)
      if (w.buffer.same_as(r.buffer)) return true;
  return false;
}

/// The first reduce iter var used in a write region, or nullptr.
const IterVar *reduce_var_in_writes(const Block &b) {
  for (const IterVar &iv : b.iter_vars) {
    if (iv.kind != IterKind::Reduce) continue;
    for (const BufferRegion &w : b.writes)
      for (const Range &r : w.region)
        if (uses_var(r.min, iv.var) || uses_var(r.extent, iv.var)) return &iv;
  }
  return nullptr;
}

}  // namespace

bool is_complete_block(const Block &b) {
  for (const IterVar &iv : b.iter_vars)
    if (iv.kind != IterKind::Spatial) return false;
  return !reads_what_it_writes(b);
}

bool is_reduction_block(const Block &b) {
  bool has_reduce = false;
  for (const IterVar &iv : b.iter_vars) {
    if (iv.kind == IterKind::Opaque) return false;
    has_reduce |= iv.kind == IterKind::Reduce;
  }
  return has_reduce && !reduce_var_in_writes(b);
}

void check_complete_or_reduction_block(std::string_view primitive, const Stmt &block) {
  const Block &b = *block.as<Block>();
  if (is_complete_block(b) || is_reduction_block(b)) return;
  std::string why;
  for (const IterVar &iv : b.iter_vars)
    if (iv.kind == IterKind::Opaque) why = "it has the opaque iter var " + quoted(iv.var.name());
  if (why.empty()) {
    if (const IterVar *iv = reduce_var_in_writes(b))
      why = "it writes at an index that uses the reduction iter var " + quoted(iv->var.name());
    else
      why = "it reads a buffer it writes without any reduction iter var";
  }
  throw BlockNotCompleteOrReductionError(std::string(primitive),
                                         "block " + quoted(b.name) + " is neither a complete nor a reduction block: " +
                                             why,
                                         "block {0} is neither a complete nor a reduction block: " + why, {block});
}

}  // namespace tessera::schedule::detail
