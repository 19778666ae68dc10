//===- lib/tune/MeasureWorkerMain.cpp - The measuring worker's program -----===//
#include "tessera/tune/MeasureWorkerMain.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "Measurer.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/script/Parser.h"
#include "tessera/support/Error.h"

namespace tessera::tuning {

using nlohmann::json;

namespace {

/// One worker's state between requests.
struct Worker {
  std::unique_ptr<LocalMeasurer> local;
  std::map<size_t, std::unique_ptr<runtime::Executable>> built;

  const runtime::Executable &candidate(size_t index, const CandidateSpec &spec) {
    auto it = built.find(index);
    if (it == built.end()) it = built.emplace(index, build_candidate(local->context(), spec)).first;
    return *it->second;
  }

  json start(const json &request) {
    MeasureContext ctx = measure_context_from_json(request.at("context"));
    if (!ctx.simulate && runtime::driver_status() != runtime::DriverStatus::Ok)
      return json{{"ok", false}, {"error", "no CUDA device: " + runtime::driver_message()}};
    try {
      local = std::make_unique<LocalMeasurer>(std::move(ctx));
    } catch (const Error &e) {
      return json{{"ok", false}, {"error", std::string("cannot make the reference output: ") + e.what()}};
    }
    return json{{"ok", true}, {"reference", local->reference_how()}, {"reference_ms", local->reference_ms()}};
  }

  /// A planted fault of kind `kind` (Measurer.h), as the device shows it.
  Measurement planted(const CandidateSpec &spec, const std::string &kind) {
    if (kind == "crash") {
      ::signal(SIGSEGV, SIG_DFL);  // dies of it, whatever handler a sanitizer installed
      ::raise(SIGSEGV);
    }
    Measurement m;
    m.status = CandidateStatus::LaunchError;
    if (local->context().simulate) {
      if (kind == "hang")
        for (;;) ::pause();
      m.fatal = kind == "illegal_address";
      m.error = fmt::format("CUDA_ERROR_{} (simulated: planted {})",
                            kind == "illegal_address" ? "ILLEGAL_ADDRESS" : "INVALID_VALUE", kind);
      return m;
    }
    try {
      ir::PrimFunc f = script::parse_func(planted_fault_program(kind), "<planted " + kind + ">");
      runtime::CudaFunction fn = runtime::CudaFunction::build(f, {.arch = spec.target});
      std::vector<runtime::NDArray> args = runtime::make_random_args(f, {}, 1);
      fn.run(args);
      m.error = "the planted " + kind + " kernel ran without a fault";
    } catch (const Error &e) {
      m.error = e.what();
      m.fatal = is_sticky_cuda_error(e.what());
    }
    return m;
  }

  json measure(const json &request) {
    if (!local) return json{{"ok", false}, {"error", "measure before start"}};
    size_t index = request.at("index").get<size_t>();
    CandidateSpec spec = candidate_spec_from_json(request.at("candidate"));
    Measurement m;
    if (!spec.planted.empty() && spec.planted != "wrong_answer") {
      m = planted(spec, spec.planted);
    } else {
      const runtime::Executable *exe = nullptr;
      try {
        exe = &candidate(index, spec);
      } catch (const Error &e) {
        return json{{"ok", false}, {"error", std::string("the worker cannot rebuild the candidate: ") + e.what()}};
      }
      m = local->measure(*exe, spec.planted);
    }
    return json{{"ok", true}, {"measurement", to_json(m)}};
  }

  json time(const json &request) {
    if (!local) return json{{"ok", false}, {"error", "time before start"}};
    size_t index = request.at("index").get<size_t>();
    CandidateSpec spec = candidate_spec_from_json(request.at("candidate"));
    try {
      return json{{"ok", true},
                  {"samples_ms", local->time_samples(candidate(index, spec), request.at("budget_ms").get<double>())}};
    } catch (const Error &e) {
      return json{{"ok", false}, {"error", e.what()}};
    }
  }
};

}  // namespace

int measure_worker_main(int argc, char **argv) {
  // The tuner's death ends the worker too (a kernel that spins would keep
  // the device otherwise).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (argc > 1 && ::getppid() != std::atoi(argv[1])) return 4;
  // Answers go to the original standard output; whatever the libraries
  // print lands on standard error, away from the protocol.
  int answers = ::dup(1);
  ::dup2(2, 1);
  FILE *out = ::fdopen(answers, "w");
  if (!out) return 5;
  Worker worker;
  for (std::string line; std::getline(std::cin, line);) {
    json answer;
    bool fatal = false;
    try {
      json request = json::parse(line);
      const std::string op = request.at("op").get<std::string>();
      if (op == "start") answer = worker.start(request);
      else if (op == "measure") answer = worker.measure(request);
      else if (op == "time") answer = worker.time(request);
      else answer = json{{"ok", false}, {"error", "no request named '" + op + "'"}};
      fatal = answer.contains("measurement") && answer["measurement"].value("fatal", false);
    } catch (const std::exception &e) {
      answer = json{{"ok", false}, {"error", std::string("the worker cannot serve the request: ") + e.what()}};
    }
    std::string text = answer.dump() + "\n";
    std::fwrite(text.data(), 1, text.size(), out);
    std::fflush(out);
    if (fatal) return 3;
  }
  return 0;
}

}  // namespace tessera::tuning
