//===- tessera/dispatch/KernelPlan.h - Built kernels, and which serves which sizes ===//
//
// What running a tuned function needs and nothing more: no IR, no compiler.
// A KernelPlan is a function's compiled kernels (cubins with their launch
// metadata) and the table that says which of them serves which sizes:
//
//   symbols  m, n                  the function's symbolic sizes (none: static)
//   cells    per symbol, the upper end of each range of sizes ([1, 1], [2, 3], ...);
//            a cell is one range per symbol, the last symbol fastest
//   kernels  per cell, the kernel that serves it; a kernel is one or more
//            CUDA kernels (steps) launched in order, their parameters, their
//            grid and block as SizePrograms of the symbols, the intermediate
//            buffers they share (the workspace) and the tensor maps they take
//   arguments  the function's buffer parameters: name, dtype, shape
//
//   KernelLaunch l = plan.select(sizes);          // l.kernel, l.step[s].grid, ...
//   std::vector<int64_t> s = plan.sizes_of(shapes);  // the symbols from the arguments' shapes
//
// A function of static shapes is a plan with no symbols and one cell. The
// compiler side (tuning::DynamicKernel, tessera::tune) builds plans; the
// dispatch side (dispatch/Dispatcher.h) loads them on a device and launches
// them; dispatch/Package.h saves and loads them as one file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/dispatch/SizeProgram.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/TensorMap.h"

namespace tessera::dispatch {

/// A buffer's shape as programs of the symbols.
struct BufferShape {
  std::string name;
  std::vector<SizeProgram> shape;
  int64_t element_bits = 0;
  /// Its bytes at `sizes` (0 for a zero extent; 1 element for a scalar shape).
  int64_t bytes(const int64_t *sizes) const;
  /// Its shape at `sizes`.
  std::vector<int64_t> at(const int64_t *sizes) const;
};

/// One of the function's buffer parameters, in order.
struct Argument {
  BufferShape buffer;
  /// The element type as TVMScript names it ("float16", "int32", ...).
  std::string dtype;
  /// Whether a kernel of the function stores into it (an output).
  bool written = false;
};

/// A kernel parameter: one of the function's buffers, a workspace buffer,
/// or a symbol's value.
struct KernelParam {
  std::string name;
  int symbol = -1;     ///< the symbol a scalar parameter is
  int bytes = 0;       ///< a scalar's width (4 or 8)
  int buffer = -1;     ///< the function's buffer parameter it is
  int workspace = -1;  ///< the workspace buffer it is
};

/// A tensor map a kernel takes after its other parameters: the box it
/// copies out of one of the function's buffers, encoded at bind from the
/// buffer's address and its shape at the sizes.
struct TensorMapParam {
  int buffer = -1;  ///< the function's buffer parameter it describes
  BufferShape tensor;
  runtime::TensorMapBox box;
};

/// One CUDA kernel.
struct KernelStep {
  std::string entry;
  std::vector<uint8_t> cubin;
  /// Its name in the kernel cache ("" when it was not cached).
  std::string cache_key;
  std::string target;  ///< the NVRTC target it was compiled for ("sm_90", "sm_90a")
  std::vector<KernelParam> params;
  std::vector<TensorMapParam> tensor_maps;
  SizeProgram grid[3] = {SizeProgram::constant(1), SizeProgram::constant(1), SizeProgram::constant(1)};
  SizeProgram block[3] = {SizeProgram::constant(1), SizeProgram::constant(1), SizeProgram::constant(1)};
  int64_t dynamic_shared_bytes = 0;
};

/// The function at one config: its CUDA kernels, launched in order, and the
/// intermediate buffers they share.
struct PlanKernel {
  std::vector<KernelStep> steps;
  std::vector<BufferShape> workspace;
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

/// Cell -> kernel, dense; read without a lock while a measurement (on
/// another thread) reassigns cells. Copies share the table.
class CellTable {
 public:
  void assign(const std::vector<int> &kernels);
  int operator[](size_t cell) const { return (*table_)[cell].load(std::memory_order_acquire); }
  void set(size_t cell, int kernel) const { (*table_)[cell].store(kernel, std::memory_order_release); }
  size_t size() const { return table_ ? table_->size() : 0; }
  std::vector<int> snapshot() const;

