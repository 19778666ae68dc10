//===- tessera/script/Printer.h - Writing canonical TVMScript --------------===//
//
// Prints IR as TVMScript in one canonical form that parse_module reads back
// structurally equal, and that is stable (printing the parsed text again gives
// the same text). The canonical form:
//   - a bare `@T.prim_func` for one function, `@I.ir_module class Module:`
//     for several;
//   - `T.Buffer` parameter annotations, or `T.handle` + `T.match_buffer` when
//     a shape uses symbolic variables (declared as `n = T.int64()`);
//   - perfectly nested serial loops from 0 as `for i, j in T.grid(...)`;
//   - blocks as `with T.block("C"):` with `T.axis.remap` when every binding is
//     a plain loop variable whose range matches the iter var's domain, else
//     `T.axis.spatial/reduce(dom, binding)`; T.where, T.reads/T.writes always
//     written, T.block_attr, T.init;
//   - the root block written out only when it allocates or is annotated;
//   - typed constants as `T.float16(1.5)` except int32 and bool literals;
//   - names made unique by suffixing `_1`, `_2`, ... where two different
//     variables or buffers share a name hint.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tessera/ir/Func.h"

namespace tessera::script {

std::string print(const ir::Module &m);
std::string print(const ir::PrimFunc &f);
/// A statement or expression alone (for messages and debugging); names are
/// the variables' hints, not made unique.
std::string print(const ir::Stmt &s);
std::string print(const ir::Expr &e);

}  // namespace tessera::script
