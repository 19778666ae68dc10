//===- tessera/tune/FastTune.h - The fastest verified kernel among the top-k -===//
//
// One call from a function to its best kernel:
//
//   tuning::TuneResult r = tuning::fast_tune(func, Arch::by_name("h100"), {.topk = 20});
//   r.best_func;            // the scheduled PrimFunc of the winner
//   r.candidates[r.best];   // its config, status, time, CUDA source, cubin
//
// What it does, in order:
//   1. match the rules (specific first, the fallback last: the first rule that
//      matches is tuned; should every one of its candidates fail to schedule,
//      the next matching rule is tried, down to the fallback);
//   2. the policy's top-k configs (policies::propose) plus the rule's default
//      config (kept once if the policy proposed it too);
//   3. every candidate scheduled, lowered and printed, then compiled with NVRTC,
//      all on a pool of `threads` workers (all cores by default); then, when
//      cuobjdump is found (`read_sass`), the cubins are disassembled together
//      (runtime::summarise_cubins: a disassembler run costs more than a
//      compile, so all candidates share one) on another thread while step 4
//      measures, and a config whose machine code contradicts it gets a
//      warning (tune/SassCheck.h);
//   4. on a device (when `measure` and the driver is usable): the inputs are
//      random and never zero; the reference is the unscheduled function in
//      float64 with its rounding-error bounds (runtime/Verify.h), computed by
//      the interpreter when the function is small (`interpreter_limit` loop
//      iterations), otherwise on the device through the fallback rule
//      (tune/Reference.h). Every candidate runs and is checked against it
//      (runtime::check_outputs: each element within what rounding explains),
//      then timed (KernelTimer: warm-up, median, L2 flushed);
//      the leaders within `retime_within` of the fastest are timed again,
//      interleaved, with a longer budget, and the fastest median wins;
//   5. without a device (or with measure = false, or inputs too large at the
//      symbolic hint, or no reference) nothing is timed: the policy's
//      best-ranked candidate that compiled wins, and `measured` and
//      `why_unmeasured` say so.
// A candidate that fails anywhere (schedule, lowering, compile, launch, wrong
// answer) is recorded with its status and message and skipped; fast_tune
// throws a TuneError only when no candidate survives, listing each one's
// failure.
//
// With a Database (`options.db`), the stored best for this workload and
// device is returned without tuning when there is one (`from_db`), and every
// measured candidate is appended afterwards (tune/Database.h). Nothing is
// stored from a run that measured nothing, and a function with symbolic
// dimensions is tuned without the database (its key needs shapes:
// specialize it first, as `tessera tune --dim` does).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tessera/arch/Arch.h"
#include "tessera/ir/Func.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/Sass.h"
#include "tessera/support/Error.h"

