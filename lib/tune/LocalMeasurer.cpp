//===- lib/tune/LocalMeasurer.cpp - One candidate run, checked and timed ---===//
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "Measure.h"
#include "Measurer.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"
#include "tessera/tune/Reference.h"

namespace tessera::tuning {

using nlohmann::json;

json to_json(const MeasureContext &c) {
  return json{{"func", script::print(c.func)},
              {"arch", json::parse(c.arch.to_json().dump())},
              {"dims", c.dims},
              {"seed", c.seed},
              {"interpreter_limit", c.interpreter_limit},
              {"oracle", runtime::oracle_name(c.oracle)},
              {"warmup_ms", c.warmup_ms},
              {"measure_ms", c.measure_ms},
              {"cache_dir", c.cache_dir},
              {"simulate", c.simulate}};
}

MeasureContext measure_context_from_json(const json &j) {
  MeasureContext c;
  c.func = script::parse_func(j.at("func").get<std::string>(), "<the tuner's function>");
  c.arch = Arch::from_json(ArchJson::parse(j.at("arch").dump()), "<the tuner's arch>");
  c.dims = j.at("dims").get<runtime::DimBindings>();
  c.seed = j.at("seed").get<uint64_t>();
  c.interpreter_limit = j.at("interpreter_limit").get<int64_t>();
  c.oracle = runtime::parse_oracle(j.at("oracle").get<std::string>());
  c.warmup_ms = j.at("warmup_ms").get<double>();
  c.measure_ms = j.at("measure_ms").get<double>();
  c.cache_dir = j.at("cache_dir").get<std::string>();
  c.simulate = j.at("simulate").get<bool>();
  return c;
}

json to_json(const CandidateSpec &s) { return json{{"text", s.text}, {"target", s.target}, {"planted", s.planted}}; }

CandidateSpec candidate_spec_from_json(const json &j) {
  return {.text = j.at("text").get<std::string>(),
          .target = j.at("target").get<std::string>(),
          .planted = j.at("planted").get<std::string>()};
}

json to_json(const Measurement &m) {
  return json{{"status", to_string(m.status)}, {"error", m.error},
              {"measured", m.measured},        {"time_us", m.time_us},
              {"error_ratio", m.error_ratio},  {"registers", m.registers},
              {"static_shared_bytes", m.static_shared_bytes}, {"fatal", m.fatal}};
}

Measurement measurement_from_json(const json &j) {
  Measurement m;
  m.status = candidate_status_from_string(j.at("status").get<std::string>());
  m.error = j.at("error").get<std::string>();
  m.measured = j.at("measured").get<bool>();
  m.time_us = j.at("time_us").get<double>();
  m.error_ratio = j.at("error_ratio").get<double>();
  m.registers = j.at("registers").get<int>();
  m.static_shared_bytes = j.at("static_shared_bytes").get<int64_t>();
  m.fatal = j.at("fatal").get<bool>();
  return m;
}

CandidateStatus candidate_status_from_string(const std::string &s) {
  for (CandidateStatus c : {CandidateStatus::Ok, CandidateStatus::ScheduleError, CandidateStatus::BuildError,
                            CandidateStatus::LaunchError, CandidateStatus::WrongAnswer, CandidateStatus::Timeout})
    if (s == to_string(c)) return c;
  return CandidateStatus::InternalError;
}

bool is_sticky_cuda_error(std::string_view message) {
  for (std::string_view name : {"CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_MISALIGNED_ADDRESS",
                                "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
                                "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ASSERT",
                                "CUDA_ERROR_LAUNCH_FAILED", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_ECC_UNCORRECTABLE"})
    if (message.find(name) != std::string_view::npos) return true;
  return false;
}

namespace {

const std::vector<std::string> &fault_kinds() {
  static const std::vector<std::string> kinds = {"crash", "hang", "launch_error", "illegal_address", "wrong_answer"};
  return kinds;
}

}  // namespace

std::map<size_t, std::string> planted_faults() {
  std::map<size_t, std::string> out;
  const char *env = std::getenv("TESSERA_PLANT_FAULT");
  if (!env || !*env) return out;
  std::string_view rest(env);
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t colon = item.find(':');
    std::string kind(colon == std::string_view::npos ? "" : item.substr(colon + 1));
    char *end = nullptr;
    std::string index(item.substr(0, colon));
    unsigned long k = std::strtoul(index.c_str(), &end, 10);
    if (index.empty() || *end || std::find(fault_kinds().begin(), fault_kinds().end(), kind) == fault_kinds().end())
      throw UserError(fmt::format("TESSERA_PLANT_FAULT='{}': '{}' is not K:KIND with KIND one of {}", env, item,
                                  fmt::join(fault_kinds(), ", ")));
    out[k] = kind;
  }
  return out;
}

std::string planted_fault_program(const std::string &kind) {
  // Each is an ordinary function the CUDA path builds; what makes it faulty
  // is what it does on the device.
  if (kind == "illegal_address")
    // Thread t stores 2^28 * t floats (1 GiB per thread) past the buffer's
    // start: outside any allocation, a sticky CUDA_ERROR_ILLEGAL_ADDRESS.
    return R"(@T.prim_func
def planted_illegal_address(A: T.Buffer((64,), "float32")):
    for t in T.thread_binding(64, thread="threadIdx.x"):
        A[T.int64(t) * T.int64(268435456)] = T.float32(1)
)";
  if (kind == "hang")
    // 2^62 steps of a recurrence no compiler can close: it never ends.
    return R"(@T.prim_func
def planted_hang(A: T.Buffer((1,), "int32"), B: T.Buffer((1,), "int32")):
    for t in T.thread_binding(1, thread="threadIdx.x"):
        for k, j in T.grid(2147483647, 2147483647):
            B[0] = B[0] * 1103515245 + A[0]
)";
  if (kind == "launch_error")
    // 2048 threads in a block: more than any CUDA device launches.
    return R"(@T.prim_func
def planted_launch_error(A: T.Buffer((2048,), "float32")):
    for t in T.thread_binding(2048, thread="threadIdx.x"):
        A[t] = T.float32(0)
)";
  return "";
}

