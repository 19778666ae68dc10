//===- KernelTimer.cpp - Warm-up, repetitions, events, L2 flush ------------===//
#include "tessera/runtime/KernelTimer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "DriverApi.h"

namespace tessera::runtime {

using namespace detail;

double median(std::vector<double> s) {
  TESSERA_ICHECK(!s.empty()) << "median of an empty sample";
  size_t mid = s.size() / 2;
  std::nth_element(s.begin(), s.begin() + mid, s.end());
  if (s.size() % 2) return s[mid];
  double upper = s[mid];
  return (upper + *std::max_element(s.begin(), s.begin() + mid)) / 2;
}

namespace {

/// CUDA events, destroyed with the object.
class Events {
 public:
  explicit Events(size_t n) : events_(n, nullptr) {
    for (cu::Event &e : events_) cu::check(cu::api().cuEventCreate(&e, 0), "cuEventCreate");
  }
  ~Events() {
    for (cu::Event e : events_)
      if (e) cu::api().cuEventDestroy(e);
  }
  Events(const Events &) = delete;
  Events &operator=(const Events &) = delete;
  cu::Event operator[](size_t i) const { return events_[i]; }

 private:
  std::vector<cu::Event> events_;
};

/// Runs `reps` repetitions, each [flush] start-event launch stop-event, and
/// returns the per-repetition times in ms.
std::vector<double> timed_reps(int reps, const std::function<void()> &launch,
                               const std::function<void()> &flush) {
  const cu::Api &a = cu::api();
  Events ev(2 * static_cast<size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    flush();  // outside the events: its cost is not the kernel's
    cu::check(a.cuEventRecord(ev[2 * i], nullptr), "cuEventRecord");
    launch();
    cu::check(a.cuEventRecord(ev[2 * i + 1], nullptr), "cuEventRecord");
  }
  cu::check(a.cuEventSynchronize(ev[2 * reps - 1]), "cuEventSynchronize", "(waiting for timed kernels)");
  std::vector<double> out(reps);
  for (int i = 0; i < reps; ++i) {
    float ms = 0;
    cu::check(a.cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]), "cuEventElapsedTime");
    out[i] = ms;
  }
  return out;
}

int budget_reps(double budget_ms, double per_call_ms, int lo, int hi) {
  double n = per_call_ms > 0 ? std::ceil(budget_ms / per_call_ms) : hi;
  return static_cast<int>(std::clamp<double>(n, lo, hi));
}

}  // namespace

TimingResult time_launches(const std::function<void()> &launch, size_t input_bytes,
                           const TimingOptions &options, int device) {
  Device &dev = Device::get(device);
  const cu::Api &a = cu::api();
  TESSERA_ICHECK(options.min_reps >= 1 && options.max_reps >= options.min_reps)
      << "bad repetition bounds " << options.min_reps << ".." << options.max_reps;

  // Step 1. Discard the first call (module load, lazy init, clock ramp-up).
  launch();
  dev.synchronize();

  // Step 2. The L2 flush: write twice the L2 size (NVIDIA tilus) when the
  // inputs would otherwise stay resident between repetitions.
  int64_t l2 = dev.properties().l2_bytes;
  bool flush = l2 > 0 && (options.flush_l2 == TimingOptions::Flush::Always ||
                          (options.flush_l2 == TimingOptions::Flush::Auto &&
                           static_cast<int64_t>(input_bytes) <= l2));
  DeviceBuffer scratch(flush ? static_cast<size_t>(2 * l2) : 0, device);
  unsigned stamp = 0;
  auto do_flush = [&] {
    if (!flush) return;
    cu::check(a.cuMemsetD32Async(scratch.ptr(), ++stamp, scratch.size() / 4, nullptr), "cuMemsetD32Async",
              "(L2 flush)");
  };

  // Step 3. Estimate the per-call time, then warm up for the warm-up budget.
  std::vector<double> probe = timed_reps(5, launch, do_flush);
  double estimate = median(probe);
  int warm = budget_reps(options.warmup_ms, estimate, 1, options.max_reps);
  for (int i = 0; i < warm; ++i) {
    do_flush();
    launch();
  }
  dev.synchronize();

  // Step 4. The timed repetitions.
  int reps = budget_reps(options.measure_ms, estimate, options.min_reps, options.max_reps);
  TimingResult r = summarize_samples(timed_reps(reps, launch, do_flush));
  dev.synchronize();
  r.l2_flushed = flush;
  return r;
}

TimingResult summarize_samples(std::vector<double> samples_ms) {
  TESSERA_ICHECK(!samples_ms.empty()) << "a timing without samples";
  TimingResult r;
  r.samples_ms = std::move(samples_ms);
  r.repetitions = int(r.samples_ms.size());
  r.median_ms = median(r.samples_ms);
  auto [lo, hi] = std::minmax_element(r.samples_ms.begin(), r.samples_ms.end());
  r.min_ms = *lo;
  r.max_ms = *hi;
  r.mean_ms = std::accumulate(r.samples_ms.begin(), r.samples_ms.end(), 0.0) / r.repetitions;
  return r;
}

TimingResult time_kernel(const Kernel &kernel, Dim3 grid, Dim3 block, KernelArgs &args,
                         size_t dynamic_smem, const TimingOptions &options) {
  // One checked, synchronised run first: a bad configuration or a faulting
  // kernel is reported with its name before any timing starts.
  kernel.run(grid, block, args, dynamic_smem);
  // The timed launches call the driver directly (the context is current, the
  // argument array is fixed), so no host work sits between the events.
  void **argv = args.data();
  cu::Function fn = kernel.handle();
  auto launch = [&] {
    cu::check(cu::api().cuLaunchKernel(fn, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                       static_cast<unsigned>(dynamic_smem), nullptr, argv, nullptr),
              "cuLaunchKernel", "timing kernel '" + kernel.name() + "' grid " + grid.str() + " block " + block.str());
  };
  return time_launches(launch, args.buffer_bytes(), options, kernel.device());
}

}  // namespace tessera::runtime
