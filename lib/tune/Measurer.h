//===- lib/tune/Measurer.h - Verifying and timing one candidate at a time --===//
//
// Step 4 of fast_tune is a loop over the built candidates (Measure.cpp);
// what runs a candidate is a CandidateMeasurer:
//
//   - InProcessMeasurer: in the tuner's own process and CUDA context (what
//     fast_tune did before isolation; kept for TuneOptions::isolate = false
//     and for a build that has no worker program);
//   - WorkerMeasurer (MeasureWorker.h): in a worker process that owns the
//     CUDA context, spoken to over a pipe, killed by a watchdog when a
//     candidate hangs and started afresh after any fault.
//
// Both run the same LocalMeasurer: the inputs (runtime::make_random_args),
// the float64 reference (tune/Reference.h), and per candidate a copy of the
// inputs as its own outputs, one run, the check, the timing. The worker
// program (tune/MeasureWorkerMain.h) is a LocalMeasurer behind a
// JSON-lines loop; MeasureContext and CandidateSpec travel as JSON.
//
// Planted faults (tests only): TESSERA_PLANT_FAULT="K:KIND[,K:KIND...]" makes
// candidate K fault in the worker, KIND one of
//   crash            the worker dies of a signal (SIGSEGV) while running it;
//   hang             it never finishes (on a GPU: a kernel that spins);
//   launch_error     the launch is refused (on a GPU: a block of 2048 threads);
//   illegal_address  a sticky fault that poisons the context (on a GPU: a
//                    kernel that stores far past its buffer), the worker ends;
//   wrong_answer     its output is perturbed after the run.
// With MeasureContext::simulate (no GPU needed) the worker runs candidates on
// the interpreter and simulates each fault the way the device shows it; on a
// GPU the planted kernels are real (planted_fault_program).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/arch/Arch.h"
#include "tessera/runtime/Backend.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/Verify.h"
#include "tessera/tune/FastTune.h"

namespace tessera::tuning {

/// What the measuring needs besides the candidates, the same in the tuner
/// and in its worker.
struct MeasureContext {
  ir::PrimFunc func;            ///< unscheduled: the reference's program
  Arch arch;
  runtime::DimBindings dims;    ///< every symbolic size bound (complete_dims)
  uint64_t seed = 1;
  int64_t interpreter_limit = int64_t(1) << 22;
  runtime::Oracle oracle = runtime::Oracle::Auto;
  double warmup_ms = 5, measure_ms = 25;
  /// The kernel cache the tuner compiled through ("" none): the worker's
  /// builds of the candidates read their cubins from it.
  std::string cache_dir;
  /// No device: the interpreter runs the candidates and the device's
  /// faults are simulated (tests of the isolation on a machine without a GPU).
  bool simulate = false;
};

/// One candidate as the worker receives it: its scheduled function as
/// TVMScript and the CUDA target it was compiled for.
struct CandidateSpec {
  std::string text;
  std::string target;   ///< "sm_90a"
  std::string planted;  ///< a planted fault's kind ("" none)
};

/// What measuring one candidate found.
struct Measurement {
  CandidateStatus status = CandidateStatus::Ok;
  std::string error;
  bool measured = false;
  double time_us = 0, error_ratio = 0;
  /// The loaded kernel's attributes (the driver's word; 0 when unknown).
  int registers = 0;
  int64_t static_shared_bytes = 0;
  /// The device is unusable after this candidate (a sticky CUDA error, or
  /// the worker died): a fresh worker measures the next one.
  bool fatal = false;
};

nlohmann::json to_json(const MeasureContext &c);
MeasureContext measure_context_from_json(const nlohmann::json &j);
nlohmann::json to_json(const CandidateSpec &s);
CandidateSpec candidate_spec_from_json(const nlohmann::json &j);
nlohmann::json to_json(const Measurement &m);
Measurement measurement_from_json(const nlohmann::json &j);
/// The status named by to_string(CandidateStatus); InternalError for another name.
CandidateStatus candidate_status_from_string(const std::string &s);

/// Whether a CUDA error message names a sticky error: one after which the
/// context refuses every later call (an illegal or misaligned address, an
/// illegal instruction, a trap or assert, a stack error, an unspecified
/// launch failure). The process must end for the device to be used again.
bool is_sticky_cuda_error(std::string_view message);

/// The planted faults of TESSERA_PLANT_FAULT, by candidate index (see the
/// file comment); UserError for a malformed value.
std::map<size_t, std::string> planted_faults();

/// The real GPU program of a planted fault (TVMScript): what a candidate of
/// that kind is replaced by on a device. "" for a kind with no kernel (crash,
/// wrong_answer).
std::string planted_fault_program(const std::string &kind);

/// The inputs, the reference and the per-candidate run, check and timing.
class LocalMeasurer {
 public:
  /// Makes the inputs and the reference; Error when either cannot be made.
  explicit LocalMeasurer(MeasureContext ctx);
  const MeasureContext &context() const { return ctx_; }
  /// What computed the reference ("llvm", "interpreter", ...).
  const std::string &reference_how() const { return how_; }
  double reference_ms() const { return reference_ms_; }
  /// Runs `exe` on a copy of the inputs, checks its outputs, times it.
  /// `planted` perturbs the check (wrong_answer only; the worker plants the
  /// other kinds around this call).
  Measurement measure(const runtime::Executable &exe, const std::string &planted = "") const;
  /// Timing samples (ms) of `exe` on the inputs, within `budget_ms`.
  std::vector<double> time_samples(const runtime::Executable &exe, double budget_ms) const;

