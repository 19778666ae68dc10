//===- lib/runtime/BindDims.h - A function's sizes, bound for the analyzer --===//
//
// Private to lib/runtime: the sampled check evaluates a function's loop
// extents (grid sizes, reference loops) at the sizes it runs at.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Func.h"
#include "tessera/runtime/Interpreter.h"

namespace tessera::runtime::detail {

/// Binds each shape variable and integer scalar parameter of `f` that `dims`
/// names to its value.
inline void bind_dims(arith::Analyzer &ana, const ir::PrimFunc &f, const DimBindings &dims) {
  for (const ir::Var &v : f.shape_vars())
    if (auto it = dims.find(v.name()); it != dims.end()) ana.bind(v, it->second, it->second);
  for (const ir::Var &p : f.params())
    if (auto it = dims.find(p.name()); it != dims.end() && !f.buffer_of(p).defined()) ana.bind(p, it->second, it->second);
}

}  // namespace tessera::runtime::detail
