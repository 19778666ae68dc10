//===- tessera/runtime/KernelTimer.h - Timing kernels on the device --------===//
//
// Times a kernel the way the strongest tuners do (shared/reference/TIMING.md):
//   1. the first call is discarded (module load, lazy init, clock ramp-up);
//   2. warm-up and repetitions are time budgets, so short kernels get more
//      repetitions (Triton: 25 ms / 100 ms), within [min_reps, max_reps];
//   3. each repetition is bracketed by its own pair of CUDA events;
//   4. L2 is flushed before every repetition, outside the events, by writing
//      a buffer of twice the L2 size, when the kernel's buffers fit in L2
//      (larger inputs evict it themselves);
//   5. the median decides; min, max, mean and every sample are kept.
// The inputs are the caller's: time on real data (NDArray::fill_random), never
// on zeros, whose arithmetic and compression make kernels look faster.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <vector>

#include "tessera/runtime/CudaDriver.h"

namespace tessera::runtime {

struct TimingOptions {
  double warmup_ms = 25;    ///< time spent in warm-up calls (after the discarded first)
  double measure_ms = 100;  ///< time budget for the timed repetitions
  int min_reps = 10;
  int max_reps = 1000;
  enum class Flush { Auto, Always, Never };
  /// Auto: flush when the kernel's buffers fit in L2 (see KernelArgs::buffer_bytes).
  Flush flush_l2 = Flush::Auto;
};

struct TimingResult {
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0;
  int repetitions = 0;
  bool l2_flushed = false;
  std::vector<double> samples_ms;  ///< in the order taken
};

/// Times `launch` (which enqueues work on the default stream of `device`);
/// `input_bytes` decides Flush::Auto. RuntimeError on any driver failure.
TimingResult time_launches(const std::function<void()> &launch, size_t input_bytes,
                           const TimingOptions &options = {}, int device = 0);

/// Times `kernel` with the given launch configuration and arguments.
TimingResult time_kernel(const Kernel &kernel, Dim3 grid, Dim3 block, KernelArgs &args,
                         size_t dynamic_smem = 0, const TimingOptions &options = {});

/// Median of a non-empty sample (the mean of the two middle values when even).
double median(std::vector<double> samples);

/// A timing of these samples (non-empty, in the order taken): median, min,
/// max, mean, repetitions; not L2-flushed.
TimingResult summarize_samples(std::vector<double> samples_ms);

}  // namespace tessera::runtime
