//===- lib/tune/DynamicMeasure.cpp - A dynamic kernel's cells by measurement ===//
//
// DynamicKernel::measure: the plan's assignment of kernels to cells is the
// cost model's; on a device each cell's kernel and its close runners-up are
// timed at the cell's upper ends and the fastest kept (recorded in the tuning
// database, the manifest rewritten). DynamicKernel::device_timer: the timer
// that does it on a GPU.
//
//===----------------------------------------------------------------------===//
#include <chrono>
#include <cmath>
#include <limits>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/support/Error.h"
#include "tessera/tune/DynamicKernel.h"
#include "tessera/tune/TuningKey.h"

namespace tessera::tuning {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// A cell of the plan's JSON: its bounds, kernel and the estimates of every kernel there.
struct PlanCell {
  std::vector<std::pair<int64_t, int64_t>> bounds;
  int kernel = 0;
  std::vector<double> kernel_us;  ///< inf where there is none (or an older manifest: empty)

  bool exact() const {
    for (auto [lo, hi] : bounds)
      if (lo != hi) return false;
    return true;
  }
  std::vector<int64_t> upper_ends() const {
    std::vector<int64_t> out;
    for (auto [lo, hi] : bounds) out.push_back(hi);
    return out;
  }
};

PlanCell read_cell(const rules::Json &j, const std::vector<std::string> &symbols) {
  PlanCell c;
  for (const std::string &s : symbols) {
    const rules::Json &b = j.at("bounds").at(s);
    c.bounds.emplace_back(b.at(0).get<int64_t>(), b.at(1).get<int64_t>());
  }
  c.kernel = j.at("config").get<int>();
  if (j.contains("kernel_us"))
    for (const rules::Json &us : j.at("kernel_us"))
      c.kernel_us.push_back(us.is_number() ? us.get<double>() : std::numeric_limits<double>::infinity());
  return c;
}

/// The kernels a cell measures: its own, then those whose estimate there is
/// within `within` of its own's (by estimate).
std::vector<int> to_measure(const PlanCell &c, double within) {
  std::vector<int> out = {c.kernel};
  if (c.kernel_us.empty() || !std::isfinite(c.kernel_us[size_t(c.kernel)])) return out;
  const double own = c.kernel_us[size_t(c.kernel)];
  std::vector<std::pair<double, int>> close;
  for (size_t k = 0; k < c.kernel_us.size(); ++k)
    if (int(k) != c.kernel && c.kernel_us[k] <= own * within) close.emplace_back(c.kernel_us[k], int(k));
  std::sort(close.begin(), close.end());
  for (auto [_, k] : close) out.push_back(k);
  return out;
}

/// What a cell's records need to know of the function.
struct RecordContext {
  ir::PrimFunc func;
  Arch arch;
  std::vector<std::string> symbols;
  std::string rule;
  std::vector<rules::Json> configs;
  bool wanted = false;  ///< whether records are made at all (a database was given)
};

/// What measuring one cell found.
struct CellOutcome {
  size_t index = 0;
  int planned = 0;
  rules::Json times = rules::Json::object();
  int fastest = -1;
  double fastest_us = std::numeric_limits<double>::infinity(), own_us = kNaN;
  int64_t measurements = 0, failed = 0;
  std::vector<Record> records;
};

/// Times `cell`'s kernel and its runners-up at its upper ends while
/// `go()` says so (each kernel once; the cells' upper ends are distinct, so
/// no size is measured twice across cells either).
CellOutcome measure_cell(const RecordContext &ctx, size_t index, const PlanCell &cell, const KernelTimerFn &time,
                         double within, const std::function<bool()> &go) {
  CellOutcome o;
  o.index = index;
  o.planned = cell.kernel;
  const std::vector<int64_t> sizes = cell.upper_ends();
  std::optional<TuningKey> key;
  rules::Json workload;
  if (ctx.wanted) {
    std::map<std::string, int64_t> at;
    for (size_t s = 0; s < ctx.symbols.size(); ++s) at[ctx.symbols[s]] = sizes[s];
    ir::PrimFunc sized = analysis::specialize(ctx.func, at);
    key = TuningKey::of(sized, ctx.arch);
    workload = workload_summary(sized);
    rules::Json bounds;
    for (size_t s = 0; s < ctx.symbols.size(); ++s) bounds[ctx.symbols[s]] = {cell.bounds[s].first, cell.bounds[s].second};
    workload["dynamic_cell"] = bounds;
  }
  for (int k : to_measure(cell, within)) {
    if (!go()) break;
    double us = kNaN;
    std::string error;
    try {
      us = time(k, sizes);
    } catch (const std::exception &e) {
      error = e.what();
    }
    ++o.measurements;
    const bool ok = std::isfinite(us) && us > 0;
    if (!ok) {
      ++o.failed;
      if (error.empty()) error = "the timer gave no time";
    }
    if (key) {
      Record r{.key = *key, .workload = workload, .rule = ctx.rule, .config = ctx.configs[size_t(k)]};
      r.status = ok ? RecordStatus::Ok : RecordStatus::LaunchError;
      if (ok) r.time_us = us;
      r.error = error;
      o.records.push_back(std::move(r));
    }
    if (!ok) continue;
    o.times[std::to_string(k)] = us;
    if (k == cell.kernel) o.own_us = us;
    if (us < o.fastest_us) o.fastest_us = us, o.fastest = k;
  }
  return o;
}

/// A report's running sums, and how cell outcomes enter the plan's JSON.
struct Tally {
  DynamicMeasureReport report;
  double log_gain = 0;
  int64_t gains = 0;

