//===- lib/tune/Measure.cpp - Verifying and timing candidates on the device -===//
#include "Measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <limits>

#include "tessera/analysis/Specialize.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/ir/Functor.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/runtime/Verify.h"
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

MeasureStats measure_candidates(const ir::PrimFunc &func, const Arch &arch, const TuneOptions &options,
                                const std::vector<CandidateReport *> &reports,
                                const std::vector<const runtime::Executable *> &fns) {
  MeasureStats stats;
  auto t0 = Clock::now();
  runtime::DimBindings dims = complete_dims(func, options.dims, options.symbolic_hint);
  std::vector<runtime::NDArray> inputs;
  runtime::Reference want;
  try {
    inputs = runtime::make_random_args(func, dims, options.seed);
    ComputedReference computed =
        reference_for(func, inputs, dims, arch, {.interpreter_limit = options.interpreter_limit, .oracle = options.oracle});
    want = std::move(computed.ref);
    stats.reference = computed.how;
  } catch (const Error &e) {
    stats.error = std::string("cannot make the reference output: ") + e.what();
    return stats;
  }
  stats.reference_ms = ms_since(t0);

  auto t1 = Clock::now();
  runtime::TimingOptions quick{.warmup_ms = options.warmup_ms, .measure_ms = options.measure_budget_ms};
  int total = 0, done = 0;
  for (const auto *fn : fns) total += fn != nullptr;
  for (size_t i = 0; i < reports.size(); ++i) {
    if (!fns[i]) continue;
    CandidateReport &r = *reports[i];
    std::vector<runtime::NDArray> got = inputs;
    try {
      fns[i]->run(got);
      // ptxas's report can be missing (seen under compute-sanitizer on an
      // H100: every candidate at 0 registers); the loaded kernel's own
      // attributes are the driver's word.
      if (r.registers == 0) {
        runtime::KernelAttributes a = fns[i]->attributes();
        r.registers = a.registers;
        if (r.shared_bytes == 0) r.shared_bytes = a.static_shared_bytes;
      }
      const runtime::ChecksSummary checks = runtime::summarize_checks(runtime::check_outputs(func, got, want));
      r.error_ratio = checks.worst_ratio;
      if (!checks.ok()) {
        r.status = CandidateStatus::WrongAnswer;
        r.error = checks.failures;
      } else {
        r.time_us = fns[i]->time(inputs, quick).median_ms * 1e3;
        r.measured = true;
      }
    } catch (const std::exception &e) {
      r.status = CandidateStatus::LaunchError;
      r.error = e.what();
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
    runtime::TimingOptions longer{.warmup_ms = options.warmup_ms, .measure_ms = options.retime_ms / 2};
    try {
      for (int round = 0; round < 2; ++round)
        for (size_t l = 0; l < leaders.size(); ++l) {
          runtime::TimingResult t = fns[leaders[l]]->time(inputs, longer);
          samples[l].insert(samples[l].end(), t.samples_ms.begin(), t.samples_ms.end());
        }
      for (size_t l = 0; l < leaders.size(); ++l) reports[leaders[l]]->time_us = runtime::median(samples[l]) * 1e3;
    } catch (const Error &) {
      // Each leader was timed once already and ran correctly; keep those times.
    }
  }
  stats.measure_ms = ms_since(t1);
  return stats;
}

}  // namespace tessera::tuning
