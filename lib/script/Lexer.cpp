//===- Lexer.cpp - Python tokens for the TVMScript parser ------------------===//
#include "Lexer.h"

#include <charconv>
#include <cstdlib>
#include <cctype>
#include <cstring>

namespace tessera::script::detail {

std::string describe(const Token &t) {
  switch (t.kind) {
    case TokKind::Newline: return "end of line";
    case TokKind::Indent: return "an indented block";
    case TokKind::Dedent: return "the end of an indented block";
    case TokKind::End: return "end of file";
    case TokKind::String: return "string " + quote(t.text);
    default: return quote(t.text);
  }
}

namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

// Operators, longest first so that maximal munch works by scanning in order.
const char *const kOps[] = {"**=", "//=", ">>=", "<<=", "**", "//", "<<", ">>", "<=", ">=", "==", "!=",
                            "->",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", ":=", "+",  "-",
                            "*",   "/",   "%",   "@",   "&",  "|",  "^",  "~",  "<",  ">",  "(",  ")",
                            "[",   "]",   "{",   "}",   ",",  ":",  ".",  ";",  "="};

class Lexer {
 public:
  explicit Lexer(const SourceFile &src) : src_(src), s_(src.text()) {}

  std::vector<Token> run() {
    indents_.push_back("");
    while (i_ < s_.size()) {
      if (at_line_start_ && brackets_.empty()) {
        if (!handle_line_start()) continue;
      }
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\f') {
        advance();
        continue;
      }
      if (c == '#') {
        skip_comment();
        continue;
      }
      if (c == '\n' || c == '\r') {
        Pos p = pos();
        newline();
        // Inside brackets a line break is whitespace (implicit joining): the
        // next line continues the logical line, whatever its indentation, and
        // so does the text after the closing bracket.
        if (!brackets_.empty()) at_line_start_ = false;
        if (brackets_.empty() && line_open_) {
          emit(TokKind::Newline, p, "");
          line_open_ = false;
        }
        continue;
      }
      if (c == '\\') {
        Pos p = pos();
        advance();
        if (i_ < s_.size() && (s_[i_] == '\n' || s_[i_] == '\r')) {
          newline();
          at_line_start_ = false;  // a joined line does not start a new logical line
          continue;
        }
        src_.fail(p, "unexpected character '\\' (a line continuation must end the line)");
      }
      line_open_ = true;
      if (is_ident_start(c)) {
        lex_name();
      } else if (is_digit(c) || (c == '.' && i_ + 1 < s_.size() && is_digit(s_[i_ + 1]))) {
        lex_number();
      } else if (c == '"' || c == '\'') {
        lex_string();
      } else {
        lex_op();
      }
    }
    Pos end = pos();
    if (!brackets_.empty()) {
      // The parser reports the unclosed bracket against "end of file".
      emit(TokKind::End, end, "");
      return std::move(toks_);
    }
    if (line_open_) emit(TokKind::Newline, end, "");
    while (indents_.size() > 1) {
      indents_.pop_back();
      emit(TokKind::Dedent, end, "");
    }
    emit(TokKind::End, end, "");
    return std::move(toks_);
  }

 private:
  Pos pos() const { return {line_, col_}; }
  void advance() {
    ++i_;
    ++col_;
  }
  void newline() {
    if (s_[i_] == '\r' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') ++i_;
    ++i_;
    ++line_;
    col_ = 1;
    at_line_start_ = true;
  }
  void emit(TokKind k, Pos p, std::string text) {
    Token t;
    t.kind = k;
    t.pos = p;
    t.text = std::move(text);
    toks_.push_back(std::move(t));
  }
  void skip_comment() {
    while (i_ < s_.size() && s_[i_] != '\n' && s_[i_] != '\r') advance();
  }

  // Measures the indentation of a new line and emits INDENT/DEDENT. Returns
  // false when the line was blank or a comment (the caller re-loops).
  bool handle_line_start() {
    size_t begin = i_;
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\f')) advance();
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '#') {
      skip_comment();
      return false;
    }
    if (c == '\n' || c == '\r') {
      newline();
      return false;
    }
    at_line_start_ = false;
    std::string indent(s_.substr(begin, i_ - begin));
    Pos p = pos();
    const std::string &top = indents_.back();
    if (indent == top) return true;
    bool has_tab = indent.find('\t') != std::string::npos || top.find('\t') != std::string::npos;
    bool nested = indent.size() > top.size() ? indent.compare(0, top.size(), top) == 0
                                             : top.compare(0, indent.size(), indent) == 0;
    if (!nested && has_tab) src_.fail(p, "inconsistent use of tabs and spaces in indentation");
    if (indent.size() > top.size()) {
      if (!nested) src_.fail(p, "inconsistent use of tabs and spaces in indentation");
      indents_.push_back(indent);
      emit(TokKind::Indent, p, "");
      return true;
    }
    while (indents_.size() > 1 && indents_.back().size() > indent.size()) {
      indents_.pop_back();
      emit(TokKind::Dedent, p, "");
    }
    if (indents_.back() != indent) {
      if (indents_.back().size() == indent.size())
        src_.fail(p, "inconsistent use of tabs and spaces in indentation");
      src_.fail(p, "unindent does not match any outer indentation level");
    }
    return true;
  }