  void add(CellOutcome &o, rules::Json &cells_json, const DynamicMeasureOptions &options) {
    report.measurements += o.measurements;
    report.failed += o.failed;
    if (options.db && !o.records.empty()) options.db->append(std::move(o.records));
    if (o.times.empty()) return;
    ++report.cells_measured;
    rules::Json &cell = cells_json[o.index];
    cell["measured_us"] = o.times;
    if (std::isfinite(o.own_us)) log_gain += std::log(o.own_us / o.fastest_us), ++gains;
    if (o.fastest >= 0 && o.fastest != o.planned) {
      ++report.reassigned;
      cell["config"] = o.fastest;
      cell["predicted_config"] = o.planned;
    }
  }
  DynamicMeasureReport finish(rules::Json &plan) {
    if (gains > 0) report.geomean_gain = std::exp(log_gain / double(gains));
    plan["measured"] = {{"cells", report.cells_measured}, {"reassigned", report.reassigned}};
    return report;
  }
};

}  // namespace

/// The cells a measure() left to a thread: what it found, handed over to
/// finish_measuring(). The destructor stops the thread after its current
/// timing and joins it.
struct DynamicKernel::Background {
  std::atomic<bool> stop{false}, done{false};
  std::mutex mutex;
  std::vector<CellOutcome> outcomes;  ///< guarded by `mutex`
  Tally tally;                        ///< the foreground's, continued by finish_measuring()
  DynamicMeasureOptions options;
  Clock::time_point start;
  std::thread thread;

  ~Background() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

std::string DynamicMeasureReport::str() const {
  return fmt::format("measured {} of {} cells ({} measurements, {} failed): {} cells reassigned, the predicted "
                     "kernel {:.3f}x the fastest measured (geomean){}; {:.1f} ms",
                     cells_measured, cells, measurements, failed, reassigned, geomean_gain,
                     background_cells ? fmt::format(", {} cells left to the background", background_cells) : "",
                     ms);
}

DynamicMeasureReport DynamicKernel::measure(const KernelTimerFn &time, const DynamicMeasureOptions &options) {
  if (background_) throw UserError("measure: a background measurement is running; finish_measuring() first");
  const auto start = Clock::now();
  auto elapsed_ms = [start] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  rules::Json &cells_json = plan_.at("cells");
  Tally tally;
  tally.report.cells = static_cast<int64_t>(cells_json.size());
  // Exact cells (M = 1, a hot batch size) first: an engine serves them most.
  std::vector<size_t> order;
  std::vector<PlanCell> cells;
  for (const rules::Json &j : cells_json) cells.push_back(read_cell(j, symbols()));
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < cells.size(); ++i)
      if (cells[i].exact() == (pass == 0)) order.push_back(i);

