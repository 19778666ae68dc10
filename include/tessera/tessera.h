//===- tessera/tessera.h - The library, one call per use --------------------===//
//
// What a program that uses tessera includes: a function goes in, a verified
// kernel that runs comes out.
//
//   #include <tessera/tessera.h>
//
//   tessera::Target t = tessera::Target::detect();   // the GPU here, else this CPU
//   tessera::Kernel k = tessera::tune(tvmscript_text, t, {.dims = {{"rows", 4096}}});
//   k.run(arrays);                                    // host arrays (copied to the GPU and back)
//   k.run(dl_tensors, stream);                        // DLPack tensors where they live: no copies
//   std::cout << k.report().table();                  // every candidate, ranked, and why
//   k.save("softmax.tsk");                            // cubins + launch metadata, one file
//   tessera::Kernel again = tessera::load("softmax.tsk");   // runs without compiling
//
//   tessera::DynamicKernel d = tessera::dynamic(func, t, {{"m", {1, 4096}}});
//   d.run(dl_tensors, stream);                        // the kernel for these shapes, chosen per call
//
// The three uses:
//   tune     a function of static shapes (bind symbolic ones with `dims`):
//            on a GPU target the rule's policy proposes the top-k configs,
//            each is scheduled, compiled with NVRTC in parallel, verified
//            against the float64 reference and timed, and the fastest kept
//            (tune/FastTune.h); without a device nothing is timed and the
//            policy's best candidate that compiled is kept (report().measured
//            says so). On the CPU target every CPU schedule is built by the
//            LLVM JIT, verified and timed (tune/CpuTune.h).
//   dynamic  a function of symbolic sizes and their ranges: a few kernels
//            that together serve every size well, compiled once in one
//            parallel wave and kept in the kernel cache, so the next start
//            builds nothing (tune/DynamicKernel.h). GPU targets.
//   load     a saved kernel (either kind): it runs at once. A program that
//            only launches saved GPU kernels needs not this library but
//            tessera::dispatch (dispatch/Package.h, dispatch/Dispatcher.h),
//            which links no compiler.
//
// Errors: what the input or the request gets wrong is a tessera::UserError
// (script::ParseError, with FILE:LINE:COL, for TVMScript; tuning::TuneError
// when no candidate survived, listing each one's failure); a bug in tessera
// is an InternalError. Every other header under tessera/ is the library's
// inside: usable, documented, but not the interface this file keeps stable.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/support/Error.h"

namespace tessera {

namespace tuning {
struct TuneResult;
struct CpuTuneResult;
}  // namespace tune

/// Where a kernel runs: a GPU, described by an Arch (arch/*.json), or this
/// machine's CPU (the LLVM JIT).
class Target {
 public:
  /// The GPU of device 0 when there is a usable one, else this CPU.
  static Target detect();
  /// The GPU of device 0 when there is one, else the preset `fallback`
  /// (compile-only: nothing can be timed); note() then says so.
  static Target detect_gpu(std::string_view fallback = "h100");
  /// A GPU preset by name or alias ("h100", "a100", "RTX 4090"), or an arch
  /// description file (*.json). UserError listing the presets otherwise.
  static Target gpu(std::string_view name);
  /// The GPU `arch` describes.
  static Target gpu(const Arch &arch);
  /// This machine's CPU.
  static Target cpu();
  /// "cpu", "auto" (detect()), or a GPU name as gpu() takes it.
  static Target parse(std::string_view name);

  bool is_cpu() const { return cpu_; }
  bool is_gpu() const { return !cpu_; }
  /// The GPU's description; UserError on a CPU target.
  const Arch &arch() const;
  /// "cpu (x86_64, 2 threads)" or the Arch's name and compute capability.
  std::string str() const;
  /// How the target was chosen, when that is worth telling ("no CUDA device:
  /// ...; tuning for h100 without measuring"); "" otherwise.
  const std::string &note() const { return note_; }

