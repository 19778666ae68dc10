//===- tessera/tune/DynamicKernel.h - A function's kernels for size ranges --===//
//
// The startup object of an inference engine: a function with symbolic sizes,
// the ranges it will see, and the GPU give a DynamicPlan (tune/DynamicPlan.h)
// whose kernels are built once and reused on every later start.
//
//   cold  plan; apply the rule at each chosen config; lower, generate CUDA C,
//         compile every kernel in one parallel NVRTC wave through the
//         KernelCache; write a manifest (the plan, and per kernel: its cubin's
//         cache key, entry name, parameters, launch extents as SizePrograms,
//         dynamic shared memory) into the cache directory;
//   warm  the manifest and the cubins read back: no policy, no rule, no
//         lowering, no NVRTC (the counters show it). A manifest or cubin that
//         does not read back whole is rebuilt cold, never trusted.
//
// The manifest's key covers the function's text, the spec, the Arch, and
// the NVRTC and tessera versions. select(sizes) finds the cell by a binary
// search per symbol and evaluates the launch extents (no lock, no
// allocation, no IR); launch() runs it on a device. Both are the dispatch
// library's (dispatch/KernelPlan.h, dispatch/Dispatcher.h), which a program
// that only launches saved plans links alone; building stays here.
//
//   runtime::KernelCache cache(runtime::KernelCache::default_dir());
//   DynamicKernel k = DynamicKernel::create(f, spec, arch, {.cache = &cache});
//   int64_t sizes[] = {37};
//   KernelLaunch l = k.select(sizes);   // l.kernel, l.grid, l.block
//
// A schedule that runs as several kernels (the fallback's two-block pooling,
// a padded convolution) is a plan kernel of several steps, launched in order
// on one stream; their intermediate buffers ("global" allocations) live in
// one workspace allocated by load() for the largest sizes of the plan, so a
// launch allocates nothing (and launches of one DynamicKernel on several
// streams at once must not overlap when it has a workspace). Every symbolic
// size of the function must have a range (bind the others with
// analysis::specialize first). A kernel fed or stored by TMA (Hopper's
// warp-specialised GEMMs) takes tensor maps after its other parameters: the
// manifest records, per map, the buffer, its shape as SizePrograms and the
// box, and bind() encodes each for the buffer's address and the sizes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/dispatch/Dispatcher.h"
#include "tessera/dispatch/KernelPlan.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/TensorMap.h"
#include "tessera/tune/Database.h"
#include "tessera/tune/DynamicPlan.h"

