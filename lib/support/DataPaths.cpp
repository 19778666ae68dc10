//===- lib/support/DataPaths.cpp - Where tessera finds its data files ------===//
#include "tessera/support/DataPaths.h"

#include <cstdlib>
#include <system_error>

#include "tessera/support/Error.h"

namespace tessera::support {

namespace fs = std::filesystem;

namespace {

struct Roots {
  fs::path data;
  std::string origin;
};

bool has_arch(const fs::path &dir) {
  std::error_code ec;
  return fs::is_directory(dir / "arch", ec);
}

Roots find_roots() {
  if (const char *home = std::getenv("TESSERA_HOME"); home && *home) {
    fs::path root(home);
    if (!has_arch(root))
      throw UserError("TESSERA_HOME='" + root.string() + "' has no arch/ folder (unset it to use the source tree)");
    return {root, "TESSERA_HOME"};
  }
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path prefix = exe.parent_path().parent_path();
    if (has_arch(prefix / "data")) return {prefix / "data", "bundle"};
    if (has_arch(prefix / "share" / "tessera")) return {prefix / "share" / "tessera", "install"};
  }
  return {fs::path(TESSERA_SOURCE_DIR), "source tree"};
}

const Roots &roots() {
  static const Roots r = find_roots();
  return r;
}

}  // namespace

const fs::path &data_root() { return roots().data; }
std::string data_root_origin() { return roots().origin; }

fs::path user_cache_path(const char *override_env, const std::string &leaf, const fs::path &fallback) {
  if (const char *p = std::getenv(override_env); p && *p) return p;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "tessera" / leaf;
  if (const char *h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "tessera" / leaf;
  return fallback;
}

}  // namespace tessera::support
