//===- lib/api/Dynamic.cpp - tessera::dynamic ------------------------------===//
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "KernelImpl.h"
#include "tessera/script/Printer.h"
#include "tessera/tune/Database.h"

namespace tessera {

namespace {

/// The spec of a request: one range per symbolic size of `f`, in `f`'s order.
tuning::DynamicSpec spec_of(const ir::PrimFunc &f, const std::map<std::string, SizeRange> &ranges,
                            int64_t max_kernels) {
  tuning::DynamicSpec spec;
  spec.max_kernels = max_kernels;
  for (const ir::Var &v : f.shape_vars()) {
    auto it = ranges.find(v.name());
    if (it == ranges.end())
      throw UserError("'" + f.name() + "' has the symbolic size '" + v.name() +
                      "' but no range for it (nor a value in dims)");
    spec.symbols.push_back({v.name(), it->second.lo, it->second.hi, it->second.hot});
  }
  for (const auto &[name, range] : ranges)
    if (std::none_of(spec.symbols.begin(), spec.symbols.end(), [&](auto &s) { return s.name == name; }))
      throw UserError("'" + f.name() + "' has no symbolic size '" + name + "'");
  return spec;
}

}  // namespace

std::string DynamicCounters::str() const {
  return tuning::DynamicKernelCounters{warm, kernels, nvrtc_compiles, cache_reads, rule_applications, policy_calls,
                                       plan_ms, build_ms, total_ms}
      .str();
}

std::vector<DynamicKernel> dynamic(const std::vector<DynamicRequest> &requests, const Target &target,
                                   const DynamicOptions &options) {
  if (target.is_cpu())
    throw UserError("tessera::dynamic plans GPU kernels; on the CPU target tune the function at its sizes "
                    "(tessera::tune with TuneOptions::dims)");
  std::vector<tuning::DynamicRequest> specs;
  for (const DynamicRequest &r : requests) {
    if (!r.func.defined()) throw UserError("tessera::dynamic: a request without a function");
    std::map<std::string, int64_t> dims = options.dims;
    dims.insert(r.dims.begin(), r.dims.end());
    const ir::PrimFunc f = bound(r.func, dims);
    specs.push_back({f, spec_of(f, r.ranges, options.max_kernels)});
  }
  std::unique_ptr<runtime::KernelCache> cache = open_cache(options.kernel_cache);
  std::vector<tuning::DynamicKernel> built =
      tuning::DynamicKernel::create_many(specs, target.arch(), {.cache = cache.get(), .threads = options.threads});
  std::vector<DynamicKernel> out;
  for (size_t i = 0; i < built.size(); ++i) {
    auto impl = std::make_shared<Kernel::Impl>();
    impl->target = target;
    impl->name = specs[i].func.name();
    impl->script = script::print(specs[i].func);
    impl->symbols = built[i].symbols();
    impl->report.target = target.str();
    impl->report.rule = built[i].plan().value("rule", "");
    impl->report.why_unmeasured = "a dynamic plan: the policy's estimates (DynamicKernel::measure times them)";
    impl->report.json = built[i].plan().dump();
    impl->report.tune_ms = built[i].counters().total_ms;
    impl->dynamic = std::make_shared<tuning::DynamicKernel>(std::move(built[i]));
    impl->kernel_cache = options.kernel_cache;
    impl->database = options.database;
    out.emplace_back(std::move(impl));
  }
  return out;
}

DynamicKernel dynamic(const ir::PrimFunc &func, const Target &target, const std::map<std::string, SizeRange> &ranges,
                      const DynamicOptions &options) {
  return std::move(dynamic(std::vector<DynamicRequest>{{func, ranges, {}}}, target, options).at(0));
}

DynamicCounters DynamicKernel::counters() const {
  const tuning::DynamicKernelCounters &c = impl().dynamic->counters();
  return {c.warm, c.kernels, c.nvrtc_compiles, c.cache_reads, c.rule_applications, c.policy_calls, c.plan_ms,
          c.build_ms, c.total_ms};
}

int DynamicKernel::kernel_for(const std::vector<int64_t> &sizes) const {
  const tuning::DynamicKernel &k = *impl().dynamic;
  if (sizes.size() != k.symbols().size())
    throw UserError("'" + name() + "' has " + std::to_string(k.symbols().size()) + " symbolic sizes, not " +
                    std::to_string(sizes.size()));
  return k.select(sizes).kernel;
}

std::string DynamicKernel::plan() const { return impl().dynamic->plan().dump(); }

std::string DynamicKernel::measure(double budget_ms) {
  tuning::DynamicKernel &k = *impl_->dynamic;
  impl_->dispatcher();  // loads it on device 0 (an error without one)
  std::unique_ptr<runtime::KernelCache> cache = open_cache(impl_->kernel_cache);
  std::optional<tuning::Database> db;
  if (!impl_->database.empty()) db.emplace(tuning::Database::create(impl_->database));
  tuning::DynamicMeasureOptions o{.budget_ms = budget_ms, .db = db ? &*db : nullptr, .cache = cache.get()};
  return k.measure(k.device_timer(0), o).str();
}

}  // namespace tessera