 private:
  bool cpu_ = true;
  std::shared_ptr<const Arch> arch_;
  std::string note_;
};

/// One candidate of a tune, as the report lists it.
struct Candidate {
  std::string origin;  ///< "policy #3", "default", "plain (as written)", ...
  std::string config;  ///< the config, as the rule prints it
  /// "ok", "schedule_error", "build_error", "launch_error", "wrong_answer".
  std::string status;
  std::string error;   ///< why it failed ("" when ok)
  bool measured = false;
  double time_us = 0;      ///< median, when measured
  double estimate_us = 0;  ///< the policy's estimate (GPU; 0 when none)
};

/// What a tune did: the candidates ranked (fastest first when measured,
/// else in the policy's order; failures last), the winner first among them.
struct Report {
  std::string target;  ///< Target::str()
  std::string rule;    ///< the rule tuned ("cpu" for the CPU target)
  bool measured = false;
  std::string why_unmeasured;  ///< "" when measured
  /// What computed the reference output ("llvm", "interpreter", ...).
  std::string reference;
  bool from_database = false;
  /// Why the database was not used, or not answered from ("" when it was, or none was given).
  std::string database_note;
  std::vector<Candidate> ranked;
  double tune_ms = 0;
  /// Everything the tuner recorded, as JSON (tuning::to_json for a GPU).
  std::string json;
  /// The ranked candidates as a text table, one line each.
  std::string table() const;
};

struct TuneOptions {
  /// Values for the function's symbolic sizes (the function is specialised
  /// to them first). Sizes left symbolic stay so in the kernel: it serves
  /// any value, read from the arguments' shapes.
  std::map<std::string, int64_t> dims;
  /// Which function of a module of several (TVMScript); "" = the only one, or "main".
  std::string func;
  /// GPU: the policy's candidates (the rule's default config comes on top).
  int64_t topk = 20;
  /// GPU: tune this rule only; "" = the first that matches.
  std::string rule;
  /// Workers for scheduling and compiling; 0 = every core.
  unsigned threads = 0;
  /// GPU: verify and time on the device when there is one.
  bool measure = true;
  /// The tuning database (a JSON-lines file): answered from when it holds
  /// this workload, appended to otherwise; "" = none.
  std::string database;
  /// Where compiled kernels are kept across runs; "" = none,
  /// "default" = $TESSERA_CACHE or ~/.cache/tessera/kernels.
  std::string kernel_cache;
  /// Called as work completes: (phase, done, total), from the calling thread.
  std::function<void(const std::string &phase, int done, int total)> progress;
};

/// One buffer parameter of a kernel's function, in order.
struct Parameter {
  std::string name;
  std::string dtype;     ///< as TVMScript names it: "float16", "int32"
  bool written = false;  ///< an output (or updated in place)
};

/// A tuned function, ready to run. Cheap to copy (copies share the built
/// kernel). Running from several threads at once is safe on the CPU; on a
/// GPU, launches of one Kernel must not overlap when its function runs as
/// several kernels (they share a workspace).
class Kernel {
 public:
  Kernel();
  const Target &target() const;
  /// The tuned function's name.
  const std::string &name() const;
  const Report &report() const;
  /// The winner as scheduled TVMScript (replayable with `tessera schedule`).
  const std::string &script() const;
  /// Its CUDA C, one kernel after another ("" on the CPU).
  const std::string &cuda_source() const;
  /// The function's symbolic sizes (empty: static shapes).
  const std::vector<std::string> &symbols() const;
  /// Its buffer parameters, in the order run() takes them.
  std::vector<Parameter> parameters() const;

  /// Runs on host arrays, one per buffer parameter, in order; outputs are
  /// written in place. On a GPU they are copied to the device and back.
  /// UserError for arrays of the wrong number, dtype or shape.
  void run(std::vector<runtime::NDArray> &args) const;
  /// Runs on DLPack tensors, one per buffer parameter, where they are: host
  /// memory for the CPU target, the target's device (device_id = ordinal)
  /// for a GPU, enqueued on `stream` (a CUstream; null = the default
  /// stream) without copies. Compact row-major tensors of the parameters'
  /// dtypes; the symbolic sizes are read from their shapes.
  void run(const std::vector<DLTensor *> &args, void *stream = nullptr) const;
  /// Runs a GPU kernel on device pointers, one per buffer parameter, at
  /// `sizes` (one per symbol, in symbols() order), enqueued on `stream`.
  /// UserError on the CPU target, for sizes outside the kernel's ranges or
  /// too few pointers.
  void run(const std::vector<uint64_t> &device_pointers, const std::vector<int64_t> &sizes,
           void *stream = nullptr) const;

  /// Writes the kernel package (dispatch/Package.h): for a GPU the cubins,
  /// launch metadata and tensor-map encodings of every cell, for the CPU the
  /// scheduled function; with the report. UserError when it cannot be written.
  void save(const std::string &path) const;

