//===- lib/schedule/Layout.h - Layout primitives (private) -----------------===//
//
// pad_einsum, reindex and transform_layout: the primitives that change which
// buffers a block reads and writes, and their shapes. Laid out like
// Dataflow.h: one section per primitive file with its detail:: function and
// trace encoder; the shared helpers come first (primitive/PadEinsum.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "Dataflow.h"

namespace tessera::schedule::detail {

//===--- helpers (primitive/PadEinsum.cpp) ------------------------------===//

/// for ax_d in range(extents[d]): block `name` with spatial iter vars v_d in
/// [0, extents[d]) bound to ax_d, whose body is `body(v)` (regions inferred).
ir::Stmt make_spatial_nest(State &st, const std::string &name, const std::vector<ir::Expr> &extents,
                           const std::function<ir::Stmt(const std::vector<ir::Var> &)> &body);
/// The position in `b.iter_vars` of iter var `e`, or -1 when `e` is not one.
int iter_var_position(const ir::Block &b, const ir::Expr &e);

//===--- helpers (primitive/Reindex.cpp) --------------------------------===//

/// New indices for an access, from the old ones.
using IndexRewrite = std::function<std::vector<ir::Expr>(const std::vector<ir::Expr> &)>;
/// `s` with every load and store of `from` turned into one of `to` at
/// `fn(indices)` (regions and allocations are left to the caller).
ir::Stmt rewrite_accesses(const ir::Stmt &s, const ir::Buffer &from, const ir::Buffer &to, const IndexRewrite &fn);

//===--- primitive/PadEinsum.cpp ----------------------------------------===//

void pad_einsum(State &st, const BlockRef &block, const std::vector<int64_t> &padding);
Json encode_pad_einsum(const BlockRef &block, const std::vector<int64_t> &padding);

//===--- primitive/Reindex.cpp ------------------------------------------===//

BlockRef reindex(State &st, const BlockRef &block, int64_t buffer_index, bool is_write);
Json encode_reindex(const BlockRef &block, int64_t buffer_index, bool is_write, const BlockRef &out);

//===--- primitive/TransformLayout.cpp ----------------------------------===//

void transform_layout(State &st, const BlockRef &block, int64_t buffer_index, bool is_write, const IndexMap &map);
Json encode_transform_layout(const BlockRef &block, int64_t buffer_index, bool is_write, const IndexMap &map);

}  // namespace tessera::schedule::detail
