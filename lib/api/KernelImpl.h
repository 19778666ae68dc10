//===- lib/api/KernelImpl.h - What a tessera::Kernel holds -----------------===//
//
// Private to lib/api: the facade's Kernel is a handle on one of these.
//   GPU  a dispatch::KernelPlan (cubins, launch metadata, cells), loaded on
//        device 0 by a dispatch::Dispatcher on the first run; a dynamic
//        kernel's plan and loading are its tuning::DynamicKernel's;
//   CPU  the scheduled function, built by the LLVM JIT (fused multiply-adds,
//        as it was timed).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/dispatch/Dispatcher.h"
#include "tessera/runtime/Backend.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/tessera.h"
#include "tessera/tune/DynamicKernel.h"

namespace tessera {

struct Kernel::Impl {
  Target target;
  std::string name, script, cuda_source;
  std::vector<std::string> symbols;
  Report report;

  // GPU.
  std::shared_ptr<const dispatch::KernelPlan> plan;
  std::shared_ptr<tuning::DynamicKernel> dynamic;
  /// Where a dynamic kernel's plan is kept and its measurements recorded
  /// (DynamicOptions::kernel_cache, ::database).
  std::string kernel_cache, database;

  // CPU.
  ir::PrimFunc func;
  std::vector<dispatch::Argument> arguments;
  std::unique_ptr<runtime::Executable> executable;

  /// The plan loaded on device 0 (once; a dynamic kernel's own).
  const dispatch::Dispatcher &dispatcher() const;

 private:
  mutable std::mutex mutex_;
  mutable std::unique_ptr<dispatch::Dispatcher> dispatcher_;
};

/// The kernel cache an option names (TuneOptions::kernel_cache): "" none,
/// "default" the user's (runtime::KernelCache::default_dir()), else a directory.
std::unique_ptr<runtime::KernelCache> open_cache(const std::string &option);

/// `f` with `dims` bound (analysis::specialize); `f` when there are none.
ir::PrimFunc bound(const ir::PrimFunc &f, const std::map<std::string, int64_t> &dims);

/// The CPU kernel of a scheduled function: compiled by the LLVM JIT now.
std::shared_ptr<Kernel::Impl> cpu_kernel(const ir::PrimFunc &scheduled, Report report);

/// The JSON the report is saved as, and read back from a package.
nlohmann::ordered_json report_json(const Report &r);
Report report_from_json(const nlohmann::ordered_json &j);

}  // namespace tessera
