//===- lib/tune/Measure.cpp - Verifying and timing candidates on the device -===//
#include "Measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "MeasureWorker.h"
#include "Measurer.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Printer.h"
#include "tessera/tune/Reference.h"

namespace tessera::tuning {

namespace {

constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

int64_t saturating_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kSaturated / b ? kSaturated : a * b;
}

/// Sums, over the stores at the leaves of the loop nest, the product of
/// their enclosing loop extents, each at its largest given the loops around
/// it (`for j in range(i + 8)` under `for i in range(8)`: 15; a negative
/// extent: 0).
struct IterationCounter : ir::IRVisitor {
  arith::Analyzer ana;
  int64_t trip = 1, total = 0;
  void visit_(const ir::For *op) override {
    arith::IntBound e = ana.const_bound(op->extent);
    int64_t saved = trip;
    trip = e.max == arith::IntBound::kPosInf ? kSaturated : saturating_mul(trip, std::max<int64_t>(e.max, 0));
    arith::Analyzer::Scope scope(ana);
    ana.bind(op->loop_var, ir::Range{op->min, op->extent});
    ir::IRVisitor::visit_(op);
    trip = saved;
  }
  void visit_(const ir::Store *op) override { total = std::min(kSaturated - trip, total) + trip; }
  // A block's init runs once per output, not once per reduction step: its
  // stores are not counted (the body's are at least as many).
  void visit_(const ir::Block *op) override { visit(op->body); }
};

}  // namespace

runtime::DimBindings complete_dims(const ir::PrimFunc &func, const runtime::DimBindings &dims, int64_t hint) {
  runtime::DimBindings out = dims;
  for (const ir::Var &p : func.params()) {
    ir::Buffer b = func.buffer_of(p);
    if (!b.defined()) continue;
    for (const ir::Expr &e : b.shape())
      if (const auto *v = e.as<ir::VarNode>()) out.emplace(v->name, hint);
  }
  return out;
}

namespace {

/// The sum over `func`'s parameter buffers, with `dims` bound, of their
/// element counts times (bytes per element + `extra`).
double parameter_bytes(const ir::PrimFunc &func, const runtime::DimBindings &dims, double extra) {
  double total = 0;
  for (const ir::Var &p : func.params()) {
    ir::Buffer b = func.buffer_of(p);
    if (!b.defined()) continue;
    double n = 1;
    for (const ir::Expr &e : b.shape()) {
      // Each variable by its name in `dims` (a shape variable or a scalar
      // parameter that sizes buffers too).
      std::vector<std::pair<ir::Var, ir::Expr>> values;
      ir::pre_order_visit(ir::Evaluate::make(e), [&](const ir::Expr &x) {
        const auto *v = x.as<ir::VarNode>();
        auto it = v ? dims.find(v->name) : dims.end();
        if (it != dims.end()) values.emplace_back(ir::Var::from(x), ir::make_int(v->dtype, it->second));
      }, nullptr);
      n *= double(ir::as_const_int(arith::simplify(ir::substitute(e, values))).value_or(1));
    }
    total += n * (b.dtype().bytes() + extra);
  }
  return total;
}

}  // namespace

double argument_bytes(const ir::PrimFunc &func, const runtime::DimBindings &dims) {
  return parameter_bytes(func, dims, 0);
}

double verification_bytes(const ir::PrimFunc &func, const runtime::DimBindings &dims) {
  return parameter_bytes(func, dims, 24);
}

int64_t loop_iterations(const ir::PrimFunc &func, const runtime::DimBindings &dims) {
  // Shape variables are specialised; an integer scalar parameter takes its
  // value from `dims` too, or else one in [1, 8] (runtime::make_random_args).
  runtime::DimBindings shapes;
  auto is_param = [&](const ir::Var &v) {
    return std::any_of(func.params().begin(), func.params().end(), [&](const ir::Var &p) { return p.same_as(v); });
  };
  for (const ir::Var &v : func.shape_vars())
    if (auto it = dims.find(v.name()); it != dims.end() && !is_param(v)) shapes.insert(*it);
  ir::PrimFunc bound = shapes.empty() ? func : analysis::specialize(func, shapes);
  IterationCounter c;
  for (const ir::Var &p : bound.params()) {
    if (bound.buffer_of(p).defined() || !p.dtype().is_integer() || shapes.count(p.name())) continue;
    auto it = dims.find(p.name());
    it == dims.end() ? c.ana.bind(p, 1, 8) : c.ana.bind(p, it->second, it->second);
  }
  c.visit(bound.body());
  return c.total;
}

