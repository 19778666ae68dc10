//===- tools/DynamicCommand.cpp - `tessera dynamic`: kernels for size ranges ===//
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "CommandSupport.h"
#include "Commands.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/tune/DynamicKernel.h"
#include "tessera/tune/DynamicPlan.h"

namespace tessera::cli {

int dynamic_command(const DynamicCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    auto [f, dims] = load_func(opts.file, opts.func, opts.dims);
    if (!dims.empty()) f = analysis::specialize(f, dims);
    Arch arch = resolve_arch(opts.arch, out);
    if (!(opts.budget_ms >= 0)) throw UserError("--budget-ms must be 0 or more, got " + fmt::format("{}", opts.budget_ms));
    tuning::DynamicSpec spec = tuning::DynamicSpec::parse(opts.ranges, opts.hot, opts.max_kernels);
    spec.cells_per_octave = opts.cells_per_octave;
    tuning::DynamicPlan plan = tuning::plan_dynamic(f, spec, arch);
    out << fmt::format("# tessera dynamic {} ({}) for {}\n", f.name(), opts.file, arch.name);
    out << plan.table();

    std::optional<tuning::DynamicKernel> built;  // its plan carries the measurements
    if (opts.build || opts.measure) {
      // The plan's kernels, built once and kept (the kernel cache holds the
      // cubins and the plan's manifest: the next start builds nothing).
      std::optional<runtime::KernelCache> cache;
      if (opts.cache != "none") cache.emplace(opts.cache.empty() ? runtime::KernelCache::default_dir()
                                                                 : std::filesystem::path(opts.cache));
      tuning::DynamicKernel k = std::move(tuning::DynamicKernel::create_many(
          {{f, spec, &plan}}, arch, {.cache = cache ? &*cache : nullptr, .threads = opts.threads})[0]);
      out << "# " << k.counters().str() << "\n";
      if (cache) out << "# kernel cache: " << cache->dir().string() << "\n";
      if (opts.measure) {
        if (runtime::driver_status() != runtime::DriverStatus::Ok || runtime::device_count() == 0) {
          out << "# measure: no CUDA device (" << runtime::driver_message()
              << "): the cells keep the plan's predicted kernels\n";
        } else {
          std::optional<tuning::Database> db = open_database(opts.db, err);
          k.load(0);
          tuning::DynamicMeasureReport r =
              k.measure(k.device_timer(0), {.budget_ms = opts.budget_ms,
                                            .db = db ? &*db : nullptr,
                                            .cache = cache ? &*cache : nullptr,
                                            .background = opts.background});
          out << "# " << r.str() << "\n";
          if (r.background_cells > 0) {
            out << "# ready; the rest is measured in the background\n";
            r = k.finish_measuring();
            out << "# background done: " << r.str() << "\n";
          }
          if (db) out << "# database: " << db->path() << " (" << r.measurements << " records appended)\n";
        }
      }
      built.emplace(std::move(k));
    }
    if (!opts.json.empty()) {
      std::ofstream j(opts.json);
      j << (built ? built->plan() : plan.to_json()).dump(2) << "\n";
      if (!j) throw UserError("cannot write '" + opts.json + "'");
    }
    return 0;
  });
}

}  // namespace tessera::cli
