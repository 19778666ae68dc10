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
#include <map>

#include <fmt/format.h>

#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/support/Error.h"
#include "tessera/tune/DynamicKernel.h"
#include "tessera/tune/TuningKey.h"

namespace tessera::tune {

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

}  // namespace

std::string DynamicMeasureReport::str() const {
  return fmt::format("measured {} of {} cells ({} measurements, {} failed): {} cells reassigned, the predicted "
                     "kernel {:.3f}x the fastest measured (geomean); {:.1f} ms",
                     cells_measured, cells, measurements, failed, reassigned, geomean_gain, ms);
}

DynamicMeasureReport DynamicKernel::measure(const KernelTimerFn &time, const DynamicMeasureOptions &options) {
  const auto start = Clock::now();
  auto elapsed_ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
  DynamicMeasureReport report;
  rules::Json &cells_json = plan_.at("cells");
  report.cells = static_cast<int64_t>(cells_json.size());
  // Exact cells (M = 1, a hot batch size) first: an engine serves them most.
  std::vector<size_t> order;
  std::vector<PlanCell> cells;
  for (const rules::Json &j : cells_json) cells.push_back(read_cell(j, symbols_));
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < cells.size(); ++i)
      if (cells[i].exact() == (pass == 0)) order.push_back(i);

  double log_gain = 0;
  int64_t gains = 0;
  for (size_t i : order) {
    if (elapsed_ms() >= options.budget_ms) break;
    const PlanCell &cell = cells[i];
    const std::vector<int64_t> sizes = cell.upper_ends();
    std::map<std::string, int64_t> at;
    for (size_t s = 0; s < symbols_.size(); ++s) at[symbols_[s]] = sizes[s];
    std::vector<Record> records;
    std::optional<TuningKey> key;
    rules::Json workload;
    if (options.db) {
      ir::PrimFunc sized = analysis::specialize(func_, at);
      key = TuningKey::of(sized, arch_);
      workload = workload_summary(sized);
      rules::Json bounds;
      for (size_t s = 0; s < symbols_.size(); ++s) bounds[symbols_[s]] = {cell.bounds[s].first, cell.bounds[s].second};
      workload["dynamic_cell"] = bounds;
    }
    rules::Json times = rules::Json::object();
    int fastest = -1;
    double fastest_us = std::numeric_limits<double>::infinity(), own_us = kNaN;
    // Each kernel once (the cells' upper ends are distinct, so no size is
    // measured twice across cells either).
    for (int k : to_measure(cell, options.runner_up_within)) {
      if (elapsed_ms() >= options.budget_ms) break;
      double us = kNaN;
      std::string error;
      try {
        us = time(k, sizes);
      } catch (const std::exception &e) {
        error = e.what();
      }
      ++report.measurements;
      const bool ok = std::isfinite(us) && us > 0;
      if (!ok) {
        ++report.failed;
        if (error.empty()) error = "the timer gave no time";
      }
      if (key) {
        Record r{.key = *key, .workload = workload, .rule = rule_, .config = configs_[size_t(k)]};
        r.status = ok ? RecordStatus::Ok : RecordStatus::LaunchError;
        if (ok) r.time_us = us;
        r.error = error;
        records.push_back(std::move(r));
      }
      if (!ok) continue;
      times[std::to_string(k)] = us;
      if (k == cell.kernel) own_us = us;
      if (us < fastest_us) fastest_us = us, fastest = k;
    }
    if (options.db && !records.empty()) options.db->append(std::move(records));
    if (times.empty()) continue;
    ++report.cells_measured;
    cells_json[i]["measured_us"] = times;
    if (std::isfinite(own_us)) log_gain += std::log(own_us / fastest_us), ++gains;
    if (fastest >= 0 && fastest != cell.kernel) {
      ++report.reassigned;
      kernel_of_cell_[i] = fastest;
      cells_json[i]["config"] = fastest;
      cells_json[i]["predicted_config"] = cell.kernel;
    }
  }
  if (gains > 0) report.geomean_gain = std::exp(log_gain / double(gains));
  plan_["measured"] = {{"cells", report.cells_measured}, {"reassigned", report.reassigned}};
  if (options.cache) write_manifest(*options.cache);
  report.ms = elapsed_ms();
  return report;
}

KernelTimerFn DynamicKernel::device_timer(int device, const runtime::TimingOptions &timing) const {
  if (loaded_.size() != kernels_.size()) throw UserError("device_timer: load(device) first");
  // Each parameter buffer's size as a program over the symbols.
  std::map<std::string, std::pair<std::vector<SizeProgram>, ir::DataType>> shapes;
  for (const auto &[var, buffer] : func_.buffer_map()) {
    std::vector<SizeProgram> dims;
    for (const ir::Expr &e : buffer.shape()) dims.push_back(SizeProgram::compile(e, symbols_));
    shapes.emplace(buffer.name(), std::pair{std::move(dims), buffer.dtype()});
  }
  return [this, device, timing, shapes](int kernel, const std::vector<int64_t> &sizes) -> double {
    if (kernel < 0 || kernel >= int(kernels_.size())) throw UserError("no kernel " + std::to_string(kernel));
    std::vector<runtime::DeviceBuffer> buffers;
    std::vector<uint64_t> pointers;
    size_t total = 0;
    for (const PlannedKernel::Param &p : kernels_[size_t(kernel)].params) {
      if (p.symbol >= 0) continue;
      auto it = shapes.find(p.name);
      if (it == shapes.end()) throw UserError("kernel parameter '" + p.name + "' is no buffer of the function");
      int64_t elements = 1;
      for (const SizeProgram &d : it->second.first) elements *= std::max<int64_t>(d.eval(sizes.data()), 0);
      const ir::DataType t = it->second.second;
      size_t bytes = size_t((elements * t.bits() * t.lanes() + 7) / 8);
      std::vector<uint8_t> zeros(std::max<size_t>(bytes, 16), 0);
      buffers.emplace_back(zeros.size(), device);
      buffers.back().copy_from_host(zeros.data(), zeros.size());
      pointers.push_back(buffers.back().ptr());
      total += bytes;
    }
    BoundLaunch b = bind_kernel(kernel, sizes.data(), pointers.data(), pointers.size());
    if (!b.dims.has_work) return kNaN;
    runtime::TimingResult r = runtime::time_launches([&] { b.launch(); }, total, timing, device);
    return r.median_ms * 1000.0;
  };
}

}  // namespace tessera::tune
