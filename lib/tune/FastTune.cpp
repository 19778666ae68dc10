//===- lib/tune/FastTune.cpp - The fastest verified kernel among the top-k --===//
#include "tessera/tune/FastTune.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <fmt/format.h>
#include <mutex>
#include <set>
#include <thread>

#include <stdlib.h>

#include "Measure.h"
#include "tessera/analysis/BlockInfo.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/Rule.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/schedule/Error.h"
#include "tessera/tune/ApplyBest.h"
#include "tessera/tune/Database.h"
#include "tessera/tune/SassCheck.h"

namespace tessera::tuning {

const char *to_string(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::Ok: return "ok";
    case CandidateStatus::ScheduleError: return "schedule_error";
    case CandidateStatus::BuildError: return "compile_error";
    case CandidateStatus::LaunchError: return "launch_error";
    case CandidateStatus::WrongAnswer: return "wrong_answer";
    case CandidateStatus::InternalError: return "internal_error";
    case CandidateStatus::Timeout: return "timeout";
  }
  return "?";
}

double TuneResult::speedup_over_default() const {
  if (best < 0 || default_index < 0) return 0;
  const CandidateReport &w = candidates[best], &d = candidates[default_index];
  if (!w.measured || !d.measured || w.status != CandidateStatus::Ok || d.status != CandidateStatus::Ok ||
      w.time_us <= 0)
    return 0;
  return d.time_us / w.time_us;
}

namespace {

/// Runs fn(0..n-1) on `threads` workers; the calling thread reports progress
/// (done, n) as items finish. fn must not throw (it records its own errors).
/// Should `progress` throw (a Python caller's Ctrl-C), no further item is
/// started, the running ones finish, and the exception goes on.
void parallel_for(size_t n, unsigned threads, const std::function<void(size_t)> &fn,
                  const std::function<void(int, int)> &progress) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::max<unsigned>(1, std::min<unsigned>(threads, unsigned(n)));
  std::atomic<size_t> next{0}, done{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) {
        fn(i);
        done.fetch_add(1);
      }
    });
  size_t reported = size_t(-1);
  try {
    while (true) {
      size_t d = done.load();
      if (progress && d != reported) progress(int(d), int(n)), reported = d;
      if (d == n) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  } catch (...) {
    next.store(n);
    for (std::thread &t : pool) t.join();
    throw;
  }
  for (std::thread &t : pool) t.join();
}

/// One candidate on its way through scheduling and compiling.
struct Job {
  CandidateReport report;
  std::unique_ptr<rules::Config> config;  ///< null for an already scheduled function
  /// The built candidate, run and timed through its backend (runtime/Backend.h).
  std::unique_ptr<runtime::Executable> exe;
  double schedule_ms = 0, codegen_ms = 0;
};


/// A test hook: TESSERA_PLANT_INTERNAL_ERROR=K makes candidate K's schedule
/// hit a planted bug (an InternalError), so the path a real one takes is tested.
int planted_internal_error() {
  const char *v = std::getenv("TESSERA_PLANT_INTERNAL_ERROR");
  return v && *v ? std::atoi(v) : -1;
}

/// Records a failure of job `j`: a tessera UserError (the config's or the
/// compiler's refusal) or the driver's (runtime::RuntimeError) is `refused`;
/// anything else is a bug in tessera.
void fail_job(Job &j, CandidateStatus refused, const std::exception &e) {
  const bool user =
      dynamic_cast<const UserError *>(&e) != nullptr || dynamic_cast<const runtime::RuntimeError *>(&e) != nullptr;
  j.report.status = user ? refused : CandidateStatus::InternalError;
  j.report.error = user ? e.what() : std::string("internal error (a bug in tessera): ") + e.what();
}

