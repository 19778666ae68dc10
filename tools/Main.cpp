//===- tools/Main.cpp - The `tessera` command-line program -----------------===//
//
// Parses the command line with CLI11 and dispatches to Commands.h. Kept to
// this one translation unit because CLI11 is slow to compile.
//
//===----------------------------------------------------------------------===//
#include <CLI/CLI.hpp>
#include <iostream>

#include "Commands.h"

int main(int argc, char **argv) {
  using namespace tessera::cli;
  CLI::App app{"tessera: tensor programs (TVMScript) to fast, verified GPU kernels"};
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION);
  app.require_subcommand(1);

  FmtOptions fmt;
  CLI::App *fmt_cmd = app.add_subcommand("fmt", "Print TVMScript files in canonical form");
  fmt_cmd->add_option("files", fmt.files, "TVMScript files")->required()->check(CLI::ExistingFile);

  RunOptions run;
  std::vector<std::string> dims;
  CLI::App *run_cmd = app.add_subcommand(
      "run", "Interpret a function on random inputs and print a summary of every buffer parameter");
  run_cmd->add_option("file", run.file, "TVMScript file")->required()->check(CLI::ExistingFile);
  run_cmd->add_option("--dim", run.dims, "Bind a symbolic dimension, e.g. --dim n=64 (repeatable)");
  run_cmd->add_option("--seed", run.seed, "Random seed for the inputs")->capture_default_str();
  run_cmd->add_option("--func", run.func, "Function of a module to run (default: the only one, or main)");
  run_cmd->add_option("--device", run.device,
                      "cpu (the interpreter), llvm (the LLVM JIT) or cuda; llvm and cuda are checked against the "
                      "float64 reference")
      ->capture_default_str();
  run_cmd->add_option("--arch", run.arch, "With --device cuda: compile for this architecture (default: the device's)");
  run_cmd->add_flag("--time", run.time,
                    "With --device llvm or cuda: time it (median of many runs; wall time on the CPU, device time on "
                    "the GPU)");

  ScheduleCommandOptions sched;
  CLI::App *sched_cmd = app.add_subcommand(
      "schedule", "Schedule a function (by the rules, or by a JSON trace) and print the scheduled TVMScript");
  sched_cmd->add_option("file", sched.file, "TVMScript file")->required()->check(CLI::ExistingFile);
  sched_cmd->add_option("--trace", sched.trace, "Schedule trace, a JSON list of instructions (else: the rules)")
      ->check(CLI::ExistingFile);
  sched_cmd->add_option("--arch", sched.arch, "GPU for the rules: a preset (h100, a100, ...), a .json file, or auto")
      ->capture_default_str();
  sched_cmd->add_option("--rule", sched.rule, "Use this rule only (elementwise, fallback, ...)");
  sched_cmd->add_option("--config", sched.config, "The rule's config as JSON text, or @FILE");
  sched_cmd->add_flag("-v,--verbose", sched.verbose, "Say why each earlier rule declined");
  sched_cmd->add_flag("--verify", sched.verify,
                      "Run original and scheduled functions on the same random inputs and compare the outputs");
  sched_cmd->add_option("--dim", sched.dims, "Bind a symbolic dimension, e.g. --dim n=64 (repeatable)");
  sched_cmd->add_flag("--specialize", sched.specialize,
                      "Schedule for the --dim sizes (they become constants), as tune does");
  sched_cmd->add_option("--seed", sched.seed, "Random seed for the inputs of --verify")->capture_default_str();
  sched_cmd->add_option("--oracle", sched.oracle,
                        "What runs --verify on the CPU: auto (the LLVM JIT when it can, else the interpreter), "
                        "interpreter or llvm")
      ->check(CLI::IsMember({"auto", "interpreter", "llvm"}))
      ->capture_default_str();
  sched_cmd->add_option("--verify-blocks", sched.verify_blocks,
                        "Thread blocks --verify runs: auto (every block when that takes under about 20 s, else a "
                        "sample, with a coverage run over the whole grid), all, or N (up to N per grid axis)")
      ->capture_default_str();
  sched_cmd->add_option("--func", sched.func, "Function of a module (default: the only one, or main)");
  sched_cmd->add_option("--target", sched.target,
                        "gpu (the rules, for --arch), cpu (for --cpu; run by the LLVM JIT), or auto: cpu for a "
                        "function whose T.func_attr target is llvm or c")
      ->capture_default_str();
  sched_cmd->add_option("--cpu", sched.cpu, "With --target cpu: host (this machine) or a preset (ci)")
      ->capture_default_str();

  CLI::App *devices_cmd = app.add_subcommand("devices", "List CUDA devices (or say why there are none)");

  CodegenCommandOptions cg;
  CLI::App *codegen_cmd = app.add_subcommand("codegen", "Print the CUDA C of a scheduled TVMScript program");
  codegen_cmd->add_option("file", cg.file, "TVMScript file")->required()->check(CLI::ExistingFile);
  codegen_cmd->add_option("--arch", cg.arch, "Target architecture, e.g. sm_80, sm_90")->capture_default_str();
  codegen_cmd->add_option("--func", cg.func, "Function of a module (default: the only one, or main)");

  CompileCommandOptions comp;
  CLI::App *compile_cmd =
      app.add_subcommand("compile", "Compile a scheduled TVMScript program with NVRTC and report resources");
  compile_cmd->add_option("file", comp.file, "TVMScript file")->required()->check(CLI::ExistingFile);
  compile_cmd->add_option("--arch", comp.archs, "Comma-separated architectures: sm_XX or GPU presets (h100, a100, ...)")
      ->capture_default_str();
  compile_cmd->add_option("--func", comp.func, "Function of a module (default: the only one, or main)");
  compile_cmd->add_option("-o,--output", comp.output_dir, "Write the CUDA source, the cubins, the NVRTC logs and (with cuobjdump) the SASS to this directory");

  ArchCommandOptions arch;
  CLI::App *arch_cmd = app.add_subcommand("arch", "Print a GPU description (arch/*.json), or the live device's");
  arch_cmd->add_option("name", arch.name, "Preset name or alias (h100, rtx4090, ...) or a .json file");
  arch_cmd->add_flag("--detect", arch.detect, "Describe the live CUDA device (driver values + closest preset)");
  arch_cmd->add_option("--device", arch.device, "With --detect: the device ordinal")->capture_default_str();
  arch_cmd->add_flag("--list", arch.list, "List the known GPUs");
  arch_cmd->add_flag("--json", arch.json, "Print JSON instead of text");
  arch_cmd->add_flag("--diff", arch.diff, "With --detect: only the fields that differ from the matched preset");

  TuneCommandOptions tune;
  CLI::App *tune_cmd = app.add_subcommand(
      "tune", "Find the fastest verified kernel among the policy's top-k configs (and remember it)");
  tune_cmd->add_option("file", tune.file, "TVMScript file")->required()->check(CLI::ExistingFile);
  tune_cmd->add_option("--arch", tune.arch, "GPU: auto (the device), a preset (h100, a100, ...) or a .json file")
      ->capture_default_str();
  tune_cmd->add_option("--topk", tune.topk, "Configs from the policy (the default config is added)")
      ->capture_default_str();
  tune_cmd->add_option("--rule", tune.rule, "Tune this rule only");
  tune_cmd->add_option("--db", tune.db, "Tuning database (JSON lines); 'none' for none (default: $TESSERA_DB or ~/.cache/tessera/tuning.jsonl)");
  tune_cmd->add_option("--cache", tune.cache,
                       "Directory of compiled kernels, reused across runs; 'none' for none (default: $TESSERA_CACHE or "
                       "~/.cache/tessera/kernels)");
  tune_cmd->add_option("--json", tune.json, "Write every candidate's result as JSON to this file");
  tune_cmd->add_option("-o,--output", tune.output_dir, "Directory for the best kernel's source and cubin")
      ->capture_default_str();
  tune_cmd->add_option("--oracle", tune.oracle,
                       "What computes the float64 reference on the CPU: auto (the LLVM JIT when it can, else the "
                       "interpreter or the device), interpreter or llvm")
      ->check(CLI::IsMember({"auto", "interpreter", "llvm"}))
      ->capture_default_str();
  tune_cmd->add_option("--dim", tune.dims, "Bind a symbolic dimension, e.g. --dim n=4096 (repeatable)");
  tune_cmd->add_option("--threads", tune.threads, "Compile workers (default: all cores)");
  tune_cmd->add_flag("--no-measure", tune.no_measure, "Stop at the cubin even with a device");
  tune_cmd->add_flag("--in-process", tune.in_process,
                     "Measure the candidates in this process, not in the measuring worker (no watchdog; a "
                     "faulting candidate ends the run)");
  tune_cmd->add_option("--measure-timeout", tune.measure_timeout_ms,
                       "A candidate's deadline in the measuring worker, in ms (default: from its estimate)")
      ->check(CLI::NonNegativeNumber);
  tune_cmd->add_flag("--no-sass", tune.no_sass, "Do not summarise the candidates' SASS (cuobjdump)");
  tune_cmd->add_option("--func", tune.func, "Function of a module (default: the only one, or main)");
  tune_cmd->add_option("--save", tune.save,
                       "Also write the winner as a kernel package (tessera::load, tessera::dispatch)");
  tune_cmd->add_option("--target", tune.target,
                       "gpu, cpu (every CPU schedule built by the LLVM JIT, checked and timed on this machine), or "
                       "auto: cpu for a function whose T.func_attr target is llvm or c")
      ->capture_default_str();
  tune_cmd->add_option("--cpu", tune.cpu, "With --target cpu: host (this machine) or a preset (ci)")
      ->capture_default_str();

  DynamicCommandOptions dyn;
  CLI::App *dyn_cmd = app.add_subcommand(
      "dynamic", "Plan kernels for ranges of symbolic sizes: cells, the configs covering them, predicted regret");
  dyn_cmd->add_option("file", dyn.file, "TVMScript file")->required()->check(CLI::ExistingFile);
  dyn_cmd->add_option("--range", dyn.ranges, "A symbol's range, e.g. --range m=1:4096 (repeatable)")->required();
  dyn_cmd->add_option("--hot", dyn.hot, "An exact value with a cell of its own, e.g. --hot m=1 (repeatable)");
  dyn_cmd->add_option("--dim", dyn.dims, "Bind another symbolic dimension, e.g. --dim n=4096 (repeatable)");
  dyn_cmd->add_option("--max-kernels", dyn.max_kernels, "The most kernels the plan may use")->capture_default_str();
  dyn_cmd->add_option("--cells-per-octave", dyn.cells_per_octave, "Cells per octave of each range")
      ->capture_default_str();
  dyn_cmd->add_option("--arch", dyn.arch, "GPU: auto (the device), a preset (h100, a100, ...) or a .json file")
      ->capture_default_str();
  dyn_cmd->add_flag("--build", dyn.build, "Compile the plan's kernels with NVRTC");
  dyn_cmd->add_option("--cache", dyn.cache,
                      "With --build: directory of compiled kernels; 'none' for none (default: $TESSERA_CACHE or "
                      "~/.cache/tessera/kernels)");
  dyn_cmd->add_option("--json", dyn.json, "Write the plan as JSON to this file");
  dyn_cmd->add_flag("--measure", dyn.measure,
                    "Build, then time each cell's kernel and its close runners-up on the device and keep the fastest");
  dyn_cmd->add_option("--budget-ms", dyn.budget_ms, "With --measure: the time it may take")->capture_default_str();
  dyn_cmd->add_flag("--background", dyn.background,
                    "With --measure: measure the cells past the budget on a background thread (the kernel is usable "
                    "at the budget), then wait for them");
  dyn_cmd->add_option("--db", dyn.db,
                      "With --measure: tuning database for the measurements; 'none' for none (default: $TESSERA_DB or "
                      "~/.cache/tessera/tuning.jsonl)");
  dyn_cmd->add_option("--threads", dyn.threads, "Compile workers (default: all cores)");
  dyn_cmd->add_option("--func", dyn.func, "Function of a module (default: the only one, or main)");

  BenchCommandOptions bench;
  CLI::App *bench_cmd = app.add_subcommand(
      "bench", "Tune every workload of a suite and report times against the default config, cuBLAS and copy bandwidth");
  bench_cmd->add_option("--suite", bench.suite,
                        "seed004, llm_decode, smoke, cpu (bench/suites/) or a .json file (default: seed004 on the GPU, "
                        "cpu on the CPU)");
  bench_cmd->add_option("--target", bench.target,
                        "gpu (fast_tune; cuBLAS and copy bandwidth) or cpu (every CPU schedule in the LLVM JIT; Eigen "
                        "and memcpy bandwidth)")
      ->check(CLI::IsMember({"gpu", "cpu"}))
      ->capture_default_str();
  bench_cmd->add_option("--cpu", bench.cpu, "With --target cpu: host (this machine) or a preset (ci)")
      ->capture_default_str();
  bench_cmd->add_option("--out", bench.out_dir, "Directory for the JSON, Markdown and SVG results")->capture_default_str();
  bench_cmd->add_option("--arch", bench.arch, "GPU: auto (the device, else h100) or a preset")->capture_default_str();
  bench_cmd->add_option("--topk", bench.topk, "Configs from the policy per workload")->capture_default_str();
  bench_cmd->add_option("--only", bench.only, "Run only these workloads (repeatable)");
  bench_cmd->add_option("--git", bench.git, "Git hash recorded in the results");
  bench_cmd->add_option("--threads", bench.threads, "Compile workers (default: all cores)");
  bench_cmd->add_flag("--no-measure", bench.no_measure, "Stop at the cubin even with a device");
  bench_cmd->add_option("--budget", bench.budget_s, "Seconds for the whole suite; workloads that would not fit are skipped")
      ->check(CLI::NonNegativeNumber);

  // A first word that is no command and no option: say so (CLI11 would say
  // only that a subcommand is required).
  std::string names;
  bool known = false;
  for (const CLI::App *c : app.get_subcommands({})) {
    names += (names.empty() ? "" : ", ") + c->get_name();
    known |= argc > 1 && c->check_name(argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !known) {
    std::cerr << "error: unknown command '" << argv[1] << "'; the commands are " << names << "\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version print and exit 0; every usage error (an unknown
    // option, a missing or nonexistent file, a value out of range) exits 2.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*fmt_cmd) return fmt_command(fmt, std::cout, std::cerr);
  if (*run_cmd) return run_command(run, std::cout, std::cerr);
  if (*sched_cmd) return schedule_command(sched, std::cout, std::cerr);
  if (*devices_cmd) return devices_command(std::cout, std::cerr);
  if (*codegen_cmd) return codegen_command(cg, std::cout, std::cerr);
  if (*compile_cmd) return compile_command(comp, std::cout, std::cerr);
  if (*arch_cmd) return arch_command(arch, std::cout, std::cerr);
  if (*tune_cmd) return tune_command(tune, std::cout, std::cerr);
  if (*bench_cmd) return bench_command(bench, std::cout, std::cerr);
  if (*dyn_cmd) return dynamic_command(dyn, std::cout, std::cerr);
  return 1;
}
