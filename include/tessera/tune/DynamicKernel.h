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
// allocation, no IR); launch() runs it on a device.
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

#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/KernelCache.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/runtime/TensorMap.h"
#include "tessera/tune/Database.h"
#include "tessera/tune/DynamicPlan.h"
#include "tessera/tune/SizeProgram.h"

namespace tessera::tune {

struct DynamicKernelOptions {
  /// Where cubins and the manifest are kept; null: build cold, keep nothing.
  runtime::KernelCache *cache = nullptr;
  /// NVRTC workers (0: every core).
  unsigned threads = 0;
};

/// The dimensions of one kernel launch.
struct LaunchDims {
  runtime::Dim3 grid, block;
  size_t dynamic_shared_bytes = 0;
  /// False when an extent is zero for these sizes (nothing to launch).
  bool has_work = true;
};

/// What serves these sizes: the cell, the plan kernel, and the dimensions of
/// each of its launches (one for a function that runs as one kernel).
struct KernelLaunch {
  static constexpr int kMaxSteps = 8;
  int cell = -1, kernel = -1;
  int steps = 0;
  LaunchDims step[kMaxSteps];
  /// Whether any step has work.
  bool has_work() const;
};

/// A launch with its arguments bound (for CUDA graph capture, or to launch
/// later): per step the kernel and its argument block, no allocation.
struct BoundLaunch {
  static constexpr int kMaxParams = 32;
  static constexpr int kMaxTensorMaps = 4;
  KernelLaunch dims;
  struct Step {
    const runtime::Kernel *kernel = nullptr;
    /// One 8-byte slot per kernel parameter (a device address or a size).
    uint64_t values[kMaxParams];
    int count = 0;
    /// The tensor maps (runtime/TensorMap.h) that follow them, encoded.
    alignas(runtime::kTensorMapAlignment) unsigned char maps[kMaxTensorMaps][runtime::kTensorMapBytes];
    int map_count = 0;
  };
  Step step[KernelLaunch::kMaxSteps];
  /// cuLaunchKernel's `void **` over step `s`'s values, then its tensor maps
  /// (valid while this object lives and until the next call for the same step).
  void **params(int s = 0) {
    for (int i = 0; i < step[s].count; ++i) pointers_[i] = &step[s].values[i];
    for (int i = 0; i < step[s].map_count; ++i) pointers_[step[s].count + i] = step[s].maps[i];
    return pointers_;
  }
  /// Enqueues its steps, in order, on `stream` (a CUstream; null: the
  /// default stream); steps without work are skipped.
  void launch(void *stream = nullptr);

 private:
  void *pointers_[kMaxParams + kMaxTensorMaps];
};

/// What a start did.
struct DynamicKernelCounters {
  bool warm = false;
  int64_t kernels = 0, nvrtc_compiles = 0, cache_reads = 0, rule_applications = 0, policy_calls = 0;
  double plan_ms = 0, build_ms = 0, total_ms = 0;
  std::string str() const;
};

/// A built kernel of the plan: the function at one config, as one or more
/// CUDA kernels launched in order, and the intermediate buffers they share.
struct PlannedKernel {
  /// A kernel parameter: the function's buffer (its index among the
  /// function's buffer parameters), a workspace buffer, or a plan symbol.
  struct Param {
    std::string name;
    int symbol = -1;     ///< the plan symbol a scalar parameter is
    int bytes = 0;       ///< a scalar's width (4 or 8)
    int buffer = -1;     ///< the function's buffer parameter it is
    int workspace = -1;  ///< the workspace buffer it is
  };
  /// A buffer's shape as programs of the symbols (the workspace: the
  /// intermediate buffers in global memory).
  struct BufferShape {
    std::string name;
    std::vector<SizeProgram> shape;
    int64_t element_bits = 0;
    /// Its bytes at `sizes` (0 for an empty shape).
    int64_t bytes(const int64_t *sizes) const;
    /// `buffer`'s name, element width and shape over `symbols`.
    static BufferShape of(const ir::Buffer &buffer, const std::vector<std::string> &symbols);
  };
  /// A tensor map a kernel takes after its other parameters
  /// (lower/TensorMaps.h): the box it copies of one of the function's
  /// buffers, encoded at bind() from the buffer's address and its shape at
  /// the sizes.
  struct TensorMap {
    int buffer = -1;  ///< the function's buffer parameter it describes
    BufferShape tensor;
    ir::DataType dtype;
    ir::tma::Box box;
  };
  /// One CUDA kernel.
  struct Step {
    std::string entry;
    std::vector<uint8_t> cubin;
    std::string cache_key;
    std::string target;  ///< the NVRTC target it was compiled for ("sm_90", "sm_90a")
    std::vector<Param> params;
    std::vector<TensorMap> tensor_maps;
    SizeProgram grid[3], block[3];
    int64_t dynamic_shared_bytes = 0;
  };
  std::vector<Step> steps;
  std::vector<BufferShape> workspace;
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