 private:
  MeasureContext ctx_;
  std::vector<runtime::NDArray> inputs_;
  runtime::Reference want_;
  std::string how_;
  double reference_ms_ = 0;
};

/// Runs the candidates of one fast_tune; index i is the i-th report's.
class CandidateMeasurer {
 public:
  virtual ~CandidateMeasurer() = default;
  /// Starts measuring: the reference. Error when it cannot be made.
  virtual void start() = 0;
  virtual const std::string &reference_how() const = 0;
  virtual double reference_ms() const = 0;
  virtual Measurement measure(size_t index) = 0;
  /// Timing samples of candidate `index` (measured before), or nullopt when
  /// they could not be taken.
  virtual std::optional<std::vector<double>> time_samples(size_t index, double budget_ms) = 0;
  /// "in-process" or "worker" (with how many were started).
  virtual std::string isolation() const = 0;
  virtual int workers_started() const { return 0; }
};

/// The candidates in the tuner's process, through their built executables.
class InProcessMeasurer : public CandidateMeasurer {
 public:
  InProcessMeasurer(MeasureContext ctx, std::vector<const runtime::Executable *> fns, std::string why = "")
      : ctx_(std::move(ctx)), fns_(std::move(fns)), why_(std::move(why)) {}
  void start() override;
  const std::string &reference_how() const override { return local_->reference_how(); }
  double reference_ms() const override { return local_->reference_ms(); }
  Measurement measure(size_t index) override { return local_->measure(*fns_.at(index)); }
  std::optional<std::vector<double>> time_samples(size_t index, double budget_ms) override;
  std::string isolation() const override { return why_.empty() ? "in-process" : "in-process (" + why_ + ")"; }

 private:
  MeasureContext ctx_;
  std::vector<const runtime::Executable *> fns_;
  std::string why_;
  std::unique_ptr<LocalMeasurer> local_;
};

/// Builds a candidate for the worker: the CUDA function of `spec` (its
/// cubins from `ctx.cache_dir` when there), or its interpreter when
/// simulating. Error when it does not parse or build.
std::unique_ptr<runtime::Executable> build_candidate(const MeasureContext &ctx, const CandidateSpec &spec);

}  // namespace tessera::tuning
