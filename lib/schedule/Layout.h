//===- lib/schedule/Layout.h - Layout primitives (private) -----------------===//
//
// pad_einsum, reindex, transform_layout and transform_block_layout: the
// primitives that change which buffers a block reads and writes, their
// shapes, and the iteration space that indexes them. Laid out like
// Dataflow.h: one section per primitive file with its detail:: function and
// trace encoder; the shared helpers come first (primitive/PadEinsum.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "Dataflow.h"
#include "tessera/arith/IterMap.h"

namespace tessera::schedule::detail {

//===--- helpers (primitive/PadEinsum.cpp) ------------------------------===//

/// for ax_d in range(extents[d]): block `name` with spatial iter vars v_d in
/// [0, extents[d]) bound to ax_d, whose body is `body(v)` (regions inferred).
ir::Stmt make_spatial_nest(State &st, const std::string &name, const std::vector<ir::Expr> &extents,
                           const std::function<ir::Stmt(const std::vector<ir::Var> &)> &body);
/// The position in `b.iter_vars` of iter var `e`, or -1 when `e` is not one.
int iter_var_position(const ir::Block &b, const ir::Expr &e);
/// The loops between the scope and the block (`loops`, outermost first), each
/// binding one iter var directly (vi = i) over the same range [0, extent),
/// the block alone under them with no predicate; NotPlainLoopNestError (for
/// `primitive`) otherwise. Returns, per loop, the iter var it binds (-1 for a
/// loop no iter var uses).
std::vector<int> check_plain_loop_nest(std::string_view primitive, const StmtPath &bp,
                                       const std::vector<ir::Stmt> &loops);

//===--- helpers (primitive/Reindex.cpp) --------------------------------===//

/// New indices for an access, from the old ones.
using IndexRewrite = std::function<std::vector<ir::Expr>(const std::vector<ir::Expr> &)>;
/// `s` with every load and store of `from` turned into one of `to` at
/// `fn(indices)` (regions and allocations are left to the caller).
ir::Stmt rewrite_accesses(const ir::Stmt &s, const ir::Buffer &from, const ir::Buffer &to, const IndexRewrite &fn);

//===--- helpers (primitive/TransformLayout.cpp) ------------------------===//

/// Why `m` is malformed ("" when it is not): it must take `inputs` indices
/// (`what` completes the message "it takes 3 indices but ...") and give
/// integer outputs over its inputs only.
std::string why_not_index_map(const IndexMap &m, size_t inputs, const std::string &what);
/// The extent of each output of `m` over `dom` (its inputs' ranges), when `m`
/// is a bijection of `dom` onto [0, extent) per output (detect_iter_map,
/// Bijective); otherwise empty with `why` set. `iter_map` (optional) gets the
/// detected map.
std::vector<ir::Expr> bijective_range(const IndexMap &m,
                                      const std::vector<std::pair<ir::Var, ir::Range>> &dom, std::string &why,
                                      arith::IterMapResult *iter_map = nullptr);

//===--- primitive/PadEinsum.cpp ----------------------------------------===//

void pad_einsum(State &st, const BlockRef &block, const std::vector<int64_t> &padding);
Json encode_pad_einsum(const BlockRef &block, const std::vector<int64_t> &padding);

//===--- primitive/Reindex.cpp ------------------------------------------===//

BlockRef reindex(State &st, const BlockRef &block, int64_t buffer_index, bool is_write);
Json encode_reindex(const BlockRef &block, int64_t buffer_index, bool is_write, const BlockRef &out);

//===--- primitive/TransformBlockLayout.cpp -----------------------------===//

void transform_block_layout(State &st, const BlockRef &block, const IndexMap &map);
Json encode_transform_block_layout(const BlockRef &block, const IndexMap &map);

//===--- primitive/TransformLayout.cpp ----------------------------------===//

void transform_layout(State &st, const BlockRef &block, int64_t buffer_index, bool is_write, const IndexMap &map);
Json encode_transform_layout(const BlockRef &block, int64_t buffer_index, bool is_write, const IndexMap &map);

}  // namespace tessera::schedule::detail
