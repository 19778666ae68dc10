//===- tessera/dispatch/Dispatcher.h - A kernel plan on a device: bind, launch ===//
//
// The launch half of tessera, for an engine that only runs kernels built
// earlier: it links no compiler (no IR, no NVRTC, no LLVM), only the CUDA
// driver, which it loads lazily.
//
//   dispatch::Package pkg = dispatch::load_package("softmax.tsk");   // dispatch/Package.h
//   dispatch::Dispatcher d(pkg.plan, /*device=*/0);   // modules loaded, workspace allocated
//   int64_t sizes[] = {4096};                          // or d.plan().sizes_of(shapes)
//   uint64_t buffers[] = {x_ptr, y_ptr};               // the function's buffers, in order
//   d.bind(sizes, buffers, 2).launch(stream);          // no lock, no allocation
//   d.launch(tensors, 2, stream);                      // DLTensors: sizes from their shapes, checked
//
// A plan kernel of several steps launches them in order on one stream; their
// intermediate buffers live in one workspace allocated here for the plan's
// largest sizes, so launches of one Dispatcher on several streams at once
// must not overlap when it has a workspace. A kernel fed or stored by TMA
// takes tensor maps, encoded at bind for the buffers' addresses (a driver
// call each).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <dlpack/dlpack.h>

#include "tessera/dispatch/KernelPlan.h"

namespace tessera::dispatch {

/// A launch with its arguments bound (for CUDA graph capture, or to launch
/// later): per step the kernel and its argument block, no allocation.
struct BoundLaunch {
  static constexpr int kMaxParams = KernelPlan::kMaxParams;
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

class Dispatcher {
 public:
  /// Loads every kernel of `plan` on `device` (a usable driver needed:
  /// RuntimeError otherwise, UserError when the plan's target is not the
  /// device's) and allocates the workspace for the plan's largest sizes.
  Dispatcher(std::shared_ptr<const KernelPlan> plan, int device = 0);

  const KernelPlan &plan() const { return *plan_; }
  int device() const { return device_; }

  /// The launch for `sizes` (one per symbol) with the device addresses of
  /// the function's buffer parameters (in order; the sizes and the
  /// workspace are added), bound. UserError for sizes outside the plan or
  /// too few buffers.
  BoundLaunch bind(const int64_t *sizes, const uint64_t *buffers, size_t buffer_count) const;
  /// bind() with plan kernel `kernel` instead of the cell's (to measure it).
  BoundLaunch bind_kernel(int kernel, const int64_t *sizes, const uint64_t *buffers, size_t buffer_count) const;
  /// bind() and launch on `stream`.
  void launch(const std::vector<uint64_t> &buffers, const std::vector<int64_t> &sizes, void *stream = nullptr) const;
  /// Launches on DLPack tensors, one per buffer parameter in order: on this
  /// device (kDLCUDA), of the argument's dtype, compact row-major (strides
  /// null or dense), the symbols read from their shapes. UserError naming
  /// the argument for anything else.
  void launch(const DLTensor *const *tensors, size_t count, void *stream = nullptr) const;

 private:
  std::shared_ptr<const KernelPlan> plan_;
  int device_ = 0;
  struct Loaded;
  std::shared_ptr<Loaded> loaded_;
};

/// The device address of a DLPack tensor's data (data + byte_offset), after
/// checking that it matches `argument`: device (kDLCUDA on `device`, or
/// kDLCPU when `device` is -1), dtype, rank and compact row-major strides.
/// UserError naming argument `index` otherwise. Its shape is the caller's to
/// check (KernelPlan::sizes_of).
uint64_t tensor_address(const DLTensor &t, const Argument &argument, size_t index, int device);

/// The shape of a DLPack tensor.
std::vector<int64_t> tensor_shape(const DLTensor &t);

}  // namespace tessera::dispatch
