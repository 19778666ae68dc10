//===- tessera/runtime/Interpreter.h - The reference interpreter -----------===//
//
// Executes any PrimFunc on host arrays: the numeric oracle for every later
// transformation. Scheduled programs run too (thread-bound, parallel,
// vectorized and unrolled loops run serially; blocks evaluate their bindings,
// predicate, and init on the first iteration of their reduce iter vars).
//
// Semantics are exact per dtype: float16/bfloat16 results are rounded to
// nearest-even after every operation, float32 arithmetic is done in float,
// integers wrap around at their width, `//` and `%` are floor division and
// modulo, truncdiv/truncmod truncate. Symbolic shape variables are bound from
// the argument arrays' shapes (a mismatch is an error).
//
// Errors (InterpretError) name the buffer, the index and the statement:
//   "out-of-bounds store to B[128] (shape [128]) in block 'B' ..."
//   "division by zero in block 'C': floordiv(i, n) with n = 0"
// never undefined behaviour.
//
// The program is compiled once into closures (no tree walk per element), so a
// 256x256x256 float32 matmul runs in well under a second.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/support/Error.h"

namespace tessera::runtime {

/// A runtime error in an interpreted program (out of bounds, division by zero,
/// unbound or inconsistent symbolic dimension, wrong argument count/type).
class InterpretError : public UserError {
 public:
  using UserError::UserError;
};

/// A PrimFunc compiled for the interpreter; compile once, run many times.
class Interpreter {
 public:
  explicit Interpreter(const ir::PrimFunc &f);
  ~Interpreter();
  Interpreter(Interpreter &&) noexcept;
  Interpreter &operator=(Interpreter &&) noexcept;

  /// Runs the function. `args` has one entry per parameter, in order: an
  /// NDArray for each buffer parameter (modified in place), and for a scalar
  /// parameter a 0-d NDArray holding its value.
  void run(std::vector<NDArray *> args) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Values for symbolic shape variables, by name: {"n": 64}.
using DimBindings = std::map<std::string, int64_t>;

/// Allocates one array per parameter of `f` with shapes resolved from `dims`
/// (an unbound symbolic dimension is an InterpretError naming it), filled by
/// NDArray::fill_random from `seed`. Scalar parameters get the value of the
/// dim of the same name if any, else a random small positive value.
std::vector<NDArray> make_random_args(const ir::PrimFunc &f, const DimBindings &dims, uint64_t seed);

/// Convenience: interprets `f` on `args` (see Interpreter::run).
void interpret(const ir::PrimFunc &f, std::vector<NDArray> &args);

}  // namespace tessera::runtime
