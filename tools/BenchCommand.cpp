//===- tools/BenchCommand.cpp - `tessera bench` -----------------------------===//
#include <fmt/format.h>

#include "CommandSupport.h"
#include "tessera/bench/CpuSuite.h"
#include "Commands.h"
#include "tessera/bench/DynamicSuite.h"
#include "tessera/bench/TuneSuite.h"

namespace tessera::cli {

namespace {

/// Exit status of a suite report: 1 when a workload failed; skipped ones are noted.
int report_status(const nlohmann::json &report, std::ostream &err) {
  int failed = 0, skipped = 0;
  for (const auto &w : report.at("workloads")) {
    skipped += w.at("status") == "skipped";
    failed += w.at("status") == "error";
  }
  if (skipped) err << "note: " << skipped << " workload(s) skipped for the --budget (see the table)\n";
  if (failed) err << "error: " << failed << " workload(s) failed (see the table)\n";
  return failed ? 1 : 0;
}

void print_written(const std::vector<std::string> &paths, std::ostream &out) {
  out << "wrote";
  for (const std::string &p : paths) out << " " << p;
  out << "\n";
}

/// --target cpu: every workload's CPU schedules against Eigen and memcpy.
int cpu_bench(const BenchCommandOptions &opts, std::ostream &out, std::ostream &err) {
  bench::CpuSuiteOptions o{.suite = opts.suite.empty() ? "cpu" : opts.suite, .cpu = opts.cpu, .only = opts.only,
                           .git = opts.git.empty() ? "unknown" : opts.git, .budget_s = opts.budget_s};
  auto prefix_of = [&](const nlohmann::json &report) {
    return opts.out_dir + "/" + report.value("date", "today") + "-" + report.value("suite", "cpu") + "-cpu";
  };
  o.progress = [&](const nlohmann::json &partial) { bench::write_cpu_suite(partial, prefix_of(partial)); };
  nlohmann::json report = bench::run_cpu_suite(o);
  out << bench::cpu_suite_markdown(report) << "\n";
  print_written(bench::write_cpu_suite(report, prefix_of(report)), out);
  return report_status(report, err);
}

}  // namespace

int bench_command(const BenchCommandOptions &opts, std::ostream &out, std::ostream &err) {
  return guarded(err, [&] {
    if (opts.target == "cpu") return cpu_bench(opts, out, err);
    const std::string path = bench::find_suite(opts.suite.empty() ? "seed004" : opts.suite);
    if (bench::is_dynamic_suite(path)) {
      // Ranges of sizes: plans and their predicted regret curves.
      nlohmann::json report = bench::run_dynamic_suite(
          {.path = path, .arch = opts.arch == "auto" ? "" : opts.arch, .only = opts.only,
           .git = opts.git.empty() ? "unknown" : opts.git});
      std::vector<std::string> paths = bench::write_dynamic_suite(
          report, opts.out_dir + "/" + report.value("date", "today") + "-" + report.value("suite", "dynamic"));
      out << bench::dynamic_suite_markdown(report) << "\n";
      print_written(paths, out);
      return report_status(report, err);
    }
    bench::TuneSuiteOptions o{.suite = opts.suite.empty() ? "seed004" : opts.suite, .arch = opts.arch == "auto" ? "" : opts.arch, .topk = opts.topk,
                              .measure = !opts.no_measure, .only = opts.only, .threads = opts.threads,
                              .git = opts.git.empty() ? "unknown" : opts.git, .budget_s = opts.budget_s};
    if (o.topk < 1) throw UserError("--topk must be at least 1, got " + std::to_string(o.topk));
    auto prefix_of = [&](const nlohmann::json &report) {
      return opts.out_dir + "/" + report.value("date", "today") + "-" + report.value("suite", "suite") +
             (report.at("mode") == "measured" ? "" : "-compile-only");
    };
    o.progress = [&](const nlohmann::json &partial) { bench::write_tune_suite(partial, prefix_of(partial)); };
    nlohmann::json report = bench::run_tune_suite(o);
    std::vector<std::string> paths = bench::write_tune_suite(report, prefix_of(report));
    out << bench::tune_suite_markdown(report) << "\n";
    print_written(paths, out);
    return report_status(report, err);
  });
}

}  // namespace tessera::cli
