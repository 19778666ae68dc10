//===- lib/runtime/KernelCache.cpp - Compiled cubins kept on disk ----------===//
#include "tessera/runtime/KernelCache.h"

#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tessera/runtime/NVRTC.h"
#include "tessera/support/DataPaths.h"
#include "tessera/support/Error.h"

namespace tessera::runtime {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

/// Two independent 64-bit hashes of `bytes` (FNV-1a and a multiply-rotate
/// mix), each finished by splitmix64: 128 bits, as 32 hex digits.
std::string hash128(const void *data, size_t n) {
  const auto *p = static_cast<const unsigned char *>(data);
  uint64_t a = 0xcbf29ce484222325ull, b = 0x9e3779b97f4a7c15ull ^ n;
  for (size_t i = 0; i < n; ++i) {
    a = (a ^ p[i]) * 0x100000001b3ull;
    b = (b + p[i] + 1) * 0xff51afd7ed558ccdull;
    b = (b << 29) | (b >> 35);
  }
  auto finish = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  char out[33];
  std::snprintf(out, sizeof out, "%016llx%016llx", static_cast<unsigned long long>(finish(a)),
                static_cast<unsigned long long>(finish(b)));
  return out;
}

std::optional<std::string> read_whole(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return s.str();
}

/// Writes `bytes` to a unique temporary file beside `to`, then renames it
/// over `to` (atomic within one file system). Throws on failure, leaving no
/// temporary file behind.
void write_atomically(const fs::path &to, const std::string &bytes) {
  static std::atomic<uint64_t> counter{0};
  std::ostringstream name;
  name << to.filename().string() << ".tmp." << ::getpid() << "." << std::this_thread::get_id() << "."
       << counter.fetch_add(1);
  fs::path tmp = to.parent_path() / name.str();
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw UserError("cannot write " + tmp.string());
    }
  }
  std::error_code ec;
  fs::rename(tmp, to, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw UserError("cannot rename a cache entry into " + to.string());
  }
}

/// "sm_90": a safe directory name (anything else is replaced).
std::string arch_dir(const std::string &arch) {
  std::string s = arch.empty() ? "unknown" : arch;
  for (char &c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return s;
}

}  // namespace

KernelCache::KernelCache(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (!fs::is_directory(dir_))
    throw UserError("kernel cache: cannot use '" + dir_.string() + "' as a directory" +
                    (ec ? " (" + ec.message() + ")" : std::string()));
}

fs::path KernelCache::default_dir() {
  return support::user_cache_path("TESSERA_CACHE", "kernels", fs::temp_directory_path() / "tessera-kernels");
}

std::string KernelCache::digest(const std::string &material) { return hash128(material.data(), material.size()); }

fs::path KernelCache::entry(const std::string &arch, const std::string &key, const char *ext) const {
  return dir_ / arch_dir(arch) / (key + ext);
}

std::optional<CompileResult> KernelCache::load(const std::string &key, const std::string &arch) {
  std::optional<std::string> side = read_whole(entry(arch, key, ".json"));
  if (!side) {
    ++misses_;
    return std::nullopt;
  }
  // Anything unexpected from here on is an entry that cannot be trusted.
  auto reject = [&]() -> std::optional<CompileResult> {
    ++rejected_;
    ++misses_;
    return std::nullopt;
  };
  Json j = Json::parse(*side, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return reject();
  std::optional<std::string> cubin = read_whole(entry(arch, key, ".cubin"));
  try {
    if (!cubin || j.at("key") != key || j.at("arch") != arch ||
        j.at("cubin_bytes").get<size_t>() != cubin->size() || j.at("cubin_digest") != hash128(cubin->data(), cubin->size()) ||
        cubin->size() < 4 || cubin->compare(0, 4, "\x7f" "ELF") != 0)
      return reject();
    CompileResult r;
    r.name = j.at("name").get<std::string>();
    r.arch = arch;
    r.cubin.assign(cubin->begin(), cubin->end());
    r.ptx = j.at("ptx").get<std::string>();
    r.log = j.at("log").get<std::string>();
    r.kernels = parse_ptxas_log(r.log);
    r.compile_ms = 0;
    r.from_cache = true;
    ++hits_;
    return r;
  } catch (const std::exception &) {
    return reject();
  }
}

void KernelCache::store(const std::string &key, const CompileResult &r) {
  try {
    fs::create_directories(dir_ / arch_dir(r.arch));
    std::string cubin(r.cubin.begin(), r.cubin.end());
    Json j = {{"key", key},
              {"arch", r.arch},
              {"name", r.name},
              {"cubin_bytes", cubin.size()},
              {"cubin_digest", hash128(cubin.data(), cubin.size())},
              {"ptx", r.ptx},
              {"log", r.log},
              {"compile_ms", r.compile_ms}};
    // The cubin first: a sidecar never names a cubin that is not there.
    write_atomically(entry(r.arch, key, ".cubin"), cubin);
    write_atomically(entry(r.arch, key, ".json"), j.dump(1) + "\n");
    ++stores_;
  } catch (const std::exception &) {
    ++store_failures_;
  }
}

void KernelCache::store_file(const std::string &name, const std::string &bytes) const {
  fs::path to = dir_ / name;
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  write_atomically(to, bytes);
}

std::optional<std::string> KernelCache::read_file(const std::string &name) const {
  return read_whole(dir_ / name);
}

KernelCache::Counters KernelCache::counters() const {
  return {hits_.load(), misses_.load(), rejected_.load(), stores_.load(), store_failures_.load()};
}

}  // namespace tessera::runtime