  const RecordContext ctx{func_, arch_, symbols(), rule_, configs_, options.db != nullptr};
  auto in_budget = [&] { return elapsed_ms() < options.budget_ms; };
  size_t next = 0;
  for (; next < order.size() && in_budget(); ++next) {
    CellOutcome o = measure_cell(ctx, order[next], cells[order[next]], time, options.runner_up_within, in_budget);
    if (o.fastest >= 0) kernel_plan_->cells.set(o.index, o.fastest);
    tally.add(o, cells_json, options);
  }
  if (options.background && next < order.size()) {
    // The rest on a thread that shares only the cell table, not this object.
    auto bg = std::make_shared<Background>();
    bg->options = options;
    bg->start = start;
    std::vector<std::pair<size_t, PlanCell>> rest;
    for (; next < order.size(); ++next) rest.emplace_back(order[next], cells[order[next]]);
    tally.report.background_cells = static_cast<int64_t>(rest.size());
    bg->thread = std::thread([state = bg.get(), table = kernel_plan_->cells, ctx, rest = std::move(rest), time,
                              within = options.runner_up_within] {
      auto go = [state] { return !state->stop.load(); };
      for (const auto &[i, cell] : rest) {
        if (!go()) break;
        CellOutcome o = measure_cell(ctx, i, cell, time, within, go);
        if (o.fastest >= 0) table.set(o.index, o.fastest);
        std::lock_guard<std::mutex> lock(state->mutex);
        state->outcomes.push_back(std::move(o));
      }
      state->done = true;
    });
    bg->tally = tally;
    background_ = std::move(bg);
  }
  DynamicMeasureReport report = tally.finish(plan_);
  if (options.cache) write_manifest(*options.cache);
  report.ms = elapsed_ms();
  return report;
}

bool DynamicKernel::measuring() const { return background_ && !background_->done; }

DynamicMeasureReport DynamicKernel::finish_measuring() {
  if (!background_) return {};
  std::shared_ptr<Background> bg = std::move(background_);
  if (bg->thread.joinable()) bg->thread.join();
  rules::Json &cells_json = plan_.at("cells");
  Tally &tally = bg->tally;
  tally.report.background_cells = 0;
  for (CellOutcome &o : bg->outcomes) tally.add(o, cells_json, bg->options);
  DynamicMeasureReport report = tally.finish(plan_);
  if (bg->options.cache) write_manifest(*bg->options.cache);
  report.ms = std::chrono::duration<double, std::milli>(Clock::now() - bg->start).count();
  return report;
}

KernelTimerFn DynamicKernel::device_timer(int device, const runtime::TimingOptions &timing) const {
  if (!loaded_) throw UserError("device_timer: load(device) first");
  // The shape of each of the function's buffer parameters, in order, as
  // programs over the symbols (a workspace buffer has its own).
  std::vector<dispatch::BufferShape> shapes;
  for (const dispatch::Argument &a : kernel_plan_->arguments) shapes.push_back(a.buffer);
  return [this, device, timing, shapes](int kernel, const std::vector<int64_t> &sizes) -> double {
    if (kernel < 0 || kernel >= int(kernels().size())) throw UserError("no kernel " + std::to_string(kernel));
    std::vector<runtime::DeviceBuffer> buffers;
    std::vector<uint64_t> pointers;
    size_t total = 0;
    for (const dispatch::BufferShape &shape : shapes) {
      const size_t bytes = size_t(shape.bytes(sizes.data()));
      std::vector<uint8_t> zeros(std::max<size_t>(bytes, 16), 0);
      buffers.emplace_back(zeros.size(), device);
      buffers.back().copy_from_host(zeros.data(), zeros.size());
      pointers.push_back(buffers.back().ptr());
      total += bytes;
    }
    BoundLaunch b = bind_kernel(kernel, sizes.data(), pointers.data(), pointers.size());
    if (!b.dims.has_work()) return kNaN;
    runtime::TimingResult r = runtime::time_launches([&] { b.launch(); }, total, timing, device);
    return r.median_ms * 1000.0;
  };
}

}  // namespace tessera::tuning
