//===- tools/DynamicCommand.cpp - `tessera dynamic`: kernels for size ranges ===//
#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "CommandSupport.h"
#include "Commands.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/tune/DynamicPlan.h"

namespace tessera::cli {

int dynamic_command(const DynamicCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    auto [f, dims] = load_func(opts.file, opts.func, opts.dims);
    if (!dims.empty()) f = analysis::specialize(f, dims);
    Arch arch = resolve_arch(opts.arch, out);
    tune::DynamicSpec spec{.max_kernels = opts.max_kernels, .cells_per_octave = opts.cells_per_octave};
    for (const std::string &r : opts.ranges) spec.symbols.push_back(tune::SymbolRange::parse(r));
    for (const std::string &h : opts.hot) {
      tune::SymbolRange v = tune::SymbolRange::parse(h);
      auto it = std::find_if(spec.symbols.begin(), spec.symbols.end(), [&](auto &s) { return s.name == v.name; });
      if (it == spec.symbols.end()) throw UserError("--hot " + h + ": no --range for '" + v.name + "'");
      it->hot.push_back(v.lo);
    }
    tune::DynamicPlan plan = tune::plan_dynamic(f, spec, arch);
    out << fmt::format("# tessera dynamic {} ({}) for {}\n", f.name(), opts.file, arch.name);
    out << plan.table();

    if (opts.build) {
      // The plan's kernels, compiled in one parallel wave (through the cache).
      std::optional<runtime::KernelCache> cache;
      if (opts.cache != "none") cache.emplace(opts.cache.empty() ? runtime::KernelCache::default_dir()
                                                                 : std::filesystem::path(opts.cache));
      const rules::Rule *rule = rules::find_rule(plan.rule);
      auto m = rule->match(schedule::unique_block_names(f), arch);
      if (!m) throw InternalError("the plan's rule no longer matches: " + m.reason());
      const std::string sm = "sm_" + std::to_string(arch.compute_capability.sm_version());
      auto t0 = std::chrono::steady_clock::now();
      std::vector<ir::PrimFunc> scheduled;
      for (const auto &c : plan.configs) scheduled.push_back(rule->apply(schedule::unique_block_names(f), **m, *c).func());
      std::vector<std::string> errors(scheduled.size());
      std::atomic<size_t> next{0};
      std::vector<std::thread> workers;
      unsigned n = opts.threads ? opts.threads : std::max(1u, std::thread::hardware_concurrency());
      for (unsigned w = 0; w < std::min<size_t>(n, scheduled.size()); ++w)
        workers.emplace_back([&] {
          for (size_t i; (i = next.fetch_add(1)) < scheduled.size();) {
            try {
              runtime::CudaFunction::build(scheduled[i], {.arch = sm, .cache = cache ? &*cache : nullptr});
            } catch (const std::exception &e) {
              errors[i] = e.what();
            }
          }
        });
      for (std::thread &t : workers) t.join();
      double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      int failed = 0;
      for (size_t i = 0; i < errors.size(); ++i)
        if (!errors[i].empty()) {
          ++failed;
          err << "error: kernel " << i << ": " << errors[i] << "\n";
        }
      out << fmt::format("# built {} kernels for {} in {:.1f} ms", scheduled.size() - failed, sm, wall);
      if (cache) {
        runtime::KernelCache::Counters k = cache->counters();
        out << fmt::format(" ({}: {} read, {} compiled)", cache->dir().string(), k.hits, k.misses);
      }
      out << "\n";
      if (failed) return 1;
    }
    if (!opts.json.empty()) {
      std::ofstream j(opts.json);
      j << plan.to_json().dump(2) << "\n";
      if (!j) throw UserError("cannot write '" + opts.json + "'");
    }
    return 0;
  });
}

}  // namespace tessera::cli
