//===- Lexer.h - Python tokens for the TVMScript parser ---------*- C++ -*-===//
//
// Private to lib/script. Splits TVMScript (a Python subset) into tokens with
// Python's layout rules: NEWLINE ends a logical line, INDENT/DEDENT bracket
// blocks, line breaks inside (), [] and {} and after a backslash are joined,
// blank and comment-only lines are skipped. Tabs and spaces may be mixed only
// consistently: each line's indentation must extend, or equal, an enclosing
// line's indentation string.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "Source.h"

namespace tessera::script::detail {

enum class TokKind : uint8_t { Name, Int, Float, String, Op, Newline, Indent, Dedent, End };

struct Token {
  TokKind kind = TokKind::End;
  Pos pos;
  /// The spelling (names, operators, number text); the decoded value for strings.
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;

  bool is_op(const char *op) const { return kind == TokKind::Op && text == op; }
  bool is_name(const char *name) const { return kind == TokKind::Name && text == name; }
};

/// Tokenises the whole file; lexical errors throw ParseError. The result ends
/// with NEWLINE (when a line is open), the closing DEDENTs and End.
std::vector<Token> tokenize(const SourceFile &src);

/// How a token is described in "found ..." messages: 'x', newline, end of file.
std::string describe(const Token &t);

}  // namespace tessera::script::detail
