//===- tools/TuneCommand.cpp - `tessera tune` -------------------------------===//
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <unistd.h>

#include "CommandSupport.h"
#include "Commands.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/script/Printer.h"
#include "tessera/tune/Database.h"
#include "tessera/support/DataPaths.h"
#include "tessera/tune/FastTune.h"
#include "tessera/tessera.h"

namespace tessera::cli {

namespace {

/// "[#########           ] compile 12/21" on a terminal, redrawn in place.
class ProgressBar {
 public:
  explicit ProgressBar(std::ostream &err, bool enabled) : err_(err), enabled_(enabled) {}
  void update(const std::string &phase, int done, int total) {
    if (!enabled_ || total <= 0) return;
    constexpr int kWidth = 30;
    int filled = done * kWidth / total;
    err_ << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "] " << phase << " " << done
         << "/" << total << std::flush;
    if (done == total) err_ << "\n";
  }

 private:
  std::ostream &err_;
  bool enabled_;
};

/// The order of the table: by time when measured (failures last), else by
/// the policy's rank (the default after the policy's candidates).
std::vector<size_t> ranking(const tuning::TuneResult &r) {
  std::vector<size_t> order(r.candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto ok = [&](size_t i) { return r.candidates[i].status == tuning::CandidateStatus::Ok; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (ok(a) != ok(b)) return ok(a);
    if (r.measured && ok(a)) return r.candidates[a].time_us < r.candidates[b].time_us;
    return false;
  });
  return order;
}

std::string format_kb(int64_t bytes) {
  return bytes == 0 ? std::string("0") : fmt::format("{:.1f}K", double(bytes) / 1024);
}

/// The table's SASS column: widest global load / widest global store (bytes)
/// / local loads and stores, "16/16/0"; "!" marks a warning, "?" a failed
/// disassembly, "-" a candidate that did not build.
std::string sass_cell(const tuning::CandidateReport &c) {
  if (!c.sass) return c.sass_error.empty() ? "-" : "?";
  const runtime::SassSummary &s = *c.sass;
  return fmt::format("{}/{}/{}{}", s.widest_global_load(), s.widest_global_store(), s.local_loads + s.local_stores,
                     c.sass_warning.empty() ? "" : " !");
}

void print_table(const tuning::TuneResult &r, std::ostream &out) {
  double base = r.default_index >= 0 && r.candidates[r.default_index].measured
                    ? r.candidates[r.default_index].time_us
                    : 0;
  // The SASS column only when cuobjdump summarised the candidates.
  bool sass = !r.sass_tool.empty();
  auto sass_col = [&](const std::string &text) { return sass ? fmt::format("{:<10}  ", text) : std::string(); };
  out << fmt::format("{:>4}  {:>10}  {:>8}  {:<14}  {:>4}  {:>6}  {}{:<20}  {}\n", "rank",
                     r.measured ? "time(us)" : "est.(us)", "vs dflt", "status", "regs", "smem",
                     sass_col("ld/st/lcl"), "origin", "config");
  int rank = 0;
  for (size_t i : ranking(r)) {
    const tuning::CandidateReport &c = r.candidates[i];
    bool ok = c.status == tuning::CandidateStatus::Ok;
    std::string time = !ok ? "-" : r.measured ? fmt::format("{:.2f}", c.time_us)
                                              : (c.policy_score > 0 ? fmt::format("{:.2f}", c.policy_score) : "-");
    std::string vs = ok && r.measured && base > 0 && c.time_us > 0 ? fmt::format("{:.2f}x", base / c.time_us) : "-";
    out << fmt::format("{:>4}  {:>10}  {:>8}  {:<14}  {:>4}  {:>6}  {}{:<20}  {}\n", ++rank, time, vs,
                       tuning::to_string(c.status), ok ? std::to_string(c.registers) : "-",
                       ok ? format_kb(c.shared_bytes) : "-", sass_col(sass_cell(c)),
                       c.origin + (int(i) == r.best ? " *" : ""), c.config);
    if (!ok) out << "        " << c.error.substr(0, c.error.find('\n')) << "\n";
  }
  if (sass) out << "# ld/st/lcl: the widest global load and store in bytes, local loads + stores (SASS)\n";
  // What the machine code contradicts, candidate by candidate (warnings, not failures).
  for (const tuning::CandidateReport &c : r.candidates) {
    if (!c.sass_warning.empty()) out << "# warning: " << c.origin << ": " << c.sass_warning << "\n";
    if (!c.sass_error.empty())
      out << "# sass: " << c.origin << ": " << c.sass_error.substr(0, c.sass_error.find('\n')) << "\n";
  }
}

/// Writes the winner's CUDA C, cubins and scheduled TVMScript; returns the paths.
std::vector<std::string> write_best(const tuning::TuneResult &r, const std::string &dir, const std::string &name,
                                    const Arch &arch) {
  std::filesystem::create_directories(dir);
  const tuning::CandidateReport &w = r.winner();
  std::vector<std::string> paths;
  auto write = [&](const std::string &path, const void *data, size_t n) {
    std::ofstream f(path, std::ios::binary);
    f.write(static_cast<const char *>(data), std::streamsize(n));
    if (!f) throw UserError("cannot write '" + path + "'");
    paths.push_back(path);
  };
  std::string base = dir + "/" + name;
  std::string py = script::print(r.best_func);
  write(base + ".scheduled.py", py.data(), py.size());
  std::string cu;
  for (const std::string &s : w.sources) cu += (cu.empty() ? "" : "\n") + s;
  if (!cu.empty()) write(base + ".cu", cu.data(), cu.size());
  // The target the winner was compiled for: sm_90a for a Hopper kernel.
  std::string sm = codegen::cuda_target_for(arch.arch_flag(), r.best_func.body());
  for (size_t k = 0; k < w.cubins.size(); ++k) {
    std::string suffix = w.cubins.size() == 1 ? "" : "_k" + std::to_string(k);
    write(base + suffix + "." + sm + ".cubin", w.cubins[k].data(), w.cubins[k].size());
  }
  return paths;
}

}  // namespace

int tune_command(const TuneCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    auto [f, dims] = load_func(opts.file, opts.func, opts.dims);
    if (!dims.empty()) f = analysis::specialize(f, dims);
    if (resolve_target(opts.target, f) == "cpu") return cpu_tune(opts, f, out, err);
    Arch arch = resolve_arch(opts.arch, out);
    if (opts.topk < 1) throw UserError("--topk must be at least 1, got " + std::to_string(opts.topk));

    std::optional<tuning::Database> db = open_database(opts.db, err);

    std::optional<runtime::KernelCache> cache;
    if (opts.cache != "none") cache.emplace(opts.cache.empty() ? runtime::KernelCache::default_dir() : std::filesystem::path(opts.cache));

    ProgressBar bar(err, opts.progress && isatty(STDERR_FILENO));
    tuning::TuneOptions to{.topk = opts.topk, .rule = opts.rule, .threads = opts.threads, .measure = !opts.no_measure,
                        .read_sass = !opts.no_sass,
                        .isolate = !opts.in_process,
                        .measure_timeout_ms = opts.measure_timeout_ms};
    to.oracle = runtime::parse_oracle(opts.oracle);
    to.db = db ? &*db : nullptr;
    to.kernel_cache = cache ? &*cache : nullptr;
    to.progress = [&](const std::string &phase, int done, int total) { bar.update(phase, done, total); };
    tuning::TuneResult r = tuning::fast_tune(f, arch, to);

    out << fmt::format("# tessera tune {} ({}) for {}\n", f.name(), opts.file, r.arch);
    if (r.from_db) {
      out << fmt::format("# answered from the database {} in {:.1f} ms: rule {}, {:.2f} us on {}\n", db->path(),
                         r.phases.total_ms, r.rule, r.winner().time_us, r.device);
      out << "# config: " << r.winner().config << "\n";
    } else {
      out << "# rule: " << (r.rule.empty() ? std::string("none (already scheduled)") : r.rule) << "\n";
      for (const std::string &a : r.rules_abandoned)
        out << "# rule '" << a << "' matched but none of its candidates built\n";
      out << fmt::format("# candidates: {} (policy top-{} + the default config)\n", r.candidates.size(), opts.topk);
      if (r.measured)
        out << fmt::format("# measured on {} in {}: verified against the reference, median times\n", r.device,
                           r.isolation);
      else
        out << "# NOT MEASURED (" << r.why_unmeasured
            << "): the policy's best-ranked candidate that compiled is picked; times are the policy's estimates\n";
      if (!r.sass_note.empty()) out << "# " << r.sass_note << "\n";
      if (!r.reference.empty()) out << "# reference computed by: " << r.reference << "\n";
      print_table(r, out);
      const tuning::TunePhases &p = r.phases;
      out << fmt::format(
          "# phases (ms): match {:.1f}, policy {:.1f}, schedule {:.1f}, codegen {:.1f}, nvrtc {:.1f} "
          "(compile wall {:.1f}), sass {:.1f}, reference {:.1f}, measure {:.1f}, total {:.1f}\n",
          p.match_ms, p.policy_ms, p.schedule_ms, p.codegen_ms, p.nvrtc_ms, p.compile_wall_ms, p.sass_ms,
          p.reference_ms, p.measure_ms, p.total_ms);
      if (double s = r.speedup_over_default(); s > 0) out << fmt::format("# speed-up over the default config: {:.2f}x\n", s);
      if (cache) {
        runtime::KernelCache::Counters k = cache->counters();
        out << fmt::format("# kernel cache: {}: {} read, {} compiled", cache->dir().string(), k.hits, k.misses);
        if (k.rejected) out << fmt::format(" ({} entries did not read back whole and were rebuilt)", k.rejected);
        if (k.store_failures) out << fmt::format(" ({} could not be stored)", k.store_failures);
        out << "\n";
      }
      if (db && r.measured) out << "# database: " << db->path() << " (" << r.candidates.size() << " records appended)\n";
      else if (db) out << "# database: " << db->path() << " (nothing measured, nothing stored)\n";
    }
    {
      // Files are named after the function, or after the file for "main".
      std::string name = f.name() == "main" ? std::filesystem::path(opts.file).stem().string() : f.name();
      std::vector<std::string> paths = write_best(r, opts.output_dir, name, arch);
      out << "# best: " << r.winner().origin << "; wrote";
      for (const std::string &p : paths) out << " " << p;
      out << "\n";
    }
    if (!opts.save.empty()) {
      // The package's cubins are the winner's (compiled again only when the
      // database answered), through the same kernel cache.
      kernel_of(r, Target::gpu(arch), opts.cache == "none" ? "" : opts.cache.empty() ? "default" : opts.cache)
          .save(opts.save);
      out << "# kernel package: " << opts.save << "\n";
    }
    if (!opts.json.empty()) {
      std::ofstream j(opts.json);
      j << tuning::to_json(r).dump(2) << "\n";
      if (!j) throw UserError("cannot write '" + opts.json + "'");
    }
    return 0;
  });
}

}  // namespace tessera::cli
