//===- tools/CpuTuneCommand.cpp - tessera tune --target cpu -----------------===//
//
// Every CPU schedule of the function, verified and timed (tune/CpuTune.h);
// a table of them, fastest first, and the fastest schedule written to the
// output directory.
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "CommandSupport.h"
#include "Commands.h"
#include "tessera/script/Printer.h"
#include "tessera/tune/CpuTune.h"
#include "tessera/tessera.h"

namespace tessera::cli {

namespace {

/// "1.85x" faster than the function as written; "" when it was not timed (a database answer).
std::string vs_plain(const tuning::CpuTuneResult &r, double ms) {
  return std::isnan(r.plain_ms) ? std::string() : fmt::format("{:.2f}x", r.plain_ms / ms);
}

}  // namespace

int cpu_tune(const TuneCommandOptions &opts, const ir::PrimFunc &f, std::ostream &out, std::ostream &err) {
  cpu::CpuArch host = cpu::CpuArch::by_name(opts.cpu);
  // The CPU target uses a database only when --db names one (its times are this machine's).
  std::optional<tuning::Database> db;
  if (!opts.db.empty()) db = open_database(opts.db, err);
  tuning::CpuTuneResult r = tuning::tune_for_cpu(f, host, {.db = db ? &*db : nullptr});
  out << "# target: cpu (" << host.str() << "), the LLVM JIT on " << r.threads << " threads; reference: "
      << r.reference << "\n";
  if (r.from_db) out << "# answered from the database " << db->path() << "\n";
  if (!r.db_note.empty()) out << "# database: " << r.db_note << "\n";
  out << "| schedule | verified | median ms | vs plain |\n|---|---|---:|---:|\n";
  for (const tuning::CpuCandidate &c : r.candidates) {
    if (c.ok)
      out << fmt::format("| {} | ok | {:.3f} | {} |\n", c.name, c.median_ms, vs_plain(r, c.median_ms));
    else
      out << fmt::format("| {} | no: {} | | |\n", c.name, c.error.substr(0, 160));
  }
  // Written whether or not a schedule verified: the failures are in it too.
  if (!opts.json.empty()) {
    std::ofstream j(opts.json);
    j << tuning::to_json(r).dump(2) << "\n";
    if (!j) throw UserError("cannot write '" + opts.json + "'");
  }
  if (!r.ok()) {
    err << "error: no CPU schedule of '" << f.name() << "' ran and verified\n";
    return 1;
  }
  const tuning::CpuCandidate &best = r.best();
  std::filesystem::create_directories(opts.output_dir);
  const std::filesystem::path path = std::filesystem::path(opts.output_dir) / (f.name() + ".cpu.scheduled.py");
  std::ofstream(path) << script::print(best.func);
  out << fmt::format("# best: {} {:.3f} ms ({} the plain function); written to {}\n", best.name, best.median_ms,
                     std::isnan(r.plain_ms) ? std::string("not timed against") : vs_plain(r, best.median_ms),
                     path.string());
  if (db && !r.from_db) out << "# database: " << db->path() << " (" << r.candidates.size() << " records appended)\n";
  if (!opts.save.empty()) {
    kernel_of(r).save(opts.save);
    out << "# kernel package: " << opts.save << "\n";
  }
  return 0;
}

}  // namespace tessera::cli