/// Schedules (when `rule`) and builds job `j` (candidate `index`); every
/// failure becomes its status, and only this candidate fails.
void schedule_and_build(Job &j, size_t index, const ir::PrimFunc &func, const rules::Rule *rule,
                        const rules::Match *match, const Arch &arch, runtime::KernelCache *cache) {
  auto t0 = Clock::now();
  try {
    if (int(index) == planted_internal_error())
      throw InternalError("planted by TESSERA_PLANT_INTERNAL_ERROR=" + std::to_string(index));
    j.report.func = rule ? rule->apply(func, *match, *j.config).func() : func;
  } catch (const std::exception &e) {
    j.schedule_ms = ms_since(t0);
    fail_job(j, CandidateStatus::ScheduleError, e);
    return;
  }
  j.schedule_ms = ms_since(t0);
  auto t1 = Clock::now();
  std::optional<runtime::CudaFunction> fn;
  try {
    fn = runtime::CudaFunction::build(
        j.report.func, {.arch = codegen::cuda_target_for(arch.arch_flag(), j.report.func.body()), .cache = cache});
  } catch (const std::exception &e) {
    j.codegen_ms = ms_since(t1);
    fail_job(j, CandidateStatus::BuildError, e);
    return;
  }
  double wall = ms_since(t1);
  for (const runtime::CompiledKernel &k : fn->kernels()) {
    j.report.compile_ms += k.compiled.compile_ms;
    j.report.sources.push_back(k.source);
    j.report.cubins.push_back(k.compiled.cubin);
    for (const runtime::KernelResources &r : k.compiled.kernels) {
      j.report.registers = std::max(j.report.registers, r.registers);
      j.report.spill_bytes = std::max<int>(j.report.spill_bytes, int(r.spill_loads + r.spill_stores));
    }
    j.report.shared_bytes = std::max<int64_t>(
        j.report.shared_bytes, int64_t(k.lowered.dynamic_shared_bytes) +
                                   (k.compiled.kernels.empty() ? 0 : k.compiled.kernels[0].shared_bytes));
  }
  j.codegen_ms = std::max(0.0, wall - j.report.compile_ms);
  j.exe = runtime::cuda_executable(std::move(*fn));
}

/// Every built job's SASS summary (all its kernels summed) and its config
/// held to it (tune/SassCheck.h). The cubins of all jobs go to the
/// disassembler together (runtime::summarise_cubins: a run costs more than a
/// compile, so runs are shared), on at most `threads` workers. A failure is
/// recorded on the job, never thrown: the candidate stays Ok.
void read_sass(std::vector<Job> &jobs, const ir::PrimFunc &func, const Arch &arch, const std::filesystem::path &tool,
               unsigned threads) {
  std::vector<const std::vector<uint8_t> *> cubins;
  std::vector<size_t> owner;
  for (size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].exe)
      for (const std::vector<uint8_t> &cubin : jobs[i].report.cubins) {
        cubins.push_back(&cubin);
        owner.push_back(i);
      }
  std::vector<runtime::CubinSass> sass = runtime::summarise_cubins(cubins, arch.arch_flag(), tool, threads);
  for (size_t c = 0; c < sass.size(); ++c) {
    CandidateReport &r = jobs[owner[c]].report;
    if (!sass[c].error.empty()) r.sass_error = sass[c].error;
    for (const runtime::SassSummary &s : sass[c].functions) r.sass ? void(*r.sass += s) : void(r.sass = s);
  }
  for (Job &j : jobs) {
    if (!j.report.sass_error.empty()) j.report.sass.reset();  // a partial sum would mislead
    if (j.report.sass && j.config) j.report.sass_warning = sass_warning(func, j.config->to_json(), *j.report.sass);
  }
}

