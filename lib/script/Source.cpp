//===- Source.cpp - Source text and ParseError rendering -------------------===//
#include "Source.h"

#include <cstdio>

#include "tessera/script/Parser.h"

namespace tessera::script::detail {

SourceFile::SourceFile(std::string_view text, std::string_view file) : text_(text), file_(file) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    // "\r\n" counts as one break; a lone '\r' is a break too (as in Python).
    if (text_[i] == '\r' && i + 1 < text_.size() && text_[i + 1] == '\n') continue;
    if (text_[i] == '\n' || text_[i] == '\r') line_starts_.push_back(i + 1);
  }
}

std::string_view SourceFile::line_text(int line) const {
  if (line < 1 || line > static_cast<int>(line_starts_.size())) return {};
  size_t begin = line_starts_[line - 1];
  size_t end = begin;
  while (end < text_.size() && text_[end] != '\n' && text_[end] != '\r') ++end;
  return std::string_view(text_).substr(begin, end - begin);
}

namespace {

std::string render(const SourceFile &f, Pos pos, const char *kind, const std::string &message) {
  std::string rendered = f.file() + ":" + std::to_string(pos.line) + ":" + std::to_string(pos.col) + ": " + kind +
                         ": " + message;
  std::string_view src = f.line_text(pos.line);
  rendered += "\n";
  rendered += src;
  rendered += "\n";
  // The caret line copies tabs so the caret lines up under any tab width.
  for (int i = 0; i + 1 < pos.col; ++i)
    rendered += (static_cast<size_t>(i) < src.size() && src[i] == '\t') ? '\t' : ' ';
  rendered += "^";
  return rendered;
}

}  // namespace

void SourceFile::fail(Pos pos, const std::string &message) const {
  throw ParseError(file_, pos.line, pos.col, message, render(*this, pos, "error", message));
}

std::string SourceFile::warning(Pos pos, const std::string &message) const {
  return render(*this, pos, "warning", message);
}

std::string quote(std::string_view s) {
  std::string out = "'";
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out + "'";
}

}  // namespace tessera::script::detail
