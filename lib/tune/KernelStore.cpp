//===- lib/tune/KernelStore.cpp - What an engine opens once per process ----===//
#include "tessera/tune/KernelStore.h"

namespace tessera::tuning {

KernelStore::KernelStore(const Paths &paths) : cache_(paths.kernels) {
  if (!paths.database.empty()) db_ = Database::create(paths.database);
}

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

}  // namespace tessera::tuning