  void lex_name() {
    Pos p = pos();
    size_t b = i_;
    while (i_ < s_.size() && is_ident_char(s_[i_])) advance();
    std::string name(s_.substr(b, i_ - b));
    if (i_ < s_.size() && (s_[i_] == '"' || s_[i_] == '\'') && (name == "r" || name == "R")) {
      lex_string(/*raw=*/true, p);
      return;
    }
    emit(TokKind::Name, p, std::move(name));
  }

  void lex_number() {
    Pos p = pos();
    size_t b = i_;
    bool is_float = false;
    int base = 10;
    if (s_[i_] == '0' && i_ + 1 < s_.size() && std::strchr("xXbBoO", s_[i_ + 1])) {
      char k = static_cast<char>(s_[i_ + 1] | 0x20);
      base = k == 'x' ? 16 : k == 'b' ? 2 : 8;
      advance();
      advance();
      while (i_ < s_.size() && (std::isxdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) advance();
    } else {
      while (i_ < s_.size() && (is_digit(s_[i_]) || s_[i_] == '_')) advance();
      if (i_ < s_.size() && s_[i_] == '.') {
        is_float = true;
        advance();
        while (i_ < s_.size() && (is_digit(s_[i_]) || s_[i_] == '_')) advance();
      }
      if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
        size_t save = i_;
        int save_col = col_;
        advance();
        if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) advance();
        if (i_ < s_.size() && is_digit(s_[i_])) {
          is_float = true;
          while (i_ < s_.size() && is_digit(s_[i_])) advance();
        } else {
          i_ = save;
          col_ = save_col;
        }
      }
    }
    if (i_ < s_.size() && is_ident_char(s_[i_]))
      src_.fail(pos(), "invalid character " + quote(s_.substr(i_, 1)) + " in number literal");
    std::string text(s_.substr(b, i_ - b));
    std::string digits;
    for (char c : text)
      if (c != '_') digits += c;
    Token t;
    t.pos = p;
    t.text = text;
    if (is_float) {
      t.kind = TokKind::Float;
      t.float_value = std::strtod(digits.c_str(), nullptr);
    } else {
      t.kind = TokKind::Int;
      const char *first = digits.c_str() + (base == 10 ? 0 : 2);
      const char *last = digits.c_str() + digits.size();
      uint64_t v = 0;
      auto [ptr, ec] = std::from_chars(first, last, v, base);
      if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > static_cast<uint64_t>(INT64_MAX)))
        src_.fail(p, "integer literal " + text + " does not fit in int64");
      if (ec != std::errc() || ptr != last) src_.fail(p, "malformed number literal " + quote(text));
      t.int_value = static_cast<int64_t>(v);
    }
    toks_.push_back(std::move(t));
  }

  void lex_string(bool raw = false, Pos p = {0, 0}) {
    if (p.line == 0) p = pos();
    char q = s_[i_];
    bool triple = i_ + 2 < s_.size() && s_[i_ + 1] == q && s_[i_ + 2] == q;
    int n = triple ? 3 : 1;
    for (int k = 0; k < n; ++k) advance();
    std::string value;
    while (true) {
      if (i_ >= s_.size()) src_.fail(p, "unterminated string literal");
      char c = s_[i_];
      if (c == q && (!triple || (i_ + 2 < s_.size() && s_[i_ + 1] == q && s_[i_ + 2] == q))) {
        for (int k = 0; k < n; ++k) advance();
        break;
      }
      if (c == '\n' || c == '\r') {
        if (!triple) src_.fail(p, "unterminated string literal");
        value += '\n';
        newline();
        at_line_start_ = false;
        continue;
      }
      if (c == '\\' && !raw && i_ + 1 < s_.size()) {
        advance();
        char e = s_[i_];
        switch (e) {
          case 'n': value += '\n'; break;
          case 't': value += '\t'; break;
          case 'r': value += '\r'; break;
          case '0': value += '\0'; break;
          case '\\': value += '\\'; break;
          case '\'': value += '\''; break;
          case '"': value += '"'; break;
          case '\n':
          case '\r':
            newline();
            at_line_start_ = false;
            continue;
          default:
            value += '\\';
            value += e;
        }
        advance();
        continue;
      }
      value += c;
      advance();
    }
    Token t;
    t.kind = TokKind::String;
    t.pos = p;
    t.text = std::move(value);
    toks_.push_back(std::move(t));
  }

  void lex_op() {
    Pos p = pos();
    for (const char *op : kOps) {
      size_t n = std::strlen(op);
      if (s_.compare(i_, n, op) != 0) continue;
      for (size_t k = 0; k < n; ++k) advance();
      std::string text(op);
      if (text == "(" || text == "[" || text == "{") {
        brackets_.push_back(text[0]);
      } else if (text == ")" || text == "]" || text == "}") {
        // Mismatches are the parser's to report; the lexer only tracks depth.
        if (!brackets_.empty()) brackets_.pop_back();
      }
      emit(TokKind::Op, p, std::move(text));
      return;
    }
    src_.fail(p, "unexpected character " + quote(s_.substr(i_, 1)));
  }

  const SourceFile &src_;
  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  bool at_line_start_ = true;
  bool line_open_ = false;
  std::vector<std::string> indents_;
  std::vector<char> brackets_;
  std::vector<Token> toks_;
};

}  // namespace

std::vector<Token> tokenize(const SourceFile &src) { return Lexer(src).run(); }

}  // namespace tessera::script::detail
