//===- tests/codegen/Kernels.h - The scheduled test kernels ----------------===//
//
// The corpus of scheduled programs in tests/codegen/kernels/*.py that the
// codegen tests (goldens), the nvrtc tests (compile for sm_80/sm_90) and the
// gpu tests (run against the interpreter) all iterate over.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/script/Parser.h"
#include "tessera/support/DataPaths.h"

namespace tessera::test {

inline const std::filesystem::path &codegen_test_dir() {
  static const std::filesystem::path dir = tessera::support::data_root() / "tests" / "codegen";
  return dir;
}

/// The stems of kernels/*.py, sorted.
inline std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto &e : std::filesystem::directory_iterator(codegen_test_dir() / "kernels"))
    if (e.path().extension() == ".py") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

inline std::string read_text_file(const std::filesystem::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// kernels/<name>.py, parsed.
inline ir::PrimFunc load_kernel(const std::string &name) {
  return script::parse_func(read_text_file(codegen_test_dir() / "kernels" / (name + ".py")), name + ".py");
}

}  // namespace tessera::test