namespace {

/// How long one request for a candidate may take in the worker before the
/// watchdog calls it hung: the build (parse, lower, print, the cubin from the
/// cache, the module load), then the run, the check and the timing: about
/// twelve runs, each allowed 100 times the estimate (the policy's, else the
/// time to move its arguments once at the DRAM bandwidth).
double candidate_timeout_ms(const CandidateReport &r, const Arch &arch, const TuneOptions &options, double bytes) {
  if (options.measure_timeout_ms > 0) return options.measure_timeout_ms;
  double moved_ms = arch.memory.dram_bandwidth_gbps > 0 ? bytes / (arch.memory.dram_bandwidth_gbps * 1e6) : 0;
  double estimate_ms = std::max(r.policy_score / 1e3, moved_ms);
  return 10000 + 2 * (options.warmup_ms + options.measure_budget_ms) + 1200 * estimate_ms;
}

std::unique_ptr<CandidateMeasurer> make_measurer(const ir::PrimFunc &func, const Arch &arch,
                                                 const TuneOptions &options, const runtime::DimBindings &dims,
                                                 const std::vector<CandidateReport *> &reports,
                                                 const std::vector<const runtime::Executable *> &fns) {
  MeasureContext ctx{.func = func,
                     .arch = arch,
                     .dims = dims,
                     .seed = options.seed,
                     .interpreter_limit = options.interpreter_limit,
                     .oracle = options.oracle,
                     .warmup_ms = options.warmup_ms,
                     .measure_ms = options.measure_budget_ms,
                     .cache_dir = options.kernel_cache ? options.kernel_cache->dir().string() : "",
                     .simulate = options.simulate_device};
  std::map<size_t, std::string> plants = planted_faults();
  std::string looked;
  std::optional<std::filesystem::path> worker = options.isolate ? find_measure_worker(&looked) : std::nullopt;
  if (!worker) {
    if (!plants.empty()) throw UserError("TESSERA_PLANT_FAULT plants faults in the measuring worker: none is used");
    std::vector<const runtime::Executable *> run = fns;
    std::vector<std::unique_ptr<runtime::Executable>> simulated;
    if (options.simulate_device)
      for (size_t i = 0; i < reports.size(); ++i)
        if (run[i]) run[i] = simulated.emplace_back(runtime::make_backend("interpreter")->build(reports[i]->func)).get();
    struct Owning : InProcessMeasurer {
      std::vector<std::unique_ptr<runtime::Executable>> keep;
      using InProcessMeasurer::InProcessMeasurer;
    };
    auto m = std::make_unique<Owning>(std::move(ctx), std::move(run),
                                      options.isolate ? "no measuring worker found; looked at " + looked : "");
    m->keep = std::move(simulated);
    return m;
  }
  double bytes = argument_bytes(func, dims);
  std::vector<CandidateSpec> specs(reports.size());
  std::vector<double> timeouts(reports.size(), 0);
  for (size_t i = 0; i < reports.size(); ++i) {
    if (!fns[i]) continue;
    const ir::PrimFunc &f = reports[i]->func;
    specs[i] = {.text = script::print(f), .target = codegen::cuda_target_for(arch.arch_flag(), f.body())};
    if (auto it = plants.find(i); it != plants.end()) specs[i].planted = it->second;
    timeouts[i] = candidate_timeout_ms(*reports[i], arch, options, bytes);
  }
  double start_ms = options.measure_timeout_ms > 0 ? std::max(options.measure_timeout_ms, 60000.0)
                                                   : 120000 + 1e-5 * double(loop_iterations(func, dims));
  return std::make_unique<WorkerMeasurer>(*worker, std::move(ctx), std::move(specs), std::move(timeouts), start_ms);
}

}  // namespace

MeasureStats measure_candidates(const ir::PrimFunc &func, const Arch &arch, const TuneOptions &options,
                                const std::vector<CandidateReport *> &reports,
                                const std::vector<const runtime::Executable *> &fns) {
  MeasureStats stats;
  runtime::DimBindings dims = complete_dims(func, options.dims, options.symbolic_hint);
  std::unique_ptr<CandidateMeasurer> m;
  try {
    m = make_measurer(func, arch, options, dims, reports, fns);
    m->start();
  } catch (const Error &e) {
    stats.error = e.what();
    if (m) stats.isolation = m->isolation();
    return stats;
  }
  stats.reference = m->reference_how();
  stats.reference_ms = m->reference_ms();

  auto t1 = Clock::now();
  int total = 0, done = 0;
  for (const auto *fn : fns) total += fn != nullptr;
  for (size_t i = 0; i < reports.size(); ++i) {
    if (!fns[i]) continue;
    CandidateReport &r = *reports[i];
    Measurement got = m->measure(i);
    r.status = got.status;
    r.error = got.error;
    r.error_ratio = got.error_ratio;
    r.measured = got.measured;
    r.time_us = got.time_us;
    // ptxas's report can be missing (seen under compute-sanitizer on an
    // H100: every candidate at 0 registers); the loaded kernel's own
    // attributes are the driver's word.
    if (r.registers == 0) {
      r.registers = got.registers;
      if (r.shared_bytes == 0) r.shared_bytes = got.static_shared_bytes;
    }
    if (options.progress) options.progress("measure", ++done, total);
  }

  // The leaders within noise of the fastest: timed again, interleaved, with a
  // longer budget; the median of the new runs decides.
  std::vector<size_t> leaders;
  double best = INFINITY;
  for (size_t i = 0; i < reports.size(); ++i)
    if (reports[i]->measured) best = std::min(best, reports[i]->time_us);
  for (size_t i = 0; i < reports.size(); ++i)
    if (reports[i]->measured && reports[i]->time_us <= best * (1 + options.retime_within)) leaders.push_back(i);
  if (leaders.size() > 1) {
    std::vector<std::vector<double>> samples(leaders.size());
    bool complete = true;
    for (int round = 0; round < 2 && complete; ++round)
      for (size_t l = 0; l < leaders.size() && complete; ++l) {
        std::optional<std::vector<double>> t = m->time_samples(leaders[l], options.retime_ms / 2);
        if (!t) complete = false;
        else samples[l].insert(samples[l].end(), t->begin(), t->end());
      }
    // Each leader was timed once already and ran correctly: should a retime
    // fail, those times stand.
    if (complete)
      for (size_t l = 0; l < leaders.size(); ++l) reports[leaders[l]]->time_us = runtime::median(samples[l]) * 1e3;
  }
  stats.measure_ms = ms_since(t1);
  stats.isolation = m->isolation();
  stats.workers_started = m->workers_started();
  return stats;
}

}  // namespace tessera::tuning
