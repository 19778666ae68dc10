//===- lib/tune/KernelStore.cpp - What an engine opens once per process ----===//
#include "tessera/tune/KernelStore.h"

#include "tessera/support/DataPaths.h"

namespace tessera::tune {

namespace {

std::optional<Database> open_database(const std::string &path) {
  if (path.empty()) return std::nullopt;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  return Database::open(path);
}

}  // namespace

std::string default_database_path() {
  return support::user_cache_path("TESSERA_DB", "tuning.jsonl", "tessera_tuning.jsonl").string();
}

KernelStore::KernelStore(const Paths &paths) : cache_(paths.kernels), db_(open_database(paths.database)) {}

KernelStore KernelStore::open() {
  return KernelStore(Paths{runtime::KernelCache::default_dir(), default_database_path()});
}

std::vector<DynamicKernel> KernelStore::create(const std::vector<DynamicRequest> &requests, const Arch &arch,
                                               unsigned threads) {
  return DynamicKernel::create_many(requests, arch, {.cache = &cache_, .threads = threads});
}

DynamicMeasureReport KernelStore::measure(DynamicKernel &kernel, const KernelTimerFn &time, double budget_ms) {
  return kernel.measure(time, {.budget_ms = budget_ms, .db = database(), .cache = &cache_});
}

}  // namespace tessera::tune
