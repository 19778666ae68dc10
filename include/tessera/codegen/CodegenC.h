//===- tessera/codegen/CodegenC.h - C-like source printer (base) ------------===//
//
// CodegenC prints lowered IR (see tessera/lower/Lower.h) as C: expressions
// with C precedence and the fewest parentheses that keep them unambiguous,
// one statement per line, names taken from the program and made valid and
// unique C identifiers (`i.outer` -> `i_outer`, a clash -> `i_1`; loop
// variables are scoped, so sibling loops may share a name). Target printers
// (CodegenCUDA) derive and override the hooks: type names, constants, casts,
// intrinsics, loop pragmas. Integer floor division and modulo that lowering
// could not turn into C's `/` and `%` call `floordiv`/`floormod` helpers,
// which are emitted only when used.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tessera/lower/Lower.h"

namespace tessera::codegen {

/// A lowered program that this code generator cannot express (an unsupported
/// dtype or intrinsic); the message names the construct.
class CodegenError : public UserError {
 public:
  explicit CodegenError(const std::string &msg) : UserError(msg) {}
};

class CodegenC {
 public:
  virtual ~CodegenC() = default;

 protected:
  /// Printed code and its C precedence (higher binds tighter; 16 = atom).
  struct Code {
    std::string text;
    int prec;
  };
  static constexpr int kAtom = 16, kUnary = 15, kTernary = 3;

  // Names.
  /// The C name of a variable (first use picks it).
  std::string name_of(const ir::Var &v);
  /// The C name of a buffer.
  std::string name_of(const ir::Buffer &b);
  /// Reserves `name` for `v` exactly (launch variables: `tx`, `bx`).
  void reserve(const ir::Var &v, const std::string &name);
  std::string fresh(const std::string &hint);

  // Expressions.
  std::string expr(const ir::Expr &e) { return print(e).text; }
  Code print(const ir::Expr &e);
  /// `e` printed to stand as an operand that needs at least precedence `prec`.
  std::string operand(const ir::Expr &e, int prec);
  virtual std::string type_name(ir::DataType t);
  virtual Code int_imm(ir::DataType t, int64_t v);
  virtual Code float_imm(ir::DataType t, double v);
  virtual Code cast(ir::DataType to, const ir::Expr &value);
  virtual Code call(const ir::Call &c);
  /// `round_to_tf32(x)` of a float32, defining its helper.
  Code round_to_tf32(const ir::Expr &x);
  virtual Code min_max(bool is_min, const ir::Expr &a, const ir::Expr &b);
  Code binary(const ir::Binary &b);

  // Statements.
  void stmt(const ir::Stmt &s);
  virtual void evaluate(const ir::Expr &e);
  /// Lines before a loop (`#pragma unroll`).
  virtual void loop_pragma(const ir::For &f);
  /// Prints a `T.vectorized` loop, which lowering leaves only as one vector
  /// move (lower::legalize_vectorize), as one statement; false to print it as
  /// a plain loop (the default).
  virtual bool vector_move(const ir::For &f);
  void line(const std::string &s);
  /// Helper functions used so far, in emission order (name -> definition).
  std::string helper_definitions() const;

  std::ostringstream body_;
  int indent_ = 1;
  std::set<std::string> helpers_;

 private:
  Code floor_div_mod(const ir::Binary &b);
  std::unordered_map<const void *, std::string> names_;
  std::unordered_set<std::string> used_;
};

}  // namespace tessera::codegen
