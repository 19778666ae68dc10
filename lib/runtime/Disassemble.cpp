//===- Disassemble.cpp - Finding and running cuobjdump -sass ---------------===//
//
// cuobjdump is an optional external program: it is looked for on every call
// (a handful of stat calls) and run on a temporary copy of the cubin with a
// deadline (Process.h).
//
//===----------------------------------------------------------------------===//
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "Process.h"

#include "tessera/runtime/Sass.h"
#include "tessera/support/DataPaths.h"

namespace tessera::runtime {

namespace fs = std::filesystem;

namespace {

bool is_executable(const fs::path &p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

/// <root>/.deps/cuda-tools/nvidia/cu*/bin/cuobjdump, the newest CUDA major first.
std::optional<fs::path> project_local(const fs::path &root) {
  std::error_code ec;
  fs::path nvidia = root / ".deps" / "cuda-tools" / "nvidia";
  std::vector<fs::path> found;
  for (fs::directory_iterator it(nvidia, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().starts_with("cu") && is_executable(it->path() / "bin" / "cuobjdump"))
      found.push_back(it->path() / "bin" / "cuobjdump");
  if (found.empty()) return std::nullopt;
  // "cu13" < "cu14"; lengths differ only past cu99.
  std::sort(found.begin(), found.end());
  return found.back();
}

std::optional<fs::path> on_path() {
  const char *path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::string_view rest(path);
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string_view dir = rest.substr(0, colon);
    rest.remove_prefix(colon == std::string_view::npos ? rest.size() : colon + 1);
    if (!dir.empty() && is_executable(fs::path(dir) / "cuobjdump")) return fs::path(dir) / "cuobjdump";
  }
  return std::nullopt;
}

}  // namespace

std::optional<fs::path> find_disassembler() {
  if (const char *env = std::getenv("TESSERA_CUOBJDUMP"); env && *env) {
    if (is_executable(env)) return fs::path(env);
    return std::nullopt;
  }
  try {
    if (auto p = project_local(support::data_root())) return p;
  } catch (const std::exception &) {
    // A bad $TESSERA_HOME is reported where data is needed, not here.
  }
  if (auto p = on_path()) return p;
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *home = std::getenv(var);
        home && *home && is_executable(fs::path(home) / "bin" / "cuobjdump"))
      return fs::path(home) / "bin" / "cuobjdump";
  if (is_executable("/usr/local/cuda/bin/cuobjdump")) return fs::path("/usr/local/cuda/bin/cuobjdump");
  return std::nullopt;
}

std::string disassemble(const std::vector<uint8_t> &cubin, const fs::path &tool, double timeout_s) {
  if (cubin.empty()) throw DisassembleError("cannot disassemble an empty cubin");
  detail::TempFile file(cubin, ".cubin");
  detail::ProcessResult f = detail::run_process({tool.string(), "-sass", file.path()}, timeout_s);
  std::string failure = detail::process_failure(tool.string() + " -sass " + file.path(), f, timeout_s);
  if (!failure.empty()) throw DisassembleError(failure);
  return f.out;
}

std::string disassemble(const std::vector<uint8_t> &cubin) {
  std::optional<fs::path> tool = find_disassembler();
  if (!tool) throw DisassembleError(std::string(kNoDisassemblerHint));
  return disassemble(cubin, *tool);
}

}  // namespace tessera::runtime