  struct Impl;
  explicit Kernel(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  const Impl &impl() const { return *impl_; }

 protected:
  std::shared_ptr<Impl> impl_;
};

/// Tunes `func` for `target` (see the file comment).
Kernel tune(const ir::PrimFunc &func, const Target &target, const TuneOptions &options = {});
/// Tunes the function of TVMScript `text` (options.func picks one of several);
/// `file` names the text in parse errors.
Kernel tune(std::string_view text, const Target &target, const TuneOptions &options = {},
            const std::string &file = "<text>");

/// The range of one symbolic size, inclusive.
struct SizeRange {
  int64_t lo = 1, hi = 4096;
  /// Sizes served all the time (decode's m = 1): they get kernels of their own.
  std::vector<int64_t> hot;
};

struct DynamicOptions {
  /// The most kernels the plan may compile.
  int64_t max_kernels = 16;
  /// Values for symbolic sizes that are not in the ranges (bound first).
  std::map<std::string, int64_t> dims;
  /// NVRTC workers; 0 = every core.
  unsigned threads = 0;
  /// As TuneOptions::kernel_cache; a warm start needs one.
  std::string kernel_cache = "default";
  /// Where measure() records what it times (a JSON-lines tuning database);
  /// "" = nowhere.
  std::string database;
};

/// One function of a model and the ranges of its sizes, for dynamic() of
/// several at once.
struct DynamicRequest {
  ir::PrimFunc func;
  std::map<std::string, SizeRange> ranges;
  /// Sizes the model fixes (bound first).
  std::map<std::string, int64_t> dims;
};

/// What a start of a dynamic kernel did.
struct DynamicCounters {
  bool warm = false;
  int64_t kernels = 0, nvrtc_compiles = 0, cache_reads = 0, rule_applications = 0, policy_calls = 0;
  double plan_ms = 0, build_ms = 0, total_ms = 0;
  /// "cold start: 8 kernels, 8 NVRTC compiles, ...".
  std::string str() const;
};

/// A function's kernels for ranges of its sizes: a Kernel whose run() picks
/// the kernel for the arguments' shapes on every call.
class DynamicKernel : public Kernel {
 public:
  using Kernel::Kernel;
  /// Whether this start read everything back from the kernel cache.
  bool warm() const { return counters().warm; }
  DynamicCounters counters() const;
  /// Which of its kernels serves `sizes` (one per symbol, in symbols()
  /// order). UserError naming the size outside the planned ranges.
  int kernel_for(const std::vector<int64_t> &sizes) const;
  /// The plan as JSON: its rule, its cells (bounds, kernel, estimates), the
  /// predicted regret against the best estimate, and two baselines (one
  /// kernel for the hint; power-of-two buckets).
  std::string plan() const;
  /// Times, within `budget_ms`, each cell's kernel and its close runners-up
  /// on the device and keeps the fastest (a GPU needed: UserError without
  /// one); the kernel cache's plan is rewritten so later starts use it, and
  /// each time is recorded in DynamicOptions::database. Returns what it did,
  /// one line.
  std::string measure(double budget_ms = 5000);
};

/// Plans, builds and (warm) reloads the kernels of `func` for `ranges` (one
/// per symbolic size not in options.dims). UserError for a CPU target, a
/// symbol without a range, or a function no rule schedules.
DynamicKernel dynamic(const ir::PrimFunc &func, const Target &target, const std::map<std::string, SizeRange> &ranges,
                      const DynamicOptions &options = {});
/// A model's functions at once: their plans in parallel, then every kernel
/// of every cold one in one NVRTC wave (warm ones are read back).
std::vector<DynamicKernel> dynamic(const std::vector<DynamicRequest> &requests, const Target &target,
                                   const DynamicOptions &options = {});

/// A saved kernel (Kernel::save), ready to run: a GPU one as it was built, a
/// CPU one compiled by the LLVM JIT. UserError naming the file for one that
/// is missing, damaged, or for a CPU target this build cannot run.
Kernel load(const std::string &path);

/// The Kernel of a result of tuning::fast_tune for `target` (what tune() does
/// after tuning): the plan of the winner, its cubins the ones the tune
/// compiled (else compiled now, through `kernel_cache` as TuneOptions
/// names it). For programs that run fast_tune themselves (the CLI).
Kernel kernel_of(const tuning::TuneResult &result, const Target &target, const std::string &kernel_cache = "");
/// The Kernel of a result of tuning::tune_for_cpu: its fastest verified
/// schedule, built by the LLVM JIT. UserError when none verified.
Kernel kernel_of(const tuning::CpuTuneResult &result);

/// Parses TVMScript into its functions (`file` names it in errors).
ir::Module parse(std::string_view text, const std::string &file = "<text>");

}  // namespace tessera
