//===- tests/tune/TuneTestUtil.cpp ------------------------------------------===//
#include "TuneTestUtil.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/rules/Elementwise.h"
#include "tessera/script/Parser.h"

namespace tessera::test {

std::string add_source(const AddSpec &s) {
  std::string rows = s.symbolic_rows ? "rows" : std::to_string(s.rows);
  std::string decl = s.symbolic_rows ? "    rows = T.int32()\n" : "";
  return fmt::format(
      "@T.prim_func\n"
      "def {func}(a: T.handle, b: T.handle, c: T.handle):\n"
      "    T.func_attr({{\"global_symbol\": \"{func}\", \"{noalias}\": True}})\n"
      "{decl}"
      "    {A} = T.match_buffer(a, ({rows}, {cols}), \"{dtype}\")\n"
      "    {B} = T.match_buffer(b, ({rows}, {cols}), \"{dtype}\")\n"
      "    {C} = T.match_buffer(c, ({rows}, {cols}), \"{dtype}\")\n"
      "    for {i}, {j} in T.grid({rows}, {cols}):\n"
      "        with T.block(\"C\"):\n"
      "            {vi}, {vj} = T.axis.remap(\"SS\", [{i}, {j}])\n"
      "            {C}[{vi}, {vj}] = {A}[{vi}, {vj}] {op} {B}[{vi}, {vj}]\n",
      fmt::arg("func", s.func), fmt::arg("noalias", s.noalias), fmt::arg("decl", decl), fmt::arg("A", s.a),
      fmt::arg("B", s.b), fmt::arg("C", s.c), fmt::arg("rows", rows), fmt::arg("cols", s.cols),
      fmt::arg("dtype", s.dtype), fmt::arg("i", s.i), fmt::arg("j", s.j), fmt::arg("vi", s.vi),
      fmt::arg("vj", s.vj), fmt::arg("op", s.op));
}

ir::PrimFunc add_func(const AddSpec &spec) {
  return script::parse_func(add_source(spec), spec.func + ".py");
}

ScratchDir::ScratchDir() {
  std::string pattern = ::testing::TempDir() + "tessera_tune_XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::file(const std::string &name) const {
  return path_ + "/" + name;
}

tuning::Record ok_record(const tuning::TuningKey &key, int64_t threads, double time_us) {
  rules::ElementwiseConfig config;
  config.threads = threads;
  return tuning::Record{.key = key, .rule = "elementwise", .config = config.to_json(), .time_us = time_us};
}

std::string read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void append_text(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << text;
}

}  // namespace tessera::test