 private:
  std::shared_ptr<std::vector<std::atomic<int>>> table_;
};

class KernelPlan {
 public:
  /// The most parameters one step takes (a launch's argument block).
  static constexpr int kMaxParams = 32;

  /// The function's name (for messages).
  std::string name;
  /// The GPU architecture the cubins are for ("sm_90") and the Arch's
  /// fingerprint (Arch::fingerprint, for messages and checks).
  std::string target, arch;
  std::vector<std::string> symbols;
  /// Per symbol, its lowest size and the upper end of each of its cells
  /// (ascending; the last is the highest size served).
  std::vector<int64_t> lows;
  std::vector<std::vector<int64_t>> ends;
  CellTable cells;
  std::vector<PlanKernel> kernels;
  std::vector<Argument> arguments;

  /// The number of cells (the product of the symbols' cell counts).
  size_t cell_count() const;
  /// The launch for `sizes` (one per symbol, in order). UserError naming the
  /// size and range when one is outside the plan.
  KernelLaunch select(const int64_t *sizes) const;
  /// `l.kernel`'s launch dimensions at `sizes` (l.kernel set by the caller).
  void fill_dims(KernelLaunch &l, const int64_t *sizes) const;
  /// The symbols' values given the arguments' shapes (one shape per
  /// argument, in order): each symbol from the first dimension that is that
  /// symbol alone, then every dimension checked against its program.
  /// UserError naming the argument and dimension when they disagree, an
  /// argument has the wrong rank, or a symbol is in no dimension.
  std::vector<int64_t> sizes_of(const std::vector<std::vector<int64_t>> &shapes) const;
  /// The encodings (runtime/TensorMap.h) of the tensor maps step `step` of
  /// kernel `kernel` takes at `sizes`, in parameter order; empty for a step
  /// without TMA. Needs no driver. UserError when a tensor cannot be
  /// described at these sizes.
  std::vector<runtime::TensorMapEncoding> tensor_map_encodings(int kernel, int step, const int64_t *sizes) const;
  /// Where each workspace buffer of each kernel lives in one workspace of
  /// `bytes`: per kernel and buffer its offset (256-byte aligned) and the
  /// bytes reserved, its largest over the edges of the cells (a launch uses
  /// one kernel's buffers, so the kernels share the workspace).
  struct WorkspaceLayout {
    std::vector<std::vector<std::pair<size_t, int64_t>>> spans;
    size_t bytes = 0;
  };
  WorkspaceLayout workspace_layout() const;
  /// The 8-byte values of the parameters of step `step` of kernel `kernel`
  /// at `sizes`, in order, into `values` (room for kMaxParams): the
  /// function's buffers from `buffers` (device addresses, in order), the
  /// sizes, and the workspace buffers at `workspace` + their offset in
  /// `layout`. Returns how many; the tensor maps that follow them are the
  /// driver's (Dispatcher::bind). No driver needed. UserError for too few
  /// buffers, more parameters than kMaxParams, or a workspace buffer that
  /// needs more at these sizes than `layout` reserved.
  int bind_values(int kernel, int step, const int64_t *sizes, const uint64_t *buffers, size_t buffer_count,
                  uint64_t workspace, const WorkspaceLayout &layout, uint64_t *values) const;
  /// Checks that every index in the plan names something that exists
  /// (slots, kernels, cells); UserError saying what does not. from_json runs it.
  void validate() const;

  /// Everything but the cubins' bytes: each step has its "cubin_key".
  Json to_json() const;
  /// The plan of `to_json()`; `cubin(step_json)` gives each step's bytes
  /// (from a cache by its key, or from a package). UserError for anything
  /// missing, malformed or inconsistent: a damaged plan is never trusted.
  static KernelPlan from_json(const Json &j, const std::function<std::vector<uint8_t>(const Json &)> &cubin);
};

}  // namespace tessera::dispatch
