//===- tools/Commands.h - The `tessera` subcommands ------------------------===//
//
// Each subcommand of the `tessera` program is a function from parsed options
// to an exit status, writing to the given streams, so tests can drive it
// without spawning a process. Main.cpp only parses the command line (CLI11).
//
//   tessera fmt FILE...                       canonical TVMScript to stdout
//   tessera run FILE [--dim n=64] [--seed S] [--device cuda [--time]]
//                                             run on random inputs (interpreter or GPU)
//   tessera schedule FILE --trace T.json [--verify] [--dim n=64] [--seed S]
//                                             apply a schedule trace, print the result
//   tessera devices                           list CUDA devices (or why there are none)
//   tessera codegen FILE [--arch sm_90]       print the CUDA C of a scheduled program
//   tessera compile FILE [--arch sm_80,sm_90] [-o DIR]
//                                             compile with NVRTC, report time and resources
//   tessera arch [NAME | --detect] [--list] [--json]
//                                             print a GPU description (arch/*.json)
//
// Exit status: 0 success, 1 user error (bad input, reported as
// "FILE:LINE:COL: error: ..." or "error: ..."), 2 internal error (a bug).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/Interpreter.h"

namespace tessera::cli {

struct FmtOptions {
  std::vector<std::string> files;
};

/// Prints each file in canonical form. A file that fails to parse is reported
/// on `err` and the others are still printed; returns 1 if any failed.
int fmt_command(const FmtOptions &opts, std::ostream &out, std::ostream &err);

struct RunOptions {
  std::string file;
  /// "NAME=VALUE" bindings for symbolic dimensions.
  std::vector<std::string> dims;
  uint64_t seed = 0;
  /// Which function of a module to run; empty: the only one, else "main".
  std::string func;
  /// "cpu" (the interpreter), "llvm" (the LLVM JIT) or "cuda"
  /// (runtime/Backend.h).
  std::string device = "cpu";
  /// With "cuda": the architecture to compile for (empty: the device's).
  std::string arch;
  /// With "llvm" or "cuda": also time it (median of many runs: wall time on
  /// the CPU, device time on the GPU).
  bool time = false;
};

/// Runs a function on random inputs and prints, for every buffer parameter in
/// order, `NAME DTYPE[SHAPE] l2=... max=... mean=...`. With device "llvm" or
/// "cuda" (runtime/Backend.h) the lines describe that backend's result; then,
/// for every buffer the function writes, the result is checked against the
/// function's float64 reference on the same inputs (runtime/Verify.h; exit 1
/// when an element is outside what rounding explains):
///   # check: B: ok, worst B[3]: |0.25 - 0.25| = 1e-08 <= 1.2e-07 (8% of the bound)
/// and with `time`:
///   # time: cuda median 0.0123 ms (min 0.0119, max 0.0161, 812 runs, L2 flushed)
///   # time: llvm median 1.81 ms (min 1.79, max 2.2, 56 runs, 2 threads)
/// A backend that cannot run here (no CUDA device, a build without LLVM) is a
/// user error (exit 1).
int run_command(const RunOptions &opts, std::ostream &out, std::ostream &err);

struct ScheduleCommandOptions {
  std::string file;
  /// A JSON schedule trace (README "Schedule traces"). Without one, the rules
  /// schedule the function (apply_default_schedule, or `rule`).
  std::string trace;
  /// Rules: the GPU, a preset name or alias ("h100"), a .json file, or
  /// "auto" (the live device, else h100).
  std::string arch = "auto";
  /// Rules: use this rule only (its match must succeed).
  std::string rule;
  /// Rules: the config as JSON text, or @FILE; default: the rule's default.
  std::string config;
  /// Rules: also say why every earlier rule declined.
  bool verbose = false;
  /// Also check the scheduled function against the original's float64 reference.
  bool verify = false;
  /// The most loop iterations --verify interprets (2^24: up to half a minute,
  /// measured on a dequantising gemv); above it --verify is refused with the
  /// sizes to bind instead.
  int64_t verify_limit = int64_t(1) << 24;
  /// The same limit when both runs go through the LLVM JIT (runtime/Oracle.h)
  /// on one core; it runs independent loops on every core
  /// (runtime::llvm_jit_threads()), so the limit grows with them. 2^33 on one
  /// core: about a minute for both runs (a 1024³ float32 matmul, 2^30
  /// iterations, verifies in 12.6 s on one core of our CI machine, 6.4 s on two).
  int64_t llvm_verify_limit = int64_t(1) << 33;
  /// --verify's executor: auto (the LLVM JIT when it compiles both programs,
  /// else the interpreter), interpreter or llvm.
  std::string oracle = "auto";
  /// Which thread blocks --verify runs: "auto" (all of them when both runs
  /// fit the limits above, else a sample: runtime/SampledCheck.h), "all", or
  /// a number N: a sample keeping up to N indices of each grid axis.
  std::string verify_blocks = "auto";
  std::vector<std::string> dims;
  /// Schedule for the `dims` sizes: the bound symbolic sizes become
  /// constants first (analysis::specialize), as `tessera tune --dim` does.
  bool specialize = false;
  uint64_t seed = 0;
  std::string func;
  /// "gpu" (the rules, for `arch`), "cpu" (cpu/CpuSchedule.h, for `cpu`;
  /// `config` is then a CPU matmul config), or "auto": cpu for a function
  /// whose T.func_attr target is llvm or c, else gpu.
  std::string target = "auto";
  /// With target "cpu": a CPU preset or "host" (cpu/CpuArch.h).
  std::string cpu = "host";
};

/// Schedules the function and prints the scheduled TVMScript: by replaying
/// `trace`, or by the rules, then followed by
///   # rule: elementwise
///   # config: {"rule":"elementwise","threads":256,...}
/// (and with `verbose`, `# declined: <rule>: <reason>` for each earlier rule).
/// With `verify`, the scheduled function runs through the interpreter and is
/// checked against the original's float64 reference on the same random
/// inputs (runtime/Verify.h), a comment line per output buffer:
///   # verify: C: ok, worst C[0, 3]: |1.5 - 1.5| = 2e-07 <= 4e-06 (5% of the bound)
/// Returns 1 when an element is outside what rounding explains
/// ("WRONG"), when the trace fails (the ScheduleError is printed with the
/// function and the offending loops/blocks marked), when the named rule does
/// not match (with its reason) or the config is invalid (the field named).
int schedule_command(const ScheduleCommandOptions &opts, std::ostream &out, std::ostream &err);
/// The --verify half of `schedule`: `scheduled` against `f`'s float64
/// reference on random inputs at `dims` (VerifyCommand.cpp).
int verify_scheduled(const ScheduleCommandOptions &opts, const ir::PrimFunc &f, const ir::PrimFunc &scheduled,
                     const runtime::DimBindings &dims, const std::string &defaulted, std::ostream &out,
                     std::ostream &err);

/// Lists the CUDA devices, one line each, after the driver and NVRTC lines:
///   CUDA driver 13.0, 1 device
///   NVRTC 13.0: sm_75 sm_80 ... sm_121
///   0: NVIDIA H100 80GB HBM3, sm_90, 132 SMs, 79.2 GiB, L2 50 MiB, smem/block 48 KiB (opt-in 227 KiB)
///   data: /opt/tessera/data (bundle)
/// (the last line: where presets, workloads and suites are read from). Without a usable driver the first line is "no CUDA device: <status message>".
/// Always returns 0: having no GPU is not an error.
int devices_command(std::ostream &out, std::ostream &err);

struct CodegenCommandOptions {
  std::string file;
  /// Target architecture, "sm_80", "sm_90", ...
  std::string arch = "sm_90";
  std::string func;
};

/// Lowers a scheduled function and prints its CUDA C. Lowering errors
/// (inconsistent thread extents, ...) exit 1 with "error: ...".
int codegen_command(const CodegenCommandOptions &opts, std::ostream &out, std::ostream &err);

struct CompileCommandOptions {
  std::string file;
  /// Comma-separated architectures, "sm_80,sm_90".
  std::string archs = "sm_80,sm_90";
  std::string func;
  /// When set, writes <kernel>.cu, <kernel>.<arch>.cubin, .log and (with
  /// cuobjdump) .sass there.
  std::string output_dir;
};

/// Lowers, prints and compiles a scheduled function with NVRTC for each
/// architecture (in parallel) and reports, one line per kernel and architecture:
///   sm_90: main_kernel compiled in 152.3 ms, 40 registers, 8448 bytes shared
///     (static 8448, dynamic 0), 0 bytes spilled
/// followed, when runtime::find_disassembler() finds cuobjdump, by the
/// machine code's summary (runtime/Sass.h):
///     sass: global ld 16B x8 | st 16B x8 | shared 0 | local 0 | mma 0 | FFMA 12
/// and otherwise by one line saying how to install it (not an error).
/// Needs the CUDA toolkit, not a device. A compile failure exits 1 with the
/// NVRTC log and the path of the dumped source.
int compile_command(const CompileCommandOptions &opts, std::ostream &out, std::ostream &err);

struct ArchCommandOptions {
  /// A preset's name or alias ("h100", "rtx4090"), or a path ending in .json.
  std::string name;
  /// Describe the live device instead (Arch::detect).
  bool detect = false;
  /// The device --detect reads.
  int device = 0;
  /// List every preset, one line each (also what no NAME and no --detect do).
  bool list = false;
  /// JSON (Arch::to_json) instead of text; with --list, an array of them.
  bool json = false;
  /// With --detect: print only the fields where the live device differs from
  /// the preset it was matched to, one `PATH: preset -> device` line each.
  bool diff = false;
};

/// Prints one GPU description: human-readable by default, e.g.
///   h100_sxm: NVIDIA H100 SXM5 80GB HBM3 (sm_90, fingerprint h100_sxm/sm_90/132sm)
///   aliases: h100, h100_sxm5, nvidia_h100_80gb_hbm3
///   compute
///     SMs                         132 x 4 warp schedulers, 1980 MHz boost
///     ...
/// or the canonical JSON with `json`. `list` prints one line per preset:
///   h100_sxm          sm_90  132 SMs  NVIDIA H100 SXM5 80GB HBM3  (h100, h100_sxm5, ...)
/// Exit 1 for an unknown name (the message lists the known ones), a broken
/// description (every problem, with its JSON path), NAME together with
/// --detect, or --detect without a device.
int arch_command(const ArchCommandOptions &opts, std::ostream &out, std::ostream &err);

struct TuneCommandOptions {
  std::string file;
  std::string func;
  std::string arch = "auto";
  std::string rule;
  int64_t topk = 20;
  /// The tuning database; "" the default (default_database_path()), "none" for none.
  std::string db;
  /// Directory of compiled cubins ("" for KernelCache::default_dir(), "none" for no cache).
  std::string cache;
  std::string json;
  std::string output_dir = "tessera_tune_out";
  std::vector<std::string> dims;
  unsigned threads = 0;
  bool no_measure = false;
  /// Measure in this process instead of the measuring worker (TuneOptions::isolate).
  bool in_process = false;
  /// One request's deadline in the worker, ms (0: derived from each candidate's estimate).
  double measure_timeout_ms = 0;
  /// Skip the SASS summaries even when cuobjdump is found (TuneOptions::read_sass).
  bool no_sass = false;
  bool progress = true;
  /// The reference's CPU executor: auto, interpreter or llvm (runtime/Oracle.h).
  std::string oracle = "auto";
  /// "gpu" (fast_tune), "cpu" (every CPU schedule, cpu/CpuSchedule.h, built
  /// by the LLVM JIT, checked against the float64 reference and timed on
  /// this machine's cores; the fastest written to `output_dir`), or "auto"
  /// (cpu for a function whose T.func_attr target is llvm or c, else gpu).
  std::string target = "auto";
  std::string cpu = "host";
  /// Also write the winner as a kernel package here (tessera::load and the
  /// dispatch library read it); "" for none.
  std::string save;
};

struct DynamicCommandOptions {
  std::string file;
  std::string func;
  std::string arch = "auto";
  /// "m=1:4096" per symbol; "m=1" (--hot) exact values with cells of their own.
  std::vector<std::string> ranges, hot;
  /// Bindings of the other symbolic dimensions ("n=4096").
  std::vector<std::string> dims;
  int64_t max_kernels = 16;
  int64_t cells_per_octave = 2;
  /// Compile the plan's kernels (through the kernel cache: "" the default
  /// directory, "none" for none).
  bool build = false;
  std::string cache;
  std::string json;
  unsigned threads = 0;
  /// Build, then measure each cell's kernel and close runners-up on the
  /// device within `budget_ms` and keep the fastest (DynamicKernel::measure);
  /// the measurements go to the tuning database `db` ("" the default, "none").
  bool measure = false;
  double budget_ms = 5000;
  /// With `measure`: the cells past the budget are measured in the
  /// background; the kernel is reported ready at the budget, then the
  /// command waits for the rest (DynamicMeasureOptions::background).
  bool background = false;
  std::string db;
};

/// Plans kernels for ranges of symbolic sizes (tune/DynamicPlan.h) and prints
/// the plan: each cell with its kernel, estimate and predicted regret, the
/// kernels, the baselines (one kernel; power-of-two buckets); `--build`
/// builds them as a DynamicKernel (tune/DynamicKernel.h) and prints its
/// counters: a cold start compiles, a warm one reads the kernel cache.
int dynamic_command(const DynamicCommandOptions &opts, std::ostream &out, std::ostream &err);

/// tuning::default_database_path(): $TESSERA_DB, else
/// $XDG_CACHE_HOME/tessera/tuning.jsonl, else ~/.cache/tessera/tuning.jsonl.
std::string default_database_path();

/// fast_tune on one function (tune/FastTune.h) and a table of every
/// candidate, ranked (by measured time, or by the policy's rank when nothing
/// could be measured), with the speed-up over the default config and the
/// status of each; with cuobjdump, a column of what the machine code does
/// (widest global load/store, local memory) and the configs it contradicts
/// (tune/SassCheck.h). The winner's scheduled TVMScript, CUDA C and cubins are
/// written to `output_dir`. `--dim` binds (specialises) symbolic dimensions.
/// With a database the stored best answers without tuning. Exit 1 when no
/// candidate survives (each one's failure listed).
int tune_command(const TuneCommandOptions &opts, std::ostream &out, std::ostream &err);
/// tune_command's target "cpu" (CpuTuneCommand.cpp), for `f` with its sizes bound.
int cpu_tune(const TuneCommandOptions &opts, const ir::PrimFunc &f, std::ostream &out, std::ostream &err);
/// "gpu" or "cpu" for a --target of "auto" (by `f`'s T.func_attr target),
/// "gpu" or "cpu"; UserError for anything else.
std::string resolve_target(const std::string &target, const ir::PrimFunc &f);

struct BenchCommandOptions {
  /// Empty: "seed004" for the GPU, "cpu" for the CPU.
  std::string suite;
  /// "gpu" (bench/TuneSuite.h, or DynamicSuite.h for a dynamic suite) or
  /// "cpu" (bench/CpuSuite.h).
  std::string target = "gpu";
  std::string cpu = "host";
  std::string out_dir = "bench/results";
  std::string arch = "auto";
  int64_t topk = 20;
  std::vector<std::string> only;
  std::string git;
  unsigned threads = 0;
  bool no_measure = false;
  /// Seconds for the whole suite (0: none); workloads that would not fit are
  /// skipped and listed as such.
  double budget_s = 0;
};

/// fast_tune over every workload of a suite (bench/TuneSuite.h): prints the
/// Markdown table and writes OUT/DATE-SUITE.{json,md,svg} ("-compile-only"
/// appended when nothing was measured), rewritten after every workload so a
/// killed run leaves what it measured. Exit 1 when a workload failed (not
/// when one was skipped for the budget).
int bench_command(const BenchCommandOptions &opts, std::ostream &out, std::ostream &err);

/// Parses "n=64" into (name, value); throws UserError on bad syntax.
std::pair<std::string, int64_t> parse_dim_binding(const std::string &text);

}  // namespace tessera::cli
