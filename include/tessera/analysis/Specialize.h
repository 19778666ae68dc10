//===- tessera/analysis/Specialize.h - Bind symbolic shapes to constants ----===//
//
// specialize(f, {{"m", 4096}}) is `f` with the symbolic shape variable `m`
// replaced by 4096 everywhere: buffer shapes and strides, loop extents, block
// iter domains, bindings, indices (loop extents, domains and shapes are
// simplified, so `(m + 63) // 64` becomes 64). Variables not named stay
// symbolic. The workload corpus is written with symbolic shapes and
// specialised to its full (benchmark) and small (test) sizes this way; the
// dynamic-shape path specialises per bucket.
//
// A name that is not a shape variable of `f`, or a negative value, is a
// UserError naming it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "tessera/ir/Func.h"
#include "tessera/support/Error.h"

namespace tessera::analysis {

ir::PrimFunc specialize(const ir::PrimFunc &f, const std::map<std::string, int64_t> &values);

}  // namespace tessera::analysis
