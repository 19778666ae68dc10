//===- tessera/runtime/CudaFunction.h - A PrimFunc as a runnable GPU kernel -===//
//
// The whole path from a scheduled PrimFunc to a result on the GPU, in one
// object: lower (tessera::lower), print CUDA C (tessera::codegen), compile with
// NVRTC for one `sm_XX`; then, on a device, bind host arrays to the kernel's
// parameters, evaluate the launch configuration, run and time it.
//
// Most functions are one kernel. A function whose top-level loop nests need
// different grids or keep intermediates in global memory runs as a sequence
// of kernels (lower::split_kernels) with workspace buffers the runtime
// allocates per call; run and time then cover the whole sequence.
//
//   auto fn = CudaFunction::build(f, {.arch = "sm_90"});  // no device needed
//   fn.compiled().kernels[0].registers;                    // ptxas -v
//   auto args = make_random_args(f, {{"n", 1000}}, 0);
//   fn.run(args);              // copies in, launches, copies the outputs back
//   TimingResult t = fn.time(args);
//
// The arguments are exactly the interpreter's (Interpreter::run): one NDArray
// per parameter, buffers with their dtype and shape, scalar parameters as
// one-element arrays. Symbolic shape variables are bound from the first
// dimension they appear as, and every dimension is checked, so the same
// arrays run through both and their outputs can be compared
// (runtime::close_to_reference).
//
// Errors: LowerError/CodegenError/CompileError from build (the program has no
// kernel form, or NVRTC rejected it); UserError for arguments that do not fit
// the function and for a cubin that cannot run on the device (compiled for
// another architecture); RuntimeError for driver failures (launch errors name
// the kernel, grid and block). Building needs NVRTC but no driver; running and
// timing need DriverStatus::Ok.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/ir/Func.h"
#include "tessera/lower/Lower.h"
#include "tessera/lower/TensorMaps.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/runtime/NVRTC.h"

namespace tessera::runtime {

struct CudaBuildOptions {
  /// "sm_80", "sm_90", ...; empty: the architecture of device 0 when the
  /// driver is usable, else "sm_90".
  std::string arch;
  /// Extra NVRTC options (e.g. "-lineinfo").
  std::vector<std::string> extra_options;
  /// Compiled cubins kept on disk (runtime/KernelCache.h); may be null.
  KernelCache *cache = nullptr;
};

/// The launch of one call: grid and block with the symbolic extents evaluated.
struct LaunchDims {
  Dim3 grid, block;
  size_t dynamic_shared_bytes = 0;
  /// False when some grid or block extent is zero or negative for these
  /// arguments (nothing to do: the kernel is not launched).
  bool has_work = true;
};

/// One kernel of a CudaFunction.
struct CompiledKernel {
  lower::LoweredFunc lowered;
  /// The entry name in the cubin ("main_kernel").
  std::string name;
  /// The generated CUDA C.
  std::string source;
  /// The NVRTC result: cubin, log, compile time, ptxas resource usage.
  CompileResult compiled;
  /// The tensor maps the kernel takes after its parameters
  /// (lower::tensor_map_params), encoded at each launch.
  std::vector<lower::TensorMapParam> tensor_maps;
};

/// A PrimFunc lowered, printed and compiled for one architecture. Cheap to
/// copy (shared, immutable state); the modules are loaded on the first run
/// and kept. Thread-safe.
class CudaFunction {
 public:
  /// Lowers, generates and compiles `f`. See the file comment for errors.
  static CudaFunction build(const ir::PrimFunc &f, const CudaBuildOptions &options = {});
  /// One CudaFunction per architecture, compiled in parallel (compile_many).
  /// The first failure is thrown after all compiles finished.
  static std::vector<CudaFunction> build_for_archs(const ir::PrimFunc &f, const std::vector<std::string> &archs,
                                                   const CudaBuildOptions &options = {});

  const ir::PrimFunc &func() const;
  /// The kernels, in launch order (one for most functions).
  const std::vector<CompiledKernel> &kernels() const;
  /// The intermediate buffers allocated on the device for each call.
  const std::vector<ir::Buffer> &workspace() const;
  /// The first kernel's lowered form, CUDA C, NVRTC result and entry name
  /// (the only kernel's, for most functions).
  const lower::LoweredFunc &lowered() const;
  const std::string &source() const;
  const CompileResult &compiled() const;
  const std::string &kernel_name() const;
  /// The architecture it was compiled for ("sm_90").
  const std::string &arch() const;

  /// The launch of each kernel for these arguments; UserError when they do
  /// not fit `func()`.
  std::vector<LaunchDims> launch_dims(const std::vector<NDArray> &args) const;
  /// Copies every buffer argument to device `device`, runs the kernels in
  /// order, waits, and copies every buffer the function writes back into `args`.
  void run(std::vector<NDArray> &args, int device = 0) const;
  /// Times the kernels on these arguments (copied to the device once; outputs
  /// are not copied back) as KernelTimer does: warm-up, median of many runs,
  /// L2 flushed when the buffers fit in it. One repetition launches every kernel.
  TimingResult time(const std::vector<NDArray> &args, const TimingOptions &options = {}, int device = 0) const;
  /// The attributes the driver reports for the first loaded kernel (registers, ...).
  KernelAttributes attributes(int device = 0) const;

  /// The shared state (implementation detail of CudaFunction.cpp).
  struct State;

 private:
  explicit CudaFunction(std::shared_ptr<State> s) : s_(std::move(s)) {}
  std::shared_ptr<State> s_;
};

}  // namespace tessera::runtime
