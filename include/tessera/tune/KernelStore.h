//===- tessera/tune/KernelStore.h - What an engine opens once per process ---===//
//
// The startup side of dynamic shapes: an inference engine opens one store
// per process, on a directory of compiled kernels (runtime::KernelCache:
// cubins, and the manifests of the dynamic kernels) and a tuning database,
// and creates every operator's DynamicKernel through it:
//
//   tuning::KernelStore store = tuning::KernelStore::open();   // $TESSERA_CACHE, $TESSERA_DB
//   std::vector<tuning::DynamicKernel> ops = store.create(requests, arch);
//   for (auto &k : ops) k.load(0);
//   store.measure(ops[0], ops[0].device_timer(0), 2000);    // a GPU: the fastest kept, recorded
//
// The first start plans and compiles (one NVRTC wave for all operators); a
// later one reads the manifests and cubins back and builds nothing, with
// whatever measurements rewrote the manifests. Use one store from one
// thread at a time (the files themselves are safe across processes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tessera/runtime/KernelCache.h"
#include "tessera/tune/Database.h"
#include "tessera/tune/DynamicKernel.h"

namespace tessera::tuning {

class KernelStore {
 public:
  struct Paths {
    /// Compiled kernels and manifests (created when missing).
    std::filesystem::path kernels;
    /// The tuning database file ("": none; its directory is created).
    std::string database;
  };
  explicit KernelStore(const Paths &paths);
  /// The defaults: runtime::KernelCache::default_dir() and
  /// default_database_path().
  static KernelStore open();

  runtime::KernelCache &cache() { return cache_; }
  /// Null without a database.
  Database *database() { return db_ ? &*db_ : nullptr; }

  /// DynamicKernel::create_many through this store's cache.
  std::vector<DynamicKernel> create(const std::vector<DynamicRequest> &requests, const Arch &arch,
                                    unsigned threads = 0);
  /// DynamicKernel::measure recording to this store's database and
  /// rewriting the kernel's manifest in its cache.
  DynamicMeasureReport measure(DynamicKernel &kernel, const KernelTimerFn &time, double budget_ms = 5000);

 private:
  runtime::KernelCache cache_;
  std::optional<Database> db_;
};

}  // namespace tessera::tuning
