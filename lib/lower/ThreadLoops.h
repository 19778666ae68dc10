//===- ThreadLoops.h - Which thread axis a loop is bound to ---------------===//
//
// Private to lib/lower: the passes that reason about a kernel's threads
// (the cross-thread reduction, the single-writer guard) ask of a loop which
// threadIdx axis it is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

#include "tessera/ir/Stmt.h"

namespace tessera::lower::detail {

/// 0, 1, 2 for a loop bound to threadIdx.x/y/z; -1 for any other loop.
inline int thread_axis(const ir::For *f) {
  if (f->for_kind != ir::ForKind::ThreadBinding) return -1;
  for (int a = 0; a < 3; ++a)
    if (f->thread_tag == std::string("threadIdx.") + "xyz"[a]) return a;
  return -1;
}

}  // namespace tessera::lower::detail
