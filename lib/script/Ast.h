//===- Ast.h - The Python syntax tree of a TVMScript file -------*- C++ -*-===//
//
// Private to lib/script. Parsing is two steps: the syntax parser turns tokens
// into this small Python AST (every node keeps its position), then the IR
// builder (Builder.h) gives the AST its TVMScript meaning. Keeping them apart
// lets the builder look ahead freely (a block's T.reads before its body) and
// report semantic errors at the exact sub-expression.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Source.h"

namespace tessera::script::detail {

struct PyExpr;
using PyExprPtr = std::unique_ptr<PyExpr>;

enum class PyExprKind : uint8_t {
  Name,       ///< name
  Int,        ///< int_value
  Float,      ///< float_value
  Str,        ///< name holds the string
  Bool,       ///< int_value 0/1
  None,       ///< None
  Attr,       ///< base.name
  Call,       ///< base(args..., kwargs...)
  Subscript,  ///< base[args...]; `A[()]` has no args
  Slice,      ///< args = {lo, hi, step}, each may be null
  Tuple,      ///< args
  List,       ///< args
  Dict,       ///< args = {k0, v0, k1, v1, ...}
  BinOp,      ///< args[0] op args[1]; op is the Python spelling
  UnaryOp,    ///< op args[0]; op is "-", "+", "~" or "not"
  Compare,    ///< args[0] ops[0] args[1] ops[1] args[2] ...
  BoolOp,     ///< args[0] op args[1] ...; op is "and" / "or"
  IfExp,      ///< args = {then, cond, else}
  Starred,    ///< *args[0]: argument unpacking, in a call's arguments only
};

struct PyExpr {
  PyExprKind kind;
  Pos pos;
  std::string name;
  std::string op;
  std::vector<std::string> ops;
  int64_t int_value = 0;
  double float_value = 0;
  PyExprPtr base;
  std::vector<PyExprPtr> args;
  std::vector<std::pair<std::string, PyExprPtr>> kwargs;
  /// Position of each keyword argument's name.
  std::vector<Pos> kwarg_pos;
};

struct PyStmt;
using PyStmtPtr = std::unique_ptr<PyStmt>;
using PyBody = std::vector<PyStmtPtr>;

enum class PyStmtKind : uint8_t {
  Expr,       ///< value
  Assign,     ///< target = value
  AugAssign,  ///< target op= value (op without '=')
  AnnAssign,  ///< target: annotation [= value]
  For,        ///< for target in value: body
  With,       ///< with value [as target]: body
  If,         ///< if value: body [else: orelse]  (elif is a nested If in orelse)
  FuncDef,    ///< decorators def name(params) [-> annotation]: body
  ClassDef,   ///< decorators class name: body
  Pass,
  Return,     ///< return [value]
  Import,     ///< import/from lines: ignored
};

struct PyParam {
  std::string name;
  Pos pos;
  PyExprPtr annotation;
};

struct PyStmt {
  PyStmtKind kind;
  Pos pos;
  std::string name;
  std::string op;
  PyExprPtr target, value, annotation;
  PyBody body, orelse;
  std::vector<PyExprPtr> decorators;
  std::vector<PyParam> params;
  /// A function read no further than its decorators and name: a Relax
  /// function (`@R.function`) beside the prim_funcs of a printed module.
  bool skipped = false;
};

/// Parses a whole file into statements. Syntax errors throw ParseError.
PyBody parse_python(const SourceFile &src);

}  // namespace tessera::script::detail
