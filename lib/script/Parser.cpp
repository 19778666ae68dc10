//===- Parser.cpp - The public TVMScript parsing entry points --------------===//
#include "tessera/script/Parser.h"

#include <fstream>
#include <sstream>

#include "Ast.h"
#include "Builder.h"

namespace tessera::script {

ir::Module parse_module(std::string_view text, std::string_view file) {
  detail::SourceFile src(text, file);
  detail::PyBody ast = detail::parse_python(src);
  detail::Builder builder(src);
  try {
    return builder.build_module(ast);
  } catch (const InternalError &e) {
    // The builder type-checks before calling IR factories; this is a safety
    // net so that bad text still gives a ParseError with a position.
    std::string what = e.what();
    if (auto k = what.find("check '"); k != std::string::npos) what = what.substr(k);
    src.fail(builder.last_pos(), "ill-formed program: " + what);
  }
}

ir::PrimFunc parse_func(std::string_view text, std::string_view file) {
  ir::Module m = parse_module(text, file);
  if (m.funcs.size() != 1) {
    detail::SourceFile src(text, file);
    src.fail({1, 1}, "expected exactly one function, found " + std::to_string(m.funcs.size()));
  }
  return m.funcs[0];
}

ir::Module parse_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError("cannot open TVMScript file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_module(ss.str(), path);
}

}  // namespace tessera::script
