//===- tessera/runtime/Backend.h - Build a function, run it, time it --------===//
//
// One interface over the three ways tessera runs a (scheduled) PrimFunc:
//
//   interpreter  runtime::Interpreter: always there, the semantics every
//                other backend is checked against, about 10^6 iterations/s
//   llvm         runtime::LlvmJit: the function compiled for this CPU, the
//                interpreter's semantics (bit for bit), independent outermost
//                loops on every core (runtime::llvm_jit_threads())
//   cuda         runtime::CudaFunction: NVRTC for the device's architecture
//                (or `arch`), the arrays copied to the device and back
//
//   const Backend &b = runtime::backend("llvm");
//   if (std::string why = b.unavailable(); !why.empty()) ...;
//   std::unique_ptr<Executable> e = b.build(f);
//   e->run(args);                          // in place, like Interpreter::run
//   TimingResult t = e->time(args);        // medians: wall time on the CPU,
//                                          // device time of the kernels on a GPU
//
// Building is where a backend refuses what it cannot run (JitUnsupportedError
// from the JIT, CompileError from NVRTC, UserError
// without a device); running raises the executor's own errors (an
// out-of-bounds access is an InterpretError in both CPU backends).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/runtime/NDArray.h"

namespace tessera::runtime {

/// A function built by a backend.
class Executable {
 public:
  virtual ~Executable() = default;
  /// The backend's name ("interpreter", "llvm", "cuda").
  virtual std::string backend() const = 0;
  /// One run on `args` (one array per parameter, as make_random_args makes
  /// them), outputs written in place.
  virtual void run(std::vector<NDArray> &args) const = 0;
  /// Repeated runs on `args` (their contents change when the function
  /// updates in place): on the CPU the wall time of run() (after one
  /// untimed run); on a GPU the device time of the launches, without the
  /// copies (runtime::time_launches).
  virtual TimingResult time(std::vector<NDArray> &args, const TimingOptions &options = {}) const = 0;
  /// What the driver reports for its first kernel once loaded (registers,
  /// static shared bytes): a GPU backend's word on the machine code; zeros
  /// on the CPU.
  virtual KernelAttributes attributes() const { return {}; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// Empty when it can build and run here; else why not (no LLVM in this
  /// build, no CUDA device).
  virtual std::string unavailable() const = 0;
  /// `f` built to run; the backend's error when it cannot be.
  virtual std::unique_ptr<Executable> build(const ir::PrimFunc &f) const = 0;
};

struct BackendOptions {
  /// cuda: the architecture to compile for (empty: the device's).
  std::string arch;
  /// cuda: the device.
  int device = 0;
  /// llvm: fuse float32/float64 multiply-adds (LlvmJitOptions::
  /// fuse_multiply_add): the CPU target's timed code, not a reference.
  bool fuse_multiply_add = false;
};

/// Wall-clock samples of `run` on this CPU (one untimed run first), within
/// the options' budget and repetition bounds (what the CPU backends' time()
/// does; warmup_ms is not used).
TimingResult time_on_cpu(const std::function<void()> &run, const TimingOptions &options);

/// The backend named `name` ("interpreter", "llvm", "cuda"; "cpu" is the
/// interpreter, as `tessera run --device cpu` has always meant). UserError
/// naming the choices for another name.
std::unique_ptr<Backend> make_backend(const std::string &name, const BackendOptions &options = {});
/// The names make_backend takes, in order.
const std::vector<std::string> &backend_names();

class CudaFunction;
/// A function the CUDA path already built (fast_tune compiles its candidates
/// in parallel, before a device is touched) as the cuda backend's Executable
/// on `device`.
std::unique_ptr<Executable> cuda_executable(CudaFunction fn, int device = 0);

}  // namespace tessera::runtime