/// Why the candidates cannot be measured on this machine, or "" when they can.
std::string why_not_measurable(const ir::PrimFunc &func, const Arch &arch, const TuneOptions &options) {
  if (!options.measure) return "measuring was turned off";
  if (options.simulate_device) return "";
  if (runtime::driver_status() != runtime::DriverStatus::Ok) return "no CUDA device: " + runtime::driver_message();
  if (runtime::device_count() == 0) return "no CUDA device: the driver reports none";
  runtime::DeviceProperties p = runtime::query_device(0);
  if (p.cc_major != arch.compute_capability.major || p.cc_minor != arch.compute_capability.minor)
    return fmt::format("device 0 ({}, sm_{}{}) is not the target arch {} ({})", p.name, p.cc_major, p.cc_minor,
                       arch.name, arch.arch_flag());
  // Symbolic sizes left at the hint can ask for absurd inputs (a batch of
  // 4096 matrices of 4096 x 4096): refuse before allocating anything.
  double bytes = argument_bytes(func, complete_dims(func, options.dims, options.symbolic_hint));
  if (bytes > options.max_input_bytes)
    return fmt::format("the arguments would take {:.1f} GB with the symbolic sizes at {} (bind them: --dim)",
                       bytes / 1e9, options.symbolic_hint);
  return "";
}

struct Tuned {
  std::vector<Job> jobs;
  int default_index = -1;
  double policy_ms = 0;
};

/// Steps 2 and 3 for one rule: propose, schedule and build every candidate.
Tuned compile_candidates(const ir::PrimFunc &func, const rules::Rule *rule, const rules::Match *match,
                         const Arch &arch, const TuneOptions &options, TunePhases &phases) {
  Tuned t;
  if (rule) {
    auto t0 = Clock::now();
    policies::Proposal p = policies::propose(func, *rule, *match, arch,
                                             {.topk = options.topk, .symbolic_hint = options.symbolic_hint});
    std::unique_ptr<rules::Config> def = rule->default_config(*match, arch);
    t.policy_ms = ms_since(t0);
    std::string def_text = def->str();
    for (size_t i = 0; i < p.candidates.size(); ++i) {
      Job j;
      j.config = std::move(p.candidates[i].config);
      j.report.config = j.config->str();
      j.report.origin = fmt::format("policy #{}", i + 1);
      if (j.report.config == def_text) j.report.origin += " = default", t.default_index = int(i);
      j.report.policy_score = p.candidates[i].score;
      j.report.policy_why = p.candidates[i].why;
      t.jobs.push_back(std::move(j));
    }
    if (t.default_index < 0) {
      Job j;
      j.report.config = def_text;
      j.report.origin = "default";
      j.config = std::move(def);
      t.default_index = int(t.jobs.size());
      t.jobs.push_back(std::move(j));
    }
  } else {
    Job j;
    j.report.origin = "as given";
    t.jobs.push_back(std::move(j));
    t.default_index = 0;
  }
  auto t1 = Clock::now();
  parallel_for(
      t.jobs.size(), options.threads, [&](size_t i) { schedule_and_build(t.jobs[i], i, func, rule, match, arch, options.kernel_cache); },
      [&](int done, int total) {
        if (options.progress) options.progress("compile", done, total);
      });
  phases.compile_wall_ms += ms_since(t1);
  phases.policy_ms += t.policy_ms;
  for (const Job &j : t.jobs) {
    phases.schedule_ms += j.schedule_ms;
    phases.codegen_ms += j.codegen_ms;
    phases.nvrtc_ms += j.report.compile_ms;
  }
  return t;
}

std::string failure_list(const std::vector<Job> &jobs) {
  std::string s;
  for (const Job &j : jobs)
    s += fmt::format("\n  {} {}: {}: {}", j.report.origin, j.report.config, to_string(j.report.status),
                     j.report.error.substr(0, j.report.error.find('\n')));
  return s;
}

bool any_ok(const std::vector<Job> &jobs) {
  return std::any_of(jobs.begin(), jobs.end(), [](const Job &j) { return j.report.status == CandidateStatus::Ok; });
}

RecordStatus record_status(CandidateStatus s) {
  switch (s) {
    case CandidateStatus::Ok: return RecordStatus::Ok;
    case CandidateStatus::ScheduleError:
    case CandidateStatus::BuildError:
    case CandidateStatus::InternalError: return RecordStatus::CompileError;
    case CandidateStatus::LaunchError:
    case CandidateStatus::Timeout: return RecordStatus::LaunchError;
    case CandidateStatus::WrongAnswer: return RecordStatus::WrongAnswer;
  }
  return RecordStatus::Skipped;
}

