//===- tools/CpuTuneCommand.cpp - tessera tune --target cpu -----------------===//
//
// Every CPU schedule of the function (cpu/CpuSchedule.h: the function as it
// is, then each tiling of its matmul) built by the LLVM JIT, run on the same
// random inputs, checked against the float64 reference, and timed on this
// machine's cores (runtime/Backend.h); a table of them, fastest first, and
// the fastest schedule written to the output directory.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "CommandSupport.h"
#include "Commands.h"
#include "tessera/cpu/CpuSchedule.h"
#include "tessera/runtime/Backend.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Printer.h"

namespace tessera::cli {

namespace {

struct CpuCandidate {
  std::string name;
  ir::PrimFunc func;
  std::string error;
  bool ok = false;
  double median_ms = NAN;
};

}  // namespace

int cpu_tune(const TuneCommandOptions &opts, const ir::PrimFunc &f, std::ostream &out, std::ostream &err) {
  std::unique_ptr<runtime::Backend> llvm = runtime::make_backend("llvm");
  if (std::string why = llvm->unavailable(); !why.empty()) throw UserError("--target cpu: " + why);
  if (!f.shape_vars().empty())
    throw UserError("--target cpu times the function at given sizes: bind '" + f.shape_vars()[0].name() +
                    "' (and the other symbolic sizes) with --dim");
  cpu::CpuArch host = cpu::CpuArch::by_name(opts.cpu);
  out << "# target: cpu (" << host.str() << "), the LLVM JIT on " << runtime::llvm_jit_threads() << " threads\n";

  std::vector<CpuCandidate> candidates{{"plain (as written)", f}};
  for (const cpu::CpuMatmulConfig &c : cpu::cpu_matmul_candidates(f, host)) {
    CpuCandidate cand{"matmul " + c.str(), {}};
    try {
      cand.func = cpu::schedule_for_cpu(f, host, c).func;
    } catch (const Error &e) {
      cand.error = e.what();
    }
    candidates.push_back(std::move(cand));
  }
  std::vector<runtime::NDArray> inputs = runtime::make_random_args(f, {}, 1);
  runtime::Reference want = runtime::compute_reference(f, inputs);
  const runtime::TimingOptions timing{.warmup_ms = 0, .measure_ms = 300, .min_reps = 3, .max_reps = 100};
  for (CpuCandidate &c : candidates) {
    if (!c.error.empty()) continue;
    try {
      std::unique_ptr<runtime::Executable> exe = llvm->build(c.func);
      std::vector<runtime::NDArray> args = inputs;
      exe->run(args);
      c.ok = true;
      for (const runtime::OutputCheck &check : runtime::check_outputs(f, args, want))
        if (!check.ok) c.ok = false, c.error = "wrong: " + check.str();
      if (c.ok) c.median_ms = exe->time(args, timing).median_ms;
    } catch (const Error &e) {
      c.ok = false;
      c.error = e.what();
    }
  }
  const double plain_ms = candidates[0].ok ? candidates[0].median_ms : NAN;  // the function as written
  std::stable_sort(candidates.begin(), candidates.end(), [](const CpuCandidate &a, const CpuCandidate &b) {
    return a.ok != b.ok ? a.ok : (a.ok && a.median_ms < b.median_ms);
  });
  out << "| schedule | verified | median ms | vs plain |\n|---|---|---:|---:|\n";
  for (const CpuCandidate &c : candidates) {
    if (c.ok)
      out << fmt::format("| {} | ok | {:.3f} | {:.2f}x |\n", c.name, c.median_ms, plain_ms / c.median_ms);
    else
      out << fmt::format("| {} | no: {} | | |\n", c.name, c.error.substr(0, 160));
  }
  if (candidates.empty() || !candidates[0].ok) {
    err << "error: no CPU schedule of '" << f.name() << "' ran and verified\n";
    return 1;
  }
  const CpuCandidate &best = candidates[0];
  std::filesystem::create_directories(opts.output_dir);
  const std::filesystem::path path = std::filesystem::path(opts.output_dir) / (f.name() + ".cpu.scheduled.py");
  std::ofstream(path) << script::print(best.func);
  out << fmt::format("# best: {} {:.3f} ms ({:.2f}x the plain function); written to {}\n", best.name,
                     best.median_ms, plain_ms / best.median_ms, path.string());
  return 0;
}

}  // namespace tessera::cli