std::unique_ptr<runtime::Executable> build_candidate(const MeasureContext &ctx, const CandidateSpec &spec) {
  ir::PrimFunc f = script::parse_func(spec.text, "<a candidate from the tuner>");
  if (ctx.simulate) return runtime::make_backend("interpreter")->build(f);
  std::optional<runtime::KernelCache> cache;
  if (!ctx.cache_dir.empty()) cache.emplace(ctx.cache_dir);
  return runtime::cuda_executable(
      runtime::CudaFunction::build(f, {.arch = spec.target, .cache = cache ? &*cache : nullptr}));
}

LocalMeasurer::LocalMeasurer(MeasureContext ctx) : ctx_(std::move(ctx)) {
  auto t0 = Clock::now();
  inputs_ = runtime::make_random_args(ctx_.func, ctx_.dims, ctx_.seed);
  ComputedReference computed = reference_for(ctx_.func, inputs_, ctx_.dims, ctx_.arch,
                                             {.interpreter_limit = ctx_.interpreter_limit,
                                              .interpreter_only = ctx_.simulate,
                                              .oracle = ctx_.oracle});
  want_ = std::move(computed.ref);
  how_ = computed.how;
  reference_ms_ = ms_since(t0);
}

namespace {

/// Overwrites the first element of the first buffer `run` changed (an
/// output) with bytes 0x7f: a planted wrong answer.
void perturb_an_output(const std::vector<runtime::NDArray> &before, std::vector<runtime::NDArray> &after) {
  for (size_t i = 0; i < after.size(); ++i) {
    if (after[i].nbytes() == 0 || after[i].nbytes() != before[i].nbytes()) continue;
    if (std::memcmp(after[i].data(), before[i].data(), after[i].nbytes()) == 0) continue;
    std::memset(after[i].data(), 0x7f, std::min<size_t>(after[i].nbytes(), 8));
    return;
  }
}

}  // namespace

Measurement LocalMeasurer::measure(const runtime::Executable &exe, const std::string &planted) const {
  Measurement m;
  std::vector<runtime::NDArray> got = inputs_;  // the candidate's own outputs
  try {
    exe.run(got);
    runtime::KernelAttributes a = exe.attributes();
    m.registers = a.registers;
    m.static_shared_bytes = a.static_shared_bytes;
    if (planted == "wrong_answer") perturb_an_output(inputs_, got);
    const runtime::ChecksSummary checks =
        runtime::summarize_checks(runtime::check_outputs(ctx_.func, got, want_));
    m.error_ratio = checks.worst_ratio;
    if (!checks.ok()) {
      m.status = CandidateStatus::WrongAnswer;
      m.error = checks.failures;
      return m;
    }
    // Timed on its own arrays too (checked already): no candidate's runs
    // touch another's.
    m.time_us = exe.time(got, {.warmup_ms = ctx_.warmup_ms, .measure_ms = ctx_.measure_ms}).median_ms * 1e3;
    m.measured = true;
  } catch (const std::exception &e) {
    m.status = CandidateStatus::LaunchError;
    m.error = e.what();
    // A sticky CUDA error leaves the context unusable for every later launch.
    m.fatal = !ctx_.simulate && runtime::driver_status() == runtime::DriverStatus::Ok && is_sticky_cuda_error(e.what());
  }
  return m;
}

std::vector<double> LocalMeasurer::time_samples(const runtime::Executable &exe, double budget_ms) const {
  std::vector<runtime::NDArray> args = inputs_;
  return exe.time(args, {.warmup_ms = ctx_.warmup_ms, .measure_ms = budget_ms}).samples_ms;
}

void InProcessMeasurer::start() {
  try {
    local_ = std::make_unique<LocalMeasurer>(ctx_);
  } catch (const Error &e) {
    throw UserError(std::string("cannot make the reference output: ") + e.what());
  }
}

std::optional<std::vector<double>> InProcessMeasurer::time_samples(size_t index, double budget_ms) {
  try {
    return local_->time_samples(*fns_.at(index), budget_ms);
  } catch (const Error &) {
    return std::nullopt;
  }
}

}  // namespace tessera::tuning