namespace tessera::tuning {

struct DynamicKernelOptions {
  /// Where cubins and the manifest are kept; null: build cold, keep nothing.
  runtime::KernelCache *cache = nullptr;
  /// NVRTC workers (0: every core).
  unsigned threads = 0;
};

// What a plan is made of, and its launches, are the dispatch library's
// (dispatch/KernelPlan.h, dispatch/Dispatcher.h): a dynamic kernel builds a
// dispatch::KernelPlan and launches it through a dispatch::Dispatcher.
using dispatch::BoundLaunch;
using dispatch::KernelLaunch;
using dispatch::LaunchDims;
using PlannedKernel = dispatch::PlanKernel;

/// What a start did.
struct DynamicKernelCounters {
  bool warm = false;
  int64_t kernels = 0, nvrtc_compiles = 0, cache_reads = 0, rule_applications = 0, policy_calls = 0;
  double plan_ms = 0, build_ms = 0, total_ms = 0;
  std::string str() const;
};

/// Times plan kernel `kernel` at `sizes` (one per symbol): its median time
/// in microseconds, NaN (or an exception) when it could not run there.
/// DynamicKernel::device_timer() is the GPU's; tests pass their own.
using KernelTimerFn = std::function<double(int kernel, const std::vector<int64_t> &sizes)>;

struct DynamicMeasureOptions {
  /// Wall-clock budget (ms) for measuring; the cells not reached keep the
  /// plan's kernel (counted in the report).
  double budget_ms = 5000;
  /// A cell measures its own kernel and every other kernel of the plan
  /// whose estimate there is within this factor of its own kernel's.
  double runner_up_within = 1.25;
  /// Each measurement is recorded here: the function specialised at the
  /// cell's sizes as the key, the cell in the workload field. Null: nowhere.
  Database *db = nullptr;
  /// The manifest is rewritten here with the measured assignment, so later
  /// starts use it. Null: this process only.
  runtime::KernelCache *cache = nullptr;
  /// The cells the budget leaves are measured on a background thread (no
  /// budget), each cell's fastest published to select()/launch() as soon as
  /// it is known; finish_measuring() waits for the rest and records it.
  bool background = false;
};

/// What measure() did.
struct DynamicMeasureReport {
  int64_t cells = 0, cells_measured = 0, measurements = 0, reassigned = 0, failed = 0;
  /// Cells left to a background measurement (DynamicMeasureOptions::background).
  int64_t background_cells = 0;
  /// Over the measured cells: the predicted kernel's time / the fastest
  /// measured one's (geomean; 1 when nothing changed).
  double geomean_gain = 1;
  double ms = 0;
  std::string str() const;
};

/// One function of a model and the ranges of its sizes.
struct DynamicRequest {
  ir::PrimFunc func;
  DynamicSpec spec;
  /// plan_dynamic(func, spec, arch), when the caller made it already (to
  /// print it): a cold start builds it instead of planning again, and its
  /// counters report the plan's work.
  const DynamicPlan *plan = nullptr;
};

class DynamicKernel {
 public:
  /// See the file comment. UserError for a function or spec the plan
  /// refuses; CompileError when a kernel does not compile.
  static DynamicKernel create(const ir::PrimFunc &f, const DynamicSpec &spec, const Arch &arch,
                              const DynamicKernelOptions &options = {});
  /// A model's operators at once: their plans in parallel, then every kernel
  /// of every cold one in one NVRTC wave (warm ones are read back). Each
  /// counts the whole wave in its build time.
  static std::vector<DynamicKernel> create_many(const std::vector<DynamicRequest> &requests, const Arch &arch,
                                                const DynamicKernelOptions &options = {});

  const std::vector<std::string> &symbols() const { return kernel_plan_->symbols; }
  /// The cells with their kernel (bounds, config index, estimates) and the
  /// configs as JSON (also after a warm start).
  const rules::Json &plan() const { return plan_; }
  const std::vector<PlannedKernel> &kernels() const { return kernel_plan_->kernels; }
  const DynamicKernelCounters &counters() const { return counters_; }
  /// What dispatch launches: the kernels, their launch metadata and the cell
  /// table (shared with the loaded dispatcher, and with copies of this
  /// object); what Kernel::save writes into a kernel package.
  std::shared_ptr<const dispatch::KernelPlan> kernel_plan() const { return kernel_plan_; }

  /// The launch for `sizes` (one per symbol, in order). UserError naming the
  /// size and range when one is outside the plan.
  KernelLaunch select(const int64_t *sizes) const { return kernel_plan_->select(sizes); }
  KernelLaunch select(const std::vector<int64_t> &sizes) const { return select(sizes.data()); }

  /// The scheduled function of kernel `i`: kept from a cold start, re-applied
  /// (the rule at its config) after a warm one. For tests and the interpreter.
  ir::PrimFunc scheduled(int i) const;

