//===- tessera/script/Printer.h - Writing canonical TVMScript --------------===//
//
// Prints IR as TVMScript in one canonical form that parse_module reads back
// structurally equal, and that is stable (printing the parsed text again gives
// the same text). The canonical form:
//   - a `# from tvm.script import tir as T` header, then a bare
//     `@T.prim_func` for one function, or `@I.ir_module class Module:` with
//     the functions indented and separated by a blank line for several;
//   - `A: T.Buffer((128, 64), "float32")` parameters (dtype always written),
//     or `var_A: T.handle` + `A = T.match_buffer(var_A, (n, 128))` when a
//     shape or stride is not constant; symbolic and other free variables are
//     declared as `n = T.int64()` after `T.func_attr({...})`;
//   - perfectly nested serial loops from 0 without annotations as
//     `for i, j in T.grid(128, 64):` (an inner extent may not use an outer
//     loop variable), one such loop as `for i in range(128):`, a non-zero
//     start as `range(1, 100)`, other kinds and annotated loops as
//     `T.serial/parallel/vectorized/unroll(...)` or
//     `T.thread_binding(8, thread="threadIdx.x")` with `annotations={...}`;
//   - blocks as `with T.block("C"):`, with one `T.axis.remap("SSR", [...])`
//     when every binding is a loop variable whose loop range equals the iter
//     var's domain, else one `v = T.axis.spatial/reduce/opaque(dom, binding)`
//     per iter var (a domain not starting at 0 as `(lo, hi)`); then
//     `T.where` (when not True), `T.reads(...)`/`T.writes(...)` (always, even
//     empty), `T.block_attr({...})`, `T.alloc_buffer(...)`s, `with T.init():`;
//   - regions with a point where the extent is 1 (`A[v_i]`), else
//     `A[lo:hi]` with hi = lo + extent folded (`A[vi - 1:vi + 2]`); 0-d
//     buffers as `A[()]`;
//   - the root block written out (`with T.block("root"):`) only when it is
//     annotated or has regions; its allocations alone are printed as
//     function-level `T.alloc_buffer` lines (the parser puts them back into
//     the root block), as TVM prints them;
//   - `T.alloc_buffer`/`T.match_buffer` omit the dtype when it is float32 and
//     the scope when it is "global";
//   - int32 constants bare (`128`, `-5`), bools as `True`/`False`, other
//     integers as `T.int64(128)`, floats as `T.float16(0.1)` with the
//     shortest decimal that reads back to the same value of that type, in
//     Python's repr style (`1e-05`), and `T.float32("inf")`/`("nan")`;
//   - Python operators with minimal parentheses by Python precedence (`//`
//     and `%` are floor division and modulo, `/` is float division); integer
//     Div/Mod as `T.truncdiv`/`T.truncmod`; min/max, Select, Cast, Let and
//     intrinsics as `T.min(a, b)`, `T.Select(c, a, b)`, `T.Cast("float16", x)`,
//     `T.let(x, value, body)`, `T.exp(x)`, `T.reinterpret("float16", x)`,
//     `T.max_value("float32")`;
//   - a LetStmt as `x: T.int32 = value` followed by its body when it ends its
//     scope, else as `with T.LetStmt(value) as x:` around its body;
//   - names are the hints, made valid identifiers (`x.outer` -> `x_outer`),
//     kept off Python keywords, `T`, `I` and `range`, and suffixed `_1`,
//     `_2`, ... where a name would clash with a different variable or buffer
//     in scope. Loop and block iter variables are scoped: sibling loop nests
//     each print `for i, j in ...`; an inner loop named like an outer one
//     becomes `i_1`. Buffers and let-bound names are unique per function.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <unordered_map>

#include "tessera/ir/Func.h"

namespace tessera::script {

/// A whole module: a bare prim_func when it holds one function, else an
/// `@I.ir_module class Module:`. Throws InternalError on malformed IR only.
std::string print(const ir::Module &m);
/// One function in canonical form, with the `# from tvm.script ...` header.
std::string print(const ir::PrimFunc &f);

/// Options for printing one function with notes for a reader (schedule error
/// reports). The output is still valid TVMScript, only no longer canonical.
struct PrintOptions {
  /// A trailing `# comment` for the line that opens a loop or block, keyed by
  /// the For/Block node. A commented loop is never folded into a T.grid, so
  /// every marked loop gets a line of its own:
  ///   for i in range(128):  # {0}
  std::unordered_map<const ir::StmtNode *, std::string> comments;
};
/// Like print(f), with the extras in `opts`; print(f, {}) == print(f).
std::string print(const ir::PrimFunc &f, const PrintOptions &opts);
/// A statement or expression alone (for messages and debugging); names are
/// the variables' hints, not made unique.
std::string print(const ir::Stmt &s);
std::string print(const ir::Expr &e);

}  // namespace tessera::script
