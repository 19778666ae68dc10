//===- tessera/runtime/KernelCache.h - Compiled cubins kept on disk ---------===//
//
// NVRTC is 97-99% of a tune on the CPU side; the same kernel compiled again
// (a second `tessera tune` of a function, the next start of an application)
// should cost a file read. A KernelCache is a directory of cubins, one per
// compile, each found by a key over everything that decides the cubin:
//
//   the CUDA source, every NVRTC option (tessera's own, the include paths,
//   the target, the caller's), whether PTX was asked for, the NVRTC version
//   and tessera's version.
//
// The source is part of the key, so a change anywhere upstream (a rule, the
// lowering, the code generator) can never return a stale cubin. Layout:
//
//   <dir>/<sm_90>/<key>.cubin   the ELF image
//   <dir>/<sm_90>/<key>.json    {"key", "arch", "name", "cubin_bytes",
//                                "cubin_digest", "ptx", "log", "compile_ms"}
//
// Entries are written to a temporary file in the same directory and renamed
// (the cubin first, then its sidecar), so a reader sees a whole entry or
// none, and processes filling one directory concurrently leave it valid. An
// entry that does not read back exactly (a missing or truncated file, a
// digest that differs, a key that is not this compile's) is a miss, counted
// as rejected, and is rebuilt and rewritten: it is never trusted.
//
//   KernelCache cache(KernelCache::default_dir());
//   CompileResult r = compile_cuda(src, {.arch = "sm_90", .cache = &cache});
//   r.from_cache;             // true the second time
//   cache.counters().hits;
//
// Thread-safe: one KernelCache may serve any number of compiles at once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tessera::runtime {

struct CompileResult;

class KernelCache {
 public:
  /// A cache in `dir` (created when missing). UserError when it cannot be
  /// created or is not a directory.
  explicit KernelCache(std::filesystem::path dir);

  /// $TESSERA_CACHE, else $XDG_CACHE_HOME/tessera/kernels, else
  /// ~/.cache/tessera/kernels.
  static std::filesystem::path default_dir();

  const std::filesystem::path &dir() const { return dir_; }

  /// The stored result of the compile whose key is `key` (key_material's
  /// digest), or nullopt (a miss, or an entry that did not read back whole:
  /// counted as rejected).
  std::optional<CompileResult> load(const std::string &key, const std::string &arch);
  /// Stores `r` under `key`. Never throws: a failure (disk full, permissions)
  /// is counted and the compile's result stands.
  void store(const std::string &key, const CompileResult &r);

  /// Another file kept in the cache (a dynamic kernel's manifest): `name` is
  /// relative to dir(), e.g. "dynamic/<digest>.json". Written like the
  /// entries (temporary file, rename); store_file throws UserError when it
  /// cannot write, read_file gives nullopt when there is nothing to read.
  void store_file(const std::string &name, const std::string &bytes) const;
  std::optional<std::string> read_file(const std::string &name) const;

  /// 32 hex digits naming the compile of `material` (every input that
  /// decides the cubin, concatenated by the caller).
  static std::string digest(const std::string &material);

  struct Counters {
    int64_t hits = 0, misses = 0, rejected = 0, stores = 0, store_failures = 0;
  };
  Counters counters() const;

 private:
  std::filesystem::path entry(const std::string &arch, const std::string &key, const char *ext) const;

  std::filesystem::path dir_;
  std::atomic<int64_t> hits_{0}, misses_{0}, rejected_{0}, stores_{0}, store_failures_{0};
};

}  // namespace tessera::runtime
