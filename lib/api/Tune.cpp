//===- lib/api/Tune.cpp - tessera::tune, tessera::dynamic ------------------===//
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <optional>

#include "KernelImpl.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/tune/CpuTune.h"
#include "tessera/tune/Database.h"
#include "tessera/tune/FastTune.h"
#include "tessera/tune/PlanKernel.h"

namespace tessera {

namespace {

using Clock = std::chrono::steady_clock;

/// The candidates of a GPU tune in the report's order: measured ones by
/// time, else the policy's order; failures last.
Report gpu_report(const tuning::TuneResult &r, const Target &target) {
  Report out;
  out.target = target.str();
  out.rule = r.rule;
  out.measured = r.measured;
  out.why_unmeasured = r.why_unmeasured;
  out.reference = r.reference;
  out.from_database = r.from_db;
  out.database_note = r.db_note;
  out.tune_ms = r.phases.total_ms;
  out.json = tuning::to_json(r).dump();
  std::vector<size_t> order(r.candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto ok = [&](size_t i) { return r.candidates[i].status == tuning::CandidateStatus::Ok; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (int(a) == r.best || int(b) == r.best) return int(a) == r.best && int(b) != r.best;
    if (ok(a) != ok(b)) return ok(a);
    return r.measured && ok(a) && r.candidates[a].time_us < r.candidates[b].time_us;
  });
  for (size_t i : order) {
    const tuning::CandidateReport &c = r.candidates[i];
    std::string status = tuning::to_string(c.status);
    for (char &ch : status) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    out.ranked.push_back({c.origin, c.config, ok(i) ? "ok" : status, c.error, c.measured, c.time_us, c.policy_score});
  }
  return out;
}

/// The winner of a GPU tune as a plan of one cell: its symbols (those left
/// symbolic) take any value. Its cubins are the tune's when the plan's
/// sources are the ones the tune compiled, else compiled now.
std::shared_ptr<dispatch::KernelPlan> winner_plan(const tuning::TuneResult &r, const Arch &arch,
                                                  runtime::KernelCache *cache, unsigned threads) {
  const ir::PrimFunc &f = r.best_func;
  auto plan = std::make_shared<dispatch::KernelPlan>();
  plan->name = f.name();
  plan->target = arch.arch_flag();
  plan->arch = arch.fingerprint();
  for (const ir::Var &v : f.shape_vars()) {
    plan->symbols.push_back(v.name());
    plan->lows.push_back(0);
    plan->ends.push_back({INT32_MAX});
  }
  plan->cells.assign({0});
  std::vector<runtime::CompileJob> jobs;
  dispatch::PlanKernel k = tuning::plan_kernel(f, plan->symbols, plan->target, cache, jobs);
  if (!k.workspace.empty() && !plan->symbols.empty())
    throw UserError("'" + f.name() + "' runs as several kernels with intermediate buffers sized by its symbolic sizes (" +
                    fmt::format("{}", fmt::join(plan->symbols, ", ")) +
                    "): bind them (TuneOptions::dims) or plan their ranges with tessera::dynamic");
  const tuning::CandidateReport &w = r.winner();
  bool same = w.sources.size() == jobs.size() && w.cubins.size() == jobs.size();
  for (size_t i = 0; same && i < jobs.size(); ++i) same = w.sources[i] == jobs[i].source;
  if (same) {
    for (size_t i = 0; i < jobs.size(); ++i) k.steps[i].cubin = w.cubins[i];
  } else {
    std::vector<runtime::CompileOutcome> built = runtime::compile_many(jobs, threads);
    for (size_t i = 0; i < built.size(); ++i) {
      if (!built[i].ok()) throw *built[i].error;
      k.steps[i].cubin = std::move(built[i].result->cubin);
    }
  }
  plan->kernels.push_back(std::move(k));
  plan->arguments = tuning::plan_arguments(f, plan->symbols);
  plan->validate();
  return plan;
}

/// The report of a CPU tune; TuneError when no candidate verified.
Report cpu_report(const tuning::CpuTuneResult &r) {
  Report report;
  report.target = Target::cpu().str();
  report.rule = "cpu";
  report.measured = true;
  report.reference = r.reference;
  for (const tuning::CpuCandidate &c : r.candidates)
    report.ranked.push_back({c.config ? "matmul" : c.loops ? "loops" : c.name,
                             c.config ? c.config->str() : c.loops ? c.loops->str() : "", c.ok ? "ok" : "wrong_answer",
                             c.error, c.ok, c.ok ? c.median_ms * 1000 : 0, 0});
  if (!r.ok()) {
    std::string why;
    for (const tuning::CpuCandidate &c : r.candidates) why += "\n  " + c.name + ": " + c.error;
    throw tuning::TuneError("no CPU schedule ran and verified:" + why);
  }
  return report;
}

Kernel tune_gpu(const ir::PrimFunc &f, const Target &target, const TuneOptions &o) {
  std::optional<tuning::Database> db;
  if (!o.database.empty()) db.emplace(tuning::Database::create(o.database));
  std::unique_ptr<runtime::KernelCache> cache = open_cache(o.kernel_cache);
  tuning::TuneOptions to{.topk = o.topk, .rule = o.rule, .threads = o.threads, .measure = o.measure};
  to.db = db ? &*db : nullptr;
  to.kernel_cache = cache.get();
  to.progress = o.progress;
  return kernel_of(tuning::fast_tune(f, target.arch(), to), target, o.kernel_cache);
}

}  // namespace

Kernel kernel_of(const tuning::TuneResult &r, const Target &target, const std::string &kernel_cache) {
  if (target.is_cpu()) throw UserError("kernel_of: a fast_tune result is a GPU target's");
  std::unique_ptr<runtime::KernelCache> cache = open_cache(kernel_cache);
  auto impl = std::make_shared<Kernel::Impl>();
  impl->target = target;
  impl->name = r.best_func.name();
  impl->script = script::print(r.best_func);
  impl->plan = winner_plan(r, target.arch(), cache.get(), 0);
  impl->symbols = impl->plan->symbols;
  for (const std::string &s : r.winner().sources) impl->cuda_source += (impl->cuda_source.empty() ? "" : "\n") + s;
  impl->report = gpu_report(r, target);
  return Kernel(std::move(impl));
}

Kernel kernel_of(const tuning::CpuTuneResult &r) { return Kernel(cpu_kernel(r.best().func, cpu_report(r))); }

namespace {

Kernel tune_cpu(const ir::PrimFunc &f, const Target &target, const TuneOptions &o) {
  const auto start = Clock::now();
  std::optional<tuning::Database> db;
  if (!o.database.empty()) db.emplace(tuning::Database::create(o.database));
  tuning::CpuTuneResult r = tuning::tune_for_cpu(f, cpu::CpuArch::detect(), {.db = db ? &*db : nullptr});
  Report report = cpu_report(r);
  report.from_database = r.from_db;
  report.database_note = r.db_note;
  report.tune_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return Kernel(cpu_kernel(r.best().func, std::move(report)));
}

}  // namespace

ir::Module parse(std::string_view text, const std::string &file) { return script::parse_module(text, file); }

Kernel tune(const ir::PrimFunc &func, const Target &target, const TuneOptions &options) {
  if (!func.defined()) throw UserError("tessera::tune: no function");
  const ir::PrimFunc f = bound(func, options.dims);
  return target.is_cpu() ? tune_cpu(f, target, options) : tune_gpu(f, target, options);
}

Kernel tune(std::string_view text, const Target &target, const TuneOptions &options, const std::string &file) {
  ir::Module m = parse(text, file);
  if (!options.func.empty()) {
    if (ir::PrimFunc f = m.lookup(options.func); f.defined()) return tune(f, target, options);
    throw UserError(file + ": no function named '" + options.func + "'");
  }
  if (m.funcs.size() == 1) return tune(m.funcs[0], target, options);
  if (ir::PrimFunc f = m.lookup("main"); f.defined()) return tune(f, target, options);
  std::string names;
  for (const ir::PrimFunc &f : m.funcs) names += (names.empty() ? "" : ", ") + f.name();
  throw UserError(file + " holds several functions (" + names + "): choose one with TuneOptions::func");
}

}  // namespace tessera
