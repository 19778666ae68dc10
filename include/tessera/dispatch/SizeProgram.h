//===- tessera/dispatch/SizeProgram.h - Launch extents without the IR -------===//
//
// A kernel's grid is an expression of the symbolic sizes (`(m + 127) // 128`).
// A dynamic kernel evaluates it on every launch, so it is compiled once (by
// tuning::compile_size_program, from the IR) into a flat postfix program over
// integer slots, one per symbol, stored as JSON beside the cubin and
// evaluated with no allocation and no IR:
//
//   SizeProgram p = tuning::compile_size_program(grid_x, {"m"});   // (m + 127) // 128
//   int64_t values[] = {37};
//   p.eval(values);   // 1
//   p.to_json();      // [["sym", 0], ["const", 127], "add", ["const", 128], "floordiv"]
//
// Integer constants, the symbols, + - * // % (floor), min, max, and C
// division and remainder.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace tessera::dispatch {

/// JSON as tessera writes it (objects keep their field order).
using Json = nlohmann::ordered_json;

class SizeProgram {
 public:
  enum class Op : int8_t { Const, Sym, Add, Sub, Mul, FloorDiv, FloorMod, Div, Mod, Min, Max };
  /// One step: Const pushes `arg`, Sym pushes symbol slot `arg`, the others
  /// pop two values and push the result.
  struct Step {
    Op op;
    int64_t arg = 0;
  };
  /// The deepest stack a program may need.
  static constexpr int kMaxDepth = 32;

  static SizeProgram constant(int64_t v);
  /// The program of `steps` (postfix) over `symbols` slots. UserError when
  /// it does not leave exactly one value, needs more than kMaxDepth values
  /// at once, or names a slot past `symbols`.
  static SizeProgram from_steps(std::vector<Step> steps, size_t symbols);

  /// The value at `values` (one per symbol slot). Division by zero gives 0.
  int64_t eval(const int64_t *values) const;
  /// The slot when the program is one symbol alone, else -1.
  int symbol() const;
  /// The value when the program uses no symbol.
  std::optional<int64_t> constant_value() const;

  Json to_json() const;
  /// UserError for malformed JSON or a symbol slot past `symbols` (a damaged
  /// file is never trusted).
  static SizeProgram from_json(const Json &j, size_t symbols);

 private:
  std::vector<Step> steps_;
};

}  // namespace tessera::dispatch