  const std::vector<std::string> &symbols() const { return symbols_; }
  /// The cells with their kernel (bounds, config index, estimates) and the
  /// configs as JSON (also after a warm start).
  const rules::Json &plan() const { return plan_; }
  const std::vector<PlannedKernel> &kernels() const { return kernels_; }
  const DynamicKernelCounters &counters() const { return counters_; }

  /// The launch for `sizes` (one per symbol, in order). UserError naming the
  /// size and range when one is outside the plan.
  KernelLaunch select(const int64_t *sizes) const;
  KernelLaunch select(const std::vector<int64_t> &sizes) const { return select(sizes.data()); }

  /// The scheduled function of kernel `i`: kept from a cold start, re-applied
  /// (the rule at its config) after a warm one. For tests and the interpreter.
  ir::PrimFunc scheduled(int i) const;

  /// Loads every kernel on `device` (once; a usable driver needed) and
  /// allocates the workspace for the plan's largest sizes. Launching needs it
  /// first, so the launch path takes no lock.
  void load(int device = 0);
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
  std::vector<runtime::TensorMapEncoding> tensor_map_encodings(int kernel, int step, const int64_t *sizes) const;
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
  /// l.kernel's launch dimensions at `sizes`.
  void fill_dims(KernelLaunch &l, const int64_t *sizes) const;
  /// The plan kernel of a scheduled function: its steps' parameters and
  /// launch extents, its workspace; a compile job per step appended to `jobs`.
  PlannedKernel plan_kernel(const ir::PrimFunc &scheduled, const std::string &sm, runtime::KernelCache *cache,
                            std::vector<runtime::CompileJob> &jobs) const;
  /// The plan and the kernels, as a warm start reads them back.
  void write_manifest(runtime::KernelCache &cache) const;

  ir::PrimFunc func_;
  std::string manifest_;   ///< its name in the kernel cache
  size_t first_job_ = 0;   ///< its first job in the compile wave
  Arch arch_;
  std::vector<std::string> symbols_;
  rules::Json plan_;
  std::string rule_;
  std::vector<rules::Json> configs_;
  std::vector<PlannedKernel> kernels_;
  mutable std::vector<ir::PrimFunc> scheduled_;
  /// Per symbol, the upper end of each of its cells (ascending) and its lower end.
  std::vector<std::vector<int64_t>> ends_;
  std::vector<int64_t> lows_;
  /// Cell -> kernel, dense, the symbols' cells in row-major order; read by
  /// select() without a lock while a background measurement writes it
  /// (copies of the object share it).
  class CellKernels {
   public:
    void assign(const std::vector<int> &kernels);
    int operator[](size_t cell) const { return (*table_)[cell].load(std::memory_order_acquire); }
    void set(size_t cell, int kernel) const { (*table_)[cell].store(kernel, std::memory_order_release); }
    size_t size() const { return table_ ? table_->size() : 0; }

   private:
    std::shared_ptr<std::vector<std::atomic<int>>> table_;
  };
  CellKernels kernel_of_cell_;
  /// The measurement going on in the background, if any (DynamicMeasure.cpp).
  struct Background;
  std::shared_ptr<Background> background_;
  DynamicKernelCounters counters_;
  /// What load() made: the modules, the kernels (by plan kernel, then step)
  /// and the workspace, with each plan kernel's workspace buffers' offsets.
  struct Loaded {
    int device = 0;
    std::vector<runtime::Module> modules;
    std::vector<std::vector<runtime::Kernel>> kernels;
    runtime::DeviceBuffer workspace;
    /// Per plan kernel and workspace buffer: its offset and the bytes reserved.
    std::vector<std::vector<std::pair<size_t, int64_t>>> spans;
  };
  std::shared_ptr<Loaded> loaded_;
  /// The address of workspace buffer `w` of plan kernel `kernel`; UserError
  /// when `sizes` need more than load() allocated.
  uint64_t workspace_address(int kernel, int w, const int64_t *sizes) const;
};

}  // namespace tessera::tune