namespace tessera::tuning {

class Database;

/// No candidate survived; what() lists every candidate's failure.
class TuneError : public UserError {
 public:
  using UserError::UserError;
};

enum class CandidateStatus {
  Ok,             ///< compiled; verified and timed when measured
  ScheduleError,  ///< the rule's apply refused the config
  BuildError,     ///< lowering, code generation or NVRTC failed
  LaunchError,    ///< the driver refused the launch or the kernel faulted
  WrongAnswer,    ///< ran, but its output differs from the reference
  /// A bug in tessera while scheduling or building it (an InternalError, or
  /// an exception that is not a tessera error): counted apart from the
  /// candidates the config or the compiler refused, with the message.
  InternalError,
  /// Did not finish within its deadline in the measuring worker (a hang): the
  /// watchdog killed the worker (tune/MeasureWorkerMain.h).
  Timeout,
};
const char *to_string(CandidateStatus s);

/// Where the wall time went (milliseconds). The per-candidate phases run in
/// parallel, so `schedule_ms + codegen_ms + nvrtc_ms` is CPU time summed over
/// workers; `compile_wall_ms` is the wall time of that parallel phase.
struct TunePhases {
  double match_ms = 0;
  double policy_ms = 0;
  double schedule_ms = 0;  ///< rule.apply, summed
  double codegen_ms = 0;   ///< lowering + CUDA C, summed
  double nvrtc_ms = 0;     ///< NVRTC, summed
  double compile_wall_ms = 0;
  double sass_ms = 0;  ///< disassembling and summarising every candidate (wall; overlaps reference and measure)
  double reference_ms = 0;  ///< computing the reference output
  double measure_ms = 0;    ///< verifying and timing on the device
  double total_ms = 0;
};

struct CandidateReport {
  std::string origin;      ///< "policy #3", "default", "policy #1 = default"
  std::string config;      ///< Config::str()
  double policy_score = 0; ///< the policy's estimate (microseconds); 0 for the default
  std::string policy_why;
  CandidateStatus status = CandidateStatus::Ok;
  std::string error;       ///< the failure, one paragraph; "" when Ok
  bool measured = false;
  double time_us = 0;      ///< median; measured only
  /// The worst output element's |got - ref| / bound (runtime/Verify.h; at
  /// most 1 when verified); measured candidates only.
  double error_ratio = 0;
  int registers = 0, spill_bytes = 0;  ///< of the costliest kernel (ptxas)
  int64_t shared_bytes = 0;
  double compile_ms = 0;   ///< NVRTC, all kernels
  ir::PrimFunc func;       ///< the scheduled function (undefined when not scheduled)
  std::vector<std::string> sources;         ///< CUDA C per kernel
  std::vector<std::vector<uint8_t>> cubins; ///< per kernel
  /// The machine code's instruction mix, every kernel summed (runtime/Sass.h);
  /// absent when not built, not disassembled (no cuobjdump, or `read_sass`
  /// off) or when disassembling failed (`sass_error` says why).
  std::optional<runtime::SassSummary> sass;
  std::string sass_error;
  /// Where the machine code contradicts the config, "" when it does not
  /// (tune/SassCheck.h): "sass: asks for vector 8 (16 bytes) but its widest
  /// global access is 2 bytes". Not a failure.
  std::string sass_warning;
};

struct TuneOptions {
  /// Policy candidates (the default config comes on top).
  int64_t topk = 20;
  /// Tune this rule only (its name); empty: the first rule that matches.
  std::string rule;
  /// Workers for scheduling and compiling; 0: all cores.
  unsigned threads = 0;
  /// Verify and time on the device when there is one.
  bool measure = true;
  /// Values of symbolic dimensions for the measured inputs; unbound ones get
  /// `symbolic_hint`, which also sizes the policy's tiles.
  runtime::DimBindings dims;
  int64_t symbolic_hint = 4096;
  /// Nothing is measured when the arguments would take more bytes than this
  /// (symbolic sizes at the hint); the reason is reported.
  double max_input_bytes = 4e9;
  /// Use the interpreter for the reference up to this many loop iterations.
  int64_t interpreter_limit = int64_t(1) << 22;
  /// The CPU executor of the reference (tune/Reference.h, runtime/Oracle.h):
  /// auto = the LLVM JIT when it compiles the program, before the device.
  runtime::Oracle oracle = runtime::Oracle::Auto;
  /// Timing budgets per candidate (ms), then for the leaders.
  double warmup_ms = 5, measure_budget_ms = 25;
  double retime_ms = 100;
  /// Leaders within this fraction of the fastest median are re-timed.
  double retime_within = 0.03;
  uint64_t seed = 1;
  /// Summarise every built candidate's SASS when runtime::find_disassembler()
  /// finds cuobjdump (a few disassembler runs for all candidates, ~0.3 s of
  /// CPU each: runtime::summarise_cubins).
  bool read_sass = true;
  /// Consulted before tuning and appended to afterwards; may be null.
  Database *db = nullptr;
  /// Compiled candidates kept on disk: a candidate compiled before (the same
  /// CUDA C for the same target and toolchain) is read, not compiled. May be null.
  runtime::KernelCache *kernel_cache = nullptr;
  /// Verify and time in a worker process that owns the CUDA context
  /// (tune/MeasureWorkerMain.h): a candidate that faults or hangs fails
  /// alone (launch_error, timeout) and a fresh worker measures the next.
  /// Without a worker program, or with false, they run in this process.
  bool isolate = true;
  /// A candidate's deadline in the worker (ms); 0: derived from its estimate
  /// (at least 10 s).
  double measure_timeout_ms = 0;
  /// Tests without a GPU: measure as if there were a device, the interpreter
  /// running each candidate (in the worker when isolating), with the
  /// device's faults simulated (TESSERA_PLANT_FAULT, lib/tune/Measurer.h).
  bool simulate_device = false;
  /// Called as work completes: (phase, done, total), phase one of
  /// "compile", "measure". From the calling thread only.
  std::function<void(const std::string &, int, int)> progress;
};

struct TuneResult {
  std::string rule;
  std::string arch;        ///< the Arch's fingerprint
  std::string device;      ///< the device measured on; "" when none
  bool measured = false;   ///< false: the winner is the policy's pick, untimed
  std::string why_unmeasured;  ///< "no CUDA device: ...", "measure = false"
  /// What computed the reference output: "llvm", "interpreter" or "device
  /// (fallback rule, float64)"; "" when none was computed.
  std::string reference;
  /// Where the candidates were measured: "worker (N started)", "in-process"
  /// or "in-process (why)"; "" when nothing was measured.
  std::string isolation;
  int workers_started = 0;
  bool from_db = false;    ///< answered from the database without tuning
  /// Why the database was not used or not answered from ("" when it was, or none given).
  std::string db_note;
  /// The rules that matched before `rule` but whose every candidate failed.
  std::vector<std::string> rules_abandoned;
  /// The cuobjdump that summarised the candidates; "" when none did.
  std::string sass_tool;
  /// Why the candidates have no SASS summaries ("" when they have, or
  /// read_sass was off): runtime::kNoDisassemblerHint when there is no tool.
  std::string sass_note;
  std::vector<CandidateReport> candidates;  ///< in proposal order: policy ranks, then the default
  int best = -1;           ///< index into candidates
  int default_index = -1;  ///< the rule's default config among candidates
  ir::PrimFunc best_func;
  TunePhases phases;

  const CandidateReport &winner() const { return candidates.at(best); }
  /// The default config's measured time over the winner's; 0 when either was not measured.
  double speedup_over_default() const;
};

/// See the file comment. The function may be scheduled already: then it is
/// compiled (and measured) as it is, one candidate with rule "".
TuneResult fast_tune(const ir::PrimFunc &func, const Arch &arch, const TuneOptions &options = {});

/// The result for `tessera tune --json`: rule, arch, device, measured, phases,
/// and every candidate (origin, config as JSON, status, error, time, policy
/// score, resources, the SASS summary and its warning), without sources and cubins.
nlohmann::ordered_json to_json(const TuneResult &r);

}  // namespace tessera::tuning
