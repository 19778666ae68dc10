//===- tessera/tune/SizeProgram.h - Launch extents without the IR -----------===//
//
// A kernel's grid is an expression of the symbolic sizes (`(m + 127) // 128`).
// A dynamic kernel evaluates it on every launch, so it is compiled once into
// a flat program over integer slots (one per symbol), stored as JSON beside
// the cubin, and evaluated with no allocation and no IR:
//
//   SizeProgram p = SizeProgram::compile(grid_x, {"m"});
//   int64_t values[] = {37};
//   p.eval(values);   // 1
//
// Integer constants, the symbols, + - * // % (floor), min, max, C division
// and remainder, and casts between integer types; anything else (a load, a
// float) is a UserError naming it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/ir/Expr.h"
#include "tessera/rules/Rule.h"

namespace tessera::tune {

class SizeProgram {
 public:
  /// `e` over the variables named in `symbols` (slot i is symbols[i]).
  static SizeProgram compile(const ir::Expr &e, const std::vector<std::string> &symbols);
  static SizeProgram constant(int64_t v);

  /// The value at `values` (one per symbol slot). Division by zero gives 0.
  int64_t eval(const int64_t *values) const;

  rules::Json to_json() const;
  /// UserError for malformed JSON or a symbol slot past `symbols` (a damaged
  /// file is never trusted).
  static SizeProgram from_json(const rules::Json &j, size_t symbols);

 private:
  enum Op : int8_t { Const, Sym, Add, Sub, Mul, FloorDiv, FloorMod, Div, Mod, Min, Max };
  struct Step {
    Op op;
    int64_t arg;  ///< the constant, or the symbol slot
  };
  static constexpr int kMaxDepth = 32;
  std::vector<Step> steps_;
};

}  // namespace tessera::tune
