//===- Source.h - Source text, positions and ParseError rendering -*- C++ -*-===//
//
// Private to lib/script. A SourceFile owns a copy of the text being parsed and
// renders ParseErrors as
//   FILE:LINE:COL: error: MESSAGE
//   <the source line>
//   <spaces>^
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera::script::detail {

/// A 1-based line and column.
struct Pos {
  int line = 1;
  int col = 1;
};

class SourceFile {
 public:
  SourceFile(std::string_view text, std::string_view file);

  const std::string &text() const { return text_; }
  const std::string &file() const { return file_; }
  /// The text of a 1-based line without its line break ("" when out of range).
  std::string_view line_text(int line) const;

  /// Throws a ParseError at `pos` with `message` (LLVM style: lower-case, no period).
  [[noreturn]] void fail(Pos pos, const std::string &message) const;
  /// "FILE:LINE:COL: warning: message" and the source line with a caret.
  std::string warning(Pos pos, const std::string &message) const;

 private:
  std::string text_;
  std::string file_;
  std::vector<size_t> line_starts_;
};

/// Quotes a token or name for messages: 'x'. Non-printable bytes become \xNN.
std::string quote(std::string_view s);

}  // namespace tessera::script::detail
