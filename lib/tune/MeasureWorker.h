//===- lib/tune/MeasureWorker.h - Candidates measured in a worker process --===//
//
// The tuner's side of isolated measurement (Measurer.h). The worker program
// (tune/MeasureWorkerMain.h, `tessera-measure-worker`) is spawned with
// a socket as its standard input and output and a pipe as its standard
// error; each request is one JSON line, each answer one JSON line:
//
//   {"op": "start", "context": MeasureContext}
//       -> {"ok": true, "reference": "llvm", "reference_ms": 12.5}
//   {"op": "measure", "index": 3, "candidate": CandidateSpec}
//       -> {"ok": true, "measurement": Measurement}
//   {"op": "time", "index": 3, "candidate": CandidateSpec, "budget_ms": 50}
//       -> {"ok": true, "samples_ms": [...]}
//   any failure of the request itself -> {"ok": false, "error": "..."}
//
// The worker is started once per run and reused while healthy. Each request
// has a deadline; past it a watchdog kills the worker (SIGKILL) and the
// candidate is a `timeout`. A worker that dies (a signal, an exit) fails its
// candidate as a `launch_error` naming the signal and the last lines it wrote
// to its standard error; one that reports a sticky fault (Measurement::fatal)
// exits by itself. Either way the next candidate gets a fresh worker, which
// makes the inputs and the reference again.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "Measurer.h"

namespace tessera::tuning {

/// The worker program: $TESSERA_MEASURE_WORKER when set (UserError when
/// that is not a program), else
/// `tessera-measure-worker` beside the running program or library (or in its
/// ../libexec/tessera), else the one this build made; nullopt when none is
/// found (`looked` gets the places tried).
std::optional<std::filesystem::path> find_measure_worker(std::string *looked = nullptr);

class WorkerMeasurer : public CandidateMeasurer {
 public:
  /// `timeouts_ms[i]`: candidate i's deadline for one request; `start_timeout_ms`
  /// the deadline of a worker's start (the reference).
  WorkerMeasurer(std::filesystem::path program, MeasureContext ctx, std::vector<CandidateSpec> specs,
                 std::vector<double> timeouts_ms, double start_timeout_ms);
  ~WorkerMeasurer() override;
  WorkerMeasurer(const WorkerMeasurer &) = delete;
  WorkerMeasurer &operator=(const WorkerMeasurer &) = delete;

  /// Starts the first worker; Error with the worker's reason when it cannot
  /// start or make the reference.
  void start() override;
  const std::string &reference_how() const override { return reference_how_; }
  double reference_ms() const override { return reference_ms_; }
  Measurement measure(size_t index) override;
  std::optional<std::vector<double>> time_samples(size_t index, double budget_ms) override;
  std::string isolation() const override;
  int workers_started() const override { return started_; }

 private:
  struct Process {
    pid_t pid = -1;
    int channel = -1;  ///< the socket: requests out, answers in
    int errors = -1;   ///< the worker's standard error
  };
  enum class Outcome { Answered, TimedOut, Died };
  /// Sends `request` and waits up to `timeout_ms` for the answer line.
  Outcome exchange(const nlohmann::json &request, double timeout_ms, nlohmann::json &answer, std::string &why);
  void spawn();
  /// Kills the worker (when `kill`) and reaps it; "" or how it ended.
  std::string end_worker(bool kill);
  /// Reads what the worker wrote to its standard error so far (the last 2 KB kept).
  void drain_errors();
  /// A worker ready for requests; Error when a fresh one cannot start.
  void ensure_worker();

  std::filesystem::path program_;
  MeasureContext ctx_;
  nlohmann::json context_json_;
  std::vector<CandidateSpec> specs_;
  std::vector<double> timeouts_ms_;
  double start_timeout_ms_;
  Process proc_;
  std::string stderr_tail_, pending_;
  std::string reference_how_;
  double reference_ms_ = 0;
  int started_ = 0;
};

}  // namespace tessera::tuning