  /// Loads every kernel on `device` (once; a usable driver needed) and
  /// allocates the workspace for the plan's largest sizes. Launching needs it
  /// first, so the launch path takes no lock.
  void load(int device = 0);
  /// Whether load() was called.
  bool loaded() const { return loaded_ != nullptr; }
  /// What load() made; UserError before it.
  const dispatch::Dispatcher &dispatcher() const;
  /// The launch for `sizes` with the device addresses of the function's
  /// buffer parameters (in order; the scalar sizes and the workspace are
  /// added), bound: no lock, no allocation but for a kernel that takes
  /// tensor maps, whose maps are encoded here (a driver call each). UserError
  /// when not loaded, for sizes outside the plan, or too few buffers.
  BoundLaunch bind(const int64_t *sizes, const uint64_t *buffers, size_t buffer_count) const;
  /// bind() and launch on `stream`.
  void launch(const std::vector<uint64_t> &buffers, const std::vector<int64_t> &sizes, void *stream = nullptr) const;
  /// The encodings (runtime/TensorMap.h: every argument of
  /// cuTensorMapEncodeTiled but the address) of the tensor maps step `step`
  /// of plan kernel `kernel` takes at `sizes`, in parameter order; empty for
  /// a step without TMA. Needs no driver. UserError when a tensor cannot be
  /// described at these sizes (e.g. rows not a multiple of 16 bytes).
  std::vector<runtime::TensorMapEncoding> tensor_map_encodings(int kernel, int step, const int64_t *sizes) const {
    return kernel_plan_->tensor_map_encodings(kernel, step, sizes);
  }
  /// bind() with plan kernel `kernel` instead of the cell's (to measure it).
  BoundLaunch bind_kernel(int kernel, const int64_t *sizes, const uint64_t *buffers, size_t buffer_count) const;

  /// Measures, cell by cell (the exact and hot cells first, then the rest in
  /// order) at each cell's upper ends, its kernel and the close runners-up
  /// (DynamicMeasureOptions), and gives each measured cell the fastest
  /// (tuning a plan by measurement: ../shared/reference/DYNAMIC_SHAPES.md).
  /// Stops at the budget. A kernel that fails at a cell is never chosen
  /// there (its record says why); a cell where every measurement failed
  /// keeps its kernel. With options.background the cells past the budget
  /// go on in the background (see there): select()/launch() stay safe to
  /// call meanwhile (they read the cell table without a lock), the rest of
  /// the object is not to be used until finish_measuring(), and the object
  /// must not move (the timer points into it); its destruction stops the
  /// measurement after the current timing. UserError while one runs.
  DynamicMeasureReport measure(const KernelTimerFn &time, const DynamicMeasureOptions &options = {});
  /// Whether a background measurement is still timing cells.
  bool measuring() const;
  /// Waits for the background measurement, then does what measure() does
  /// with its cells (plan, database, manifest); the report covers the
  /// foreground and the background. An empty report when none was started.
  DynamicMeasureReport finish_measuring();
  /// A timer on `device` (after load(device)): each call allocates the
  /// function's buffers at `sizes` (zeroed; the scalar sizes bound) and
  /// times the kernel with runtime::time_launches.
  KernelTimerFn device_timer(int device = 0, const runtime::TimingOptions &timing = {}) const;

 private:
  /// Everything up to the compiles: a warm kernel whole, a cold one with its
  /// NVRTC jobs appended to `jobs`.
  static DynamicKernel begin(const DynamicRequest &request, const Arch &arch, const DynamicKernelOptions &options,
                             std::vector<runtime::CompileJob> &jobs);
  /// Takes the cubins of a cold kernel from `built` and writes its manifest.
  void finish(std::vector<runtime::CompileOutcome> &built, double wave_ms, runtime::KernelCache *cache);
  /// The plan and the kernels, as a warm start reads them back.
  void write_manifest(runtime::KernelCache &cache) const;

  ir::PrimFunc func_;
  std::string manifest_;   ///< its name in the kernel cache
  size_t first_job_ = 0;   ///< its first job in the compile wave
  Arch arch_;
  rules::Json plan_;
  std::string rule_;
  std::vector<rules::Json> configs_;
  /// The symbols and their cells, the cell table, the kernels (tune/PlanKernel.h).
  std::shared_ptr<dispatch::KernelPlan> kernel_plan_;
  mutable std::vector<ir::PrimFunc> scheduled_;
  /// The measurement going on in the background, if any (DynamicMeasure.cpp).
  struct Background;
  std::shared_ptr<Background> background_;
  DynamicKernelCounters counters_;
  /// What load() made (the modules, the workspace).
  std::shared_ptr<const dispatch::Dispatcher> loaded_;
};

}  // namespace tessera::tuning