/// One record per candidate of a measured run (failures included, so a
/// reader sees what was tried).
std::vector<Record> records_for(const ir::PrimFunc &func, const Arch &arch, const TuneResult &result) {
  TuningKey key = TuningKey::of(func, arch);
  Json summary = workload_summary(func);
  std::vector<Record> out;
  for (const CandidateReport &c : result.candidates) {
    if (c.config.empty()) continue;  // an already scheduled function has no config to store
    Record r{.key = key, .workload = summary, .rule = result.rule, .config = Json::parse(c.config)};
    r.status = record_status(c.status);
    if (c.status == CandidateStatus::Ok) {
      if (!c.measured) continue;
      r.time_us = c.time_us;
    } else {
      r.error = c.error.substr(0, 2000);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

namespace {

/// Every parameter buffer whose sizes are known holds at most 2^63 bytes and
/// no negative dimension: sizes no kernel can index are refused before any work.
void check_buffer_sizes(const ir::PrimFunc &func) {
  for (const ir::Var &p : func.params()) {
    ir::Buffer b = func.buffer_of(p);
    if (!b.defined()) continue;
    std::vector<int64_t> shape;
    for (const ir::Expr &e : b.shape()) {
      const auto *imm = e.as<ir::IntImm>();
      if (!imm) return;  // a symbolic size: checked when its value is known
      shape.push_back(imm->value);
    }
    try {
      runtime::NDArray::checked_numel(b.dtype(), shape);
    } catch (const UserError &e) {
      throw TuneError("buffer '" + b.name() + "' of '" + func.name() + "': " + e.what());
    }
  }
}

}  // namespace

namespace {

/// A kernel cache in a fresh temporary folder, removed with it: what the
/// tuner compiles through so that its measuring worker reads the cubins
/// instead of compiling them again.
struct TemporaryKernelCache {
  std::filesystem::path dir;
  std::optional<runtime::KernelCache> cache;
  TemporaryKernelCache() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tessera-run-XXXXXX").string();
    if (::mkdtemp(pattern.data())) {
      dir = pattern;
      cache.emplace(dir);
    }
  }
  ~TemporaryKernelCache() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

TuneResult fast_tune(const ir::PrimFunc &original, const Arch &arch, const TuneOptions &options) {
  if (options.isolate && options.measure && !options.kernel_cache &&
      why_not_measurable(original, arch, options).empty()) {
    TemporaryKernelCache temporary;
    if (temporary.cache) {
      TuneOptions with_cache = options;
      with_cache.kernel_cache = &*temporary.cache;
      return fast_tune(original, arch, with_cache);
    }
  }
  ir::PrimFunc func = schedule::unique_block_names(original);
  try {
    rules::check_gpu_target(func);
  } catch (const UserError &e) {
    throw TuneError(e.what());
  }
  check_buffer_sizes(func);
  auto start = Clock::now();
  TuneResult result;
  result.arch = arch.fingerprint();

  // The database is keyed by shapes: a function with symbolic dimensions is
  // tuned without it.
  bool use_db = options.db && func.shape_vars().empty();
  if (options.db && !use_db) result.db_note = "the function has symbolic dimensions: the database is not used";
  if (use_db) {
    std::optional<AppliedRecord> hit;
    try {
      hit = apply_best(func, arch, *options.db);
    } catch (const Error &e) {
      result.db_note = std::string("the stored best cannot be applied, tuning again: ") + e.what();
    }
    if (hit) {
      result.from_db = true;
      result.rule = hit->record.rule;
      result.measured = true;
      result.device = hit->record.key.arch;
      CandidateReport r;
      r.origin = "database";
      r.config = hit->record.config.dump();
      r.measured = true;
      r.time_us = hit->record.time_us.value_or(0);
      r.func = hit->func;
      result.candidates.push_back(std::move(r));
      result.best = 0;
      result.best_func = hit->func;
      result.phases.total_ms = ms_since(start);
      return result;
    }
  }

  // Step 1: the rules to try, in order.
  auto t0 = Clock::now();
  analysis::FuncInfo info = analysis::analyze(func);
  std::vector<std::pair<const rules::Rule *, rules::MatchPtr>> matched;
  std::string declined;
  if (info.is_scheduled) {
    matched.push_back({nullptr, nullptr});
  } else {
    for (const rules::Rule *r : rules::all_rules()) {
      if (!options.rule.empty() && options.rule != r->name()) continue;
      auto m = r->match(func, arch);
      if (m) matched.push_back({r, *m});
      else declined += fmt::format("\n  {}: {}", r->name(), m.reason());
    }
    if (!options.rule.empty() && !rules::find_rule(options.rule))
      throw TuneError("no rule named '" + options.rule + "'");
    if (matched.empty()) throw TuneError("no rule matches the function:" + declined);
  }
  result.phases.match_ms = ms_since(t0);

  // Steps 2 and 3, rule after rule until one has a candidate that builds.
  Tuned tuned;
  std::string abandoned_reasons;
  for (auto &[rule, match] : matched) {
    tuned = compile_candidates(func, rule, match.get(), arch, options, result.phases);
    result.rule = rule ? rule->name() : "";
    if (any_ok(tuned.jobs)) break;
    result.rules_abandoned.push_back(result.rule);
    abandoned_reasons += fmt::format("\nrule '{}':{}", result.rule, failure_list(tuned.jobs));
  }
  if (!any_ok(tuned.jobs)) throw TuneError("no candidate could be scheduled and compiled:" + abandoned_reasons);

  // The machine code of the candidates (when cuobjdump is found), read on
  // other threads while the device measures them: it touches only the sass
  // fields of the reports, measuring only the others.
  std::optional<std::filesystem::path> sass_tool;
  if (options.read_sass) {
    sass_tool = runtime::find_disassembler();
    if (sass_tool) result.sass_tool = sass_tool->string();
    else result.sass_note = std::string(runtime::kNoDisassemblerHint);
  }
  std::future<void> sass;
  if (sass_tool)
    sass = std::async(std::launch::async, [&] {
      auto t = Clock::now();
      read_sass(tuned.jobs, func, arch, *sass_tool, options.threads);
      result.phases.sass_ms = ms_since(t);
    });

  // Step 4 or 5.
  result.why_unmeasured = why_not_measurable(func, arch, options);
  std::vector<CandidateReport *> reports;
  std::vector<const runtime::Executable *> fns;
  for (Job &j : tuned.jobs) {
    reports.push_back(&j.report);
    fns.push_back(j.exe.get());
  }
  if (result.why_unmeasured.empty()) {
    // The worker measures on the same device 0 (it inherits the environment).
    result.device = options.simulate_device ? "simulated (the interpreter)" : runtime::query_device(0).name;
    MeasureStats stats = measure_candidates(func, arch, options, reports, fns);
    result.isolation = stats.isolation;
    result.workers_started = stats.workers_started;
    result.phases.reference_ms = stats.reference_ms;
    result.reference = stats.reference;
    result.phases.measure_ms = stats.measure_ms;
    // Without a reference nothing can be verified: the candidates stay
    // unmeasured and the policy's pick stands, with the reason.
    result.measured = stats.error.empty();
    result.why_unmeasured = stats.error;
  }

  if (sass.valid()) sass.get();

  // Pick: the fastest verified when measured, else the policy's best-ranked that built.
  for (size_t i = 0; i < tuned.jobs.size(); ++i) {
    const CandidateReport &r = tuned.jobs[i].report;
    if (r.status != CandidateStatus::Ok) continue;
    if (result.measured && !r.measured) continue;
    if (result.best < 0) {
      result.best = int(i);
      continue;
    }
    const CandidateReport &b = tuned.jobs[result.best].report;
    // Equal times: the earlier (better ranked) candidate stays.
    if (result.measured && r.time_us < b.time_us) result.best = int(i);
  }
  if (result.best < 0)
    throw TuneError("every candidate failed on the device:" + failure_list(tuned.jobs));

  result.default_index = tuned.default_index;
  for (Job &j : tuned.jobs) result.candidates.push_back(std::move(j.report));
  result.best_func = result.candidates[result.best].func;

  if (use_db && result.measured) options.db->append(records_for(func, arch, result));
  result.phases.total_ms = ms_since(start);
  return result;
}

namespace {

/// A SASS summary for --json: the one-line text, then every count (width
/// maps keyed by the width in bytes, as strings).
nlohmann::ordered_json sass_json(const runtime::SassSummary &s) {
  using J = nlohmann::ordered_json;
  auto widths = [](const runtime::WidthCounts &w) {
    J j = J::object();
    for (const auto &[bytes, n] : w) j[std::to_string(bytes)] = n;
    return j;
  };
  auto ops = [](const std::map<std::string, int64_t> &m) {
    J j = J::object();
    for (const auto &[op, n] : m) j[op] = n;
    return j;
  };
  return J{{"summary", s.str()},
           {"instructions", s.instructions},
           {"widest_global_load", s.widest_global_load()},
           {"widest_global_store", s.widest_global_store()},
           {"global_loads", widths(s.global_loads)},
           {"global_stores", widths(s.global_stores)},
           {"generic_loads", widths(s.generic_loads)},
           {"generic_stores", widths(s.generic_stores)},
           {"shared_loads", widths(s.shared_loads)},
           {"shared_stores", widths(s.shared_stores)},
           {"async_copies", widths(s.async_copies)},
           {"ldmatrix", s.ldmatrix},
           {"local_loads", s.local_loads},
           {"local_stores", s.local_stores},
           {"atomics", s.atomics},
           {"shared_atomics", s.shared_atomics},
           {"tensor_ops", ops(s.tensor_ops)},
           {"fma_ops", ops(s.fma_ops)}};
}

}  // namespace

nlohmann::ordered_json to_json(const TuneResult &r) {
  using J = nlohmann::ordered_json;
  const TunePhases &p = r.phases;
  J out{{"rule", r.rule},
        {"arch", r.arch},
        {"device", r.device},
        {"measured", r.measured},
        {"why_unmeasured", r.why_unmeasured},
        {"from_db", r.from_db},
        {"rules_abandoned", r.rules_abandoned},
        {"sass_tool", r.sass_tool},
        {"sass_note", r.sass_note},
        {"reference", r.reference},
        {"isolation", r.isolation},
        {"workers_started", r.workers_started},
        {"best", r.best},
        {"default", r.default_index},
        {"speedup_over_default", r.speedup_over_default()},
        {"phases_ms",
         {{"match", p.match_ms}, {"policy", p.policy_ms}, {"schedule", p.schedule_ms}, {"codegen", p.codegen_ms},
          {"nvrtc", p.nvrtc_ms}, {"compile_wall", p.compile_wall_ms}, {"sass", p.sass_ms}, {"reference", p.reference_ms},
          {"measure", p.measure_ms}, {"total", p.total_ms}}}};
  J cands = J::array();
  for (const CandidateReport &c : r.candidates) {
    J config = c.config.empty() ? J() : J::parse(c.config);
    J j{{"origin", c.origin},        {"config", config},         {"status", to_string(c.status)},
        {"error", c.error},          {"measured", c.measured},   {"time_us", c.time_us},
        {"error_ratio", c.error_ratio},  {"policy_score_us", c.policy_score}, {"policy_why", c.policy_why},
        {"registers", c.registers},  {"spill_bytes", c.spill_bytes},      {"shared_bytes", c.shared_bytes},
        {"compile_ms", c.compile_ms}};
    j["sass"] = c.sass ? sass_json(*c.sass) : J();
    j["sass_error"] = c.sass_error;
    j["sass_warning"] = c.sass_warning;
    cands.push_back(std::move(j));
  }
  out["candidates"] = std::move(cands);
  return out;
}

}  // namespace tessera::tuning
