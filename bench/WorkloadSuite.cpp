//===- bench/WorkloadSuite.cpp - The workload corpus at full size (GPU) ----===//
//
// Every workload of workloads/workloads.json at its full size, scheduled by
// the default rules, checked against a reference and timed next to cuBLAS
// (matrix products) and the device's copy bandwidth (everything); see
// WorkloadRunner.h for what is measured and how.
//
//   tessera_bench_workloads [--json OUT] [--git HASH] [--only NAME]...
//   tessera_bench_workloads --dry-run [--arch h100] [--only NAME]...
//
// Prints a Markdown table (the form kept in bench/results/) and, with --json,
// every number with the device, driver, NVRTC version, git hash and date.
// Without a usable CUDA driver a measured run prints one line and exits 0
// (nothing to measure); --dry-run schedules and compiles for an Arch preset
// (--arch, default: the device's, else h100) and reports schedule and build
// times instead. Exit status 1 when a workload failed (an error or a wrong
// result), 2 for bad arguments.
//
//===----------------------------------------------------------------------===//
#include <fstream>
#include <iostream>
#include <string>

#include "tessera/bench/WorkloadRunner.h"
#include "tessera/runtime/CudaDriver.h"

using namespace tessera;

namespace {

struct Args {
  bench::SuiteOptions suite;
  std::string json_out;
};

Args parse_args(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UserError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--dry-run") a.suite.dry_run = true;
    else if (arg == "--arch") a.suite.arch = value();
    else if (arg == "--only") a.suite.only.push_back(value());
    else if (arg == "--git") a.suite.git = value();
    else if (arg == "--json") a.json_out = value();
    else throw UserError("unknown argument '" + arg + "' (see the comment at the top of bench/WorkloadSuite.cpp)");
  }
  return a;
}

}  // namespace

int main(int argc, char **argv) {
  Args args;
  try {
    args = parse_args(argc, argv);
  } catch (const UserError &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  try {
    if (!args.suite.dry_run && runtime::driver_status() != runtime::DriverStatus::Ok) {
      std::cout << "no CUDA device (" << runtime::driver_message() << "): nothing measured\n";
      return 0;
    }
    // Progress on stderr, one line a workload: a run cut short keeps it.
    args.suite.on_row = [](const nlohmann::json &row) {
      std::cerr << "# " << row.value("workload", "?") << ": " << row.value("status", "?");
      if (row.contains("median_ms")) std::cerr << ", " << row["median_ms"].get<double>() * 1e3 << " us";
      std::cerr << std::endl;
    };
    nlohmann::json report = bench::run_workload_suite(args.suite);
    std::cout << bench::markdown_report(report) << std::flush;
    if (!args.json_out.empty()) {
      std::ofstream out(args.json_out);
      out << report.dump(2) << "\n";
      if (!out) throw UserError("cannot write " + args.json_out);
    }
    return bench::all_passed(report) ? 0 : 1;
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
