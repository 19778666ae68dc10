//===- tools/CpuTuneCommand.cpp - tessera tune --target cpu -----------------===//
//
// Every CPU schedule of the function, verified and timed (tune/CpuTune.h);
// a table of them, fastest first, and the fastest schedule written to the
// output directory.
//
//===----------------------------------------------------------------------===//
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "CommandSupport.h"
#include "Commands.h"
#include "tessera/script/Printer.h"
#include "tessera/tune/CpuTune.h"
#include "tessera/tessera.h"

namespace tessera::cli {

int cpu_tune(const TuneCommandOptions &opts, const ir::PrimFunc &f, std::ostream &out, std::ostream &err) {
  cpu::CpuArch host = cpu::CpuArch::by_name(opts.cpu);
  tuning::CpuTuneResult r = tuning::tune_for_cpu(f, host);
  out << "# target: cpu (" << host.str() << "), the LLVM JIT on " << r.threads << " threads; reference: "
      << r.reference << "\n";
  out << "| schedule | verified | median ms | vs plain |\n|---|---|---:|---:|\n";
  for (const tuning::CpuCandidate &c : r.candidates) {
    if (c.ok)
      out << fmt::format("| {} | ok | {:.3f} | {:.2f}x |\n", c.name, c.median_ms, r.plain_ms / c.median_ms);
    else
      out << fmt::format("| {} | no: {} | | |\n", c.name, c.error.substr(0, 160));
  }
  if (!r.ok()) {
    err << "error: no CPU schedule of '" << f.name() << "' ran and verified\n";
    return 1;
  }
  const tuning::CpuCandidate &best = r.best();
  std::filesystem::create_directories(opts.output_dir);
  const std::filesystem::path path = std::filesystem::path(opts.output_dir) / (f.name() + ".cpu.scheduled.py");
  std::ofstream(path) << script::print(best.func);
  out << fmt::format("# best: {} {:.3f} ms ({:.2f}x the plain function); written to {}\n", best.name,
                     best.median_ms, r.plain_ms / best.median_ms, path.string());
  if (!opts.save.empty()) {
    kernel_of(r).save(opts.save);
    out << "# kernel package: " << opts.save << "\n";
  }
  return 0;
}

}  // namespace tessera::cli
