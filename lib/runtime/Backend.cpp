//===- lib/runtime/Backend.cpp - The interpreter, LLVM and CUDA backends ----===//
#include "tessera/runtime/Backend.h"

#include <chrono>
#include <functional>

#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/CudaFunction.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/support/Error.h"

namespace tessera::runtime {

TimingResult time_on_cpu(const std::function<void()> &run, const TimingOptions &options) {
  using Clock = std::chrono::steady_clock;
  run();
  std::vector<double> samples;
  const auto start = Clock::now();
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  while (int(samples.size()) < options.max_reps &&
         (int(samples.size()) < options.min_reps || ms_since(start) < options.measure_ms)) {
    const auto t = Clock::now();
    run();
    samples.push_back(ms_since(t));
  }
  return summarize_samples(std::move(samples));
}

namespace {

/// A CPU executor (Interpreter or LlvmJit) as an Executable.
template <typename Executor>
class CpuExecutable : public Executable {
 public:
  template <typename... Options>
  CpuExecutable(std::string name, const ir::PrimFunc &f, const Options &...options)
      : name_(std::move(name)), exec_(f, options...) {}
  std::string backend() const override { return name_; }
  void run(std::vector<NDArray> &args) const override { exec_.run(pointers_to(args)); }
  TimingResult time(std::vector<NDArray> &args, const TimingOptions &options) const override {
    std::vector<NDArray *> p = pointers_to(args);
    return time_on_cpu([&] { exec_.run(p); }, options);
  }

 private:
  std::string name_;
  Executor exec_;
};

class InterpreterBackend : public Backend {
 public:
  std::string name() const override { return "interpreter"; }
  std::string unavailable() const override { return ""; }
  std::unique_ptr<Executable> build(const ir::PrimFunc &f) const override {
    return std::make_unique<CpuExecutable<Interpreter>>(name(), f);
  }
};

class LlvmBackend : public Backend {
 public:
  explicit LlvmBackend(BackendOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "llvm"; }
  std::string unavailable() const override {
    return llvm_jit_available() ? "" : "tessera was built without LLVM (TESSERA_ENABLE_LLVM)";
  }
  std::unique_ptr<Executable> build(const ir::PrimFunc &f) const override {
    // Compiled for the sizes of the arrays it runs on (constants: the index
    // arithmetic proven, its checks gone), once per set of sizes.
    return std::make_unique<CpuExecutable<LlvmJit>>(
        name(), f, LlvmJitOptions{.specialize_shapes = true, .fuse_multiply_add = options_.fuse_multiply_add});
  }

 private:
  BackendOptions options_;
};

class CudaExecutable : public Executable {
 public:
  CudaExecutable(CudaFunction fn, int device) : fn_(std::move(fn)), device_(device) {}
  std::string backend() const override { return "cuda"; }
  void run(std::vector<NDArray> &args) const override { fn_.run(args, device_); }
  TimingResult time(std::vector<NDArray> &args, const TimingOptions &options) const override {
    return fn_.time(args, options, device_);
  }
  KernelAttributes attributes() const override { return fn_.attributes(device_); }

 private:
  CudaFunction fn_;
  int device_;
};

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(BackendOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "cuda"; }
  std::string unavailable() const override {
    if (driver_status() != DriverStatus::Ok) return "no CUDA device (" + driver_message() + ")";
    if (options_.device < 0 || options_.device >= device_count())
      return "no CUDA device " + std::to_string(options_.device) + " (" + std::to_string(device_count()) +
             " here)";
    return "";
  }
  std::unique_ptr<Executable> build(const ir::PrimFunc &f) const override {
    if (std::string why = unavailable(); !why.empty()) throw UserError("the cuda backend cannot run here: " + why);
    return std::make_unique<CudaExecutable>(CudaFunction::build(f, {.arch = options_.arch}), options_.device);
  }

 private:
  BackendOptions options_;
};

}  // namespace

const std::vector<std::string> &backend_names() {
  static const std::vector<std::string> names{"interpreter", "llvm", "cuda"};
  return names;
}

std::unique_ptr<Executable> cuda_executable(CudaFunction fn, int device) {
  return std::make_unique<CudaExecutable>(std::move(fn), device);
}

std::unique_ptr<Backend> make_backend(const std::string &name, const BackendOptions &options) {
  if (name == "interpreter" || name == "cpu") return std::make_unique<InterpreterBackend>();
  if (name == "llvm") return std::make_unique<LlvmBackend>(options);
  if (name == "cuda") return std::make_unique<CudaBackend>(options);
  std::string choices;
  for (const std::string &n : backend_names()) choices += (choices.empty() ? "" : ", ") + n;
  throw UserError("unknown backend '" + name + "' (backends: " + choices + ")");
}

}  // namespace tessera::runtime
