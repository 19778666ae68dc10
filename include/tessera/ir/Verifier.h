//===- tessera/ir/Verifier.h - Well-formedness checks ----------------------===//
//
// The verifier reports ill-formed IR that the node factories cannot see
// locally. It checks, in one walk (scalar parameters and the symbolic shape
// variables of parameter buffers are defined for the whole function):
//   - a variable used outside the scope that defines it, or never defined;
//   - a variable defined twice anywhere in the function (two loops, iter vars
//     or lets sharing one Var node, or shadowing a parameter);
//   - a load, store, reads region or writes region of a buffer that is
//     neither a parameter buffer nor allocated by an enclosing block; a
//     buffer allocated twice;
//   - a block whose iter vars and bindings differ in number;
//   - a block's iter var used in its own bindings, domains or predicate, and
//     a loop variable used in its own loop's min or extent;
//   - reads/writes regions, loads or stores with the wrong number of
//     dimensions; a store whose value type differs from the buffer's;
//   - a thread-bound loop without a thread tag (or a tag on another kind);
//   - a loop variable, min or extent that is not an integer;
//   - a block iter var whose type or domain is not an integer; a non-bool
//     block predicate;
//   - an init statement on a block without reduction iter vars;
//   - several blocks with the same name in one function (schedules look
//     blocks up by name).
// Every problem is reported; none throws halfway. Messages name the function,
// the innermost block and loop, and the object:
//   in function 'main', block 'C', loop 'k': variable 'vi' is used outside
//   the loop that defines it
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/support/Error.h"

namespace tessera::ir {

/// Thrown by check_well_formed: the message lists every problem, one per line.
class IllFormedError : public InternalError {
 public:
  IllFormedError(const std::string &msg, std::vector<std::string> problems)
      : InternalError(msg), problems(std::move(problems)) {}
  std::vector<std::string> problems;
};

/// Every problem found in `f`, each a one-line message naming the function,
/// the block or loop and the object ("in block 'C': variable 'k' is used
/// outside the loop that defines it"). Empty when well formed.
std::vector<std::string> verify(const PrimFunc &f);

/// Throws IllFormedError when verify(f) finds anything.
void check_well_formed(const PrimFunc &f);

}  // namespace tessera::ir
