//===- tessera/ir/Verifier.h - Well-formedness checks ----------------------===//
//
// The verifier reports ill-formed IR that the node factories cannot see
// locally, for example:
//   - a variable used outside the scope that defines it (undefined variable);
//   - a variable defined twice (two loops or iter vars sharing one Var node);
//   - a load or store of a buffer that is neither a parameter buffer nor
//     allocated by an enclosing block;
//   - a block binding arity mismatch, or a reduction block iter var bound in a
//     block without init where one is required (reported as a warning-free
//     error only for arity);
//   - a block's iter var used in its bindings, or a loop variable of an inner
//     loop used in an outer block binding;
//   - a non-bool predicate, a thread-bound loop without a thread tag;
//   - reads/writes regions with the wrong number of dimensions.
// Every problem is reported; none throws halfway.
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
