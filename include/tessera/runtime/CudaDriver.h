//===- tessera/runtime/CudaDriver.h - The CUDA driver, loaded lazily -------===//
//
// The CUDA driver API through dlopen("libcuda.so.1") on first use: tessera
// never links libcuda, so every binary starts and every CPU test runs on a
// machine without a driver. "No device" is a status, never a crash:
//
//   if (driver_status() != DriverStatus::Ok) { puts(driver_message().c_str()); return; }
//   Device &dev = Device::get(0);               // primary context, made current
//   Module mod = Module::load(result.cubin);    // a cubin from compile_cuda
//   Kernel k = mod.kernel("vadd");
//   DeviceBuffer a = DeviceBuffer::from_host(host_a), c(host_c.nbytes());
//   k.launch({blocks}, {256}, KernelArgs().buffer(a).buffer(c).scalar<int>(n));
//   c.copy_to(host_c);                          // synchronous, checked
//
// Every failing driver call throws RuntimeError naming the call, the CUDA
// error and, for launches, the kernel, grid and block. Objects are RAII and
// move-only. All calls make the device's primary context current on the
// calling thread first, so they may come from any thread.
//
// Only lib/runtime queries a device (STYLE.md 3.8 rule 5). Needs no CUDA
// headers: the library builds identically with or without the toolkit.
// This layer (tessera_driver: this header, runtime/TensorMap.h,
// runtime/KernelTimer.h, runtime/DetectArch.h) links nothing of the compiler:
// the dispatch library (dispatch/Dispatcher.h) stands on it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/support/Error.h"

namespace tessera::runtime {

/// A failing CUDA driver call. what() reads like
///   "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE (invalid argument) launching
///    kernel 'vadd' grid (0, 1, 1) block (256, 1, 1) dynamic smem 0 bytes"
class RuntimeError : public Error {
 public:
  RuntimeError(std::string call, std::string error_name, std::string detail);
  const std::string &call() const { return call_; }              ///< "cuLaunchKernel"
  const std::string &error_name() const { return error_name_; }  ///< "CUDA_ERROR_INVALID_VALUE"

 private:
  std::string call_, error_name_;
};

/// What loading the driver found. Only Ok allows device work.
enum class DriverStatus {
  Ok,             ///< driver loaded, cuInit succeeded, at least one device
  NoLibrary,      ///< libcuda.so.1 cannot be opened (no driver installed)
  MissingSymbol,  ///< the library lacks an entry point tessera needs (driver too old)
  StubLibrary,    ///< the toolkit's link stub was found instead of a driver
  NoDevice,       ///< the driver works but sees no device
  InitFailed,     ///< cuInit failed for another reason (message says which)
};
/// "Ok", "NoLibrary", ...
const char *to_string(DriverStatus s);

/// Loads the driver on the first call (thread-safe, never throws).
DriverStatus driver_status();
/// One line describing the status, e.g. "libcuda.so.1 not found (libcuda.so.1:
/// cannot open shared object file: ...)" or "CUDA driver 13.0, 1 device".
const std::string &driver_message();
/// cuDriverGetVersion as 13000 for 13.0; 0 unless the library loaded.
int driver_version();
/// Number of devices; 0 unless the status is Ok.
int device_count();
/// Whether the driver has cuTensorMapEncodeTiled (CUDA 12.0 and later), which
/// kernels with T.tma_load need (runtime/TensorMap.h). Optional: a driver
/// without it still runs every other kernel. False unless the library loaded.
bool driver_has_tensor_maps();
/// Loads `library` afresh (not cached, no effect on driver_status) and reports
/// what it found, e.g. StubLibrary for the toolkit's lib64/stubs/libcuda.so.
/// For diagnostics and tests.
std::pair<DriverStatus, std::string> probe_driver(const std::string &library);

struct DeviceProperties {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t total_memory = 0;              ///< bytes
  int warp_size = 0;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int64_t smem_per_block = 0;            ///< without opt-in (48 KB)
  int64_t smem_per_block_optin = 0;      ///< the most a kernel may opt in to
  int64_t smem_per_sm = 0;
  int regs_per_block = 0;
  int regs_per_sm = 0;
  int64_t l2_bytes = 0;
  int clock_khz = 0;                     ///< SM clock
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  int max_grid[3] = {0, 0, 0};
  int max_block[3] = {0, 0, 0};

  /// "sm_90" (NVRTC's name for this device).
  std::string arch() const;
  /// Theoretical DRAM bandwidth, 2 * memory clock * bus width (GB/s); 0 when unknown.
  double peak_dram_gbps() const;
};

/// Reads every attribute of device `ordinal`. RuntimeError when the driver is
/// not Ok or the ordinal is out of range.
DeviceProperties query_device(int ordinal);

/// One device with its primary context, shared by everything that uses it.
class Device {
 public:
  /// The device, retaining its primary context on first use. RuntimeError
  /// (with the driver message) when the status is not Ok.
  static Device &get(int ordinal = 0);
  const DeviceProperties &properties() const { return props_; }
  int ordinal() const { return props_.ordinal; }
  /// Makes the primary context current on the calling thread.
  void make_current() const;
  /// Waits for all work; an asynchronous kernel fault surfaces here.
  void synchronize() const;
  /// Free and total device memory in bytes.
  std::pair<int64_t, int64_t> memory_info() const;

  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

 private:
  explicit Device(int ordinal);
  DeviceProperties props_;
  void *context_ = nullptr;  // CUcontext
};

/// Device memory, freed when destroyed. Copies are synchronous and checked.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (uninitialised) on `device`.
  explicit DeviceBuffer(size_t bytes, int device = 0);
  /// Allocates a.nbytes() and copies the host array in (anything with
  /// data() and nbytes(): a runtime::NDArray).
  template <typename HostArray>
  static DeviceBuffer from_host(const HostArray &a, int device = 0) {
    DeviceBuffer b(a.nbytes(), device);
    b.copy_from_host(a.data(), a.nbytes());
    return b;
  }
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&o) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  uint64_t ptr() const { return ptr_; }  ///< CUdeviceptr
  size_t size() const { return size_; }
  int device() const { return device_; }

  void copy_from_host(const void *src, size_t bytes);
  void copy_to_host(void *dst, size_t bytes) const;
  /// The host array's bytes must fit in the buffer; UserError otherwise.
  template <typename HostArray>
  void copy_from(const HostArray &a) {
    copy_from_host(a.data(), a.nbytes());
  }
  /// Fills the host array `a` from the start of the buffer; UserError when
  /// `a` is larger.
  template <typename HostArray>
  void copy_to(HostArray &a) const {
    copy_to_host(a.data(), a.nbytes());
  }
  /// Sets every byte to `value`.
  void fill_bytes(uint8_t value);
  /// Enqueues a device-to-device copy of `bytes` from `src` on the default
  /// stream (asynchronous: for timing copy bandwidth). More bytes than either
  /// buffer holds is a UserError.
  void enqueue_copy_from(const DeviceBuffer &src, size_t bytes);

 private:
  uint64_t ptr_ = 0;
  size_t size_ = 0;
  int device_ = 0;
};

/// The argument list of a launch: buffers and scalars, in parameter order.
/// Scalars are copied, so temporaries are fine.
class KernelArgs {
 public:
  KernelArgs &buffer(const DeviceBuffer &b);
  KernelArgs &pointer(uint64_t device_ptr);
  template <typename T>
  KernelArgs &scalar(T v) {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments are copied bytewise");
    return raw(&v, sizeof(T), alignof(T));
  }
  KernelArgs &raw(const void *bytes, size_t size, size_t align);
  /// The void** that cuLaunchKernel expects (valid until the next change).
  void **data();
  size_t count() const { return offsets_.size(); }
  /// Total bytes of the buffers passed (used to decide L2 flushing).
  size_t buffer_bytes() const { return buffer_bytes_; }

 private:
  std::vector<unsigned char> storage_;
  std::vector<size_t> offsets_;
  std::vector<void *> pointers_;
  size_t buffer_bytes_ = 0;
};

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  Dim3() = default;
  Dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  /// "(x, y, z)"
  std::string str() const;
};

/// Attributes the driver reports for a loaded kernel.
struct KernelAttributes {
  int registers = 0;
  int64_t static_shared_bytes = 0;
  int64_t local_bytes = 0;
  int max_threads_per_block = 0;
};

/// A kernel of a loaded module. Cheap to copy; valid while its Module lives.
class Kernel {
 public:
  const std::string &name() const { return name_; }
  int device() const { return device_; }
  /// The CUfunction, for callers that launch through the driver themselves.
  void *handle() const { return fn_; }
  KernelAttributes attributes() const;
  /// Allows `bytes` of dynamic shared memory per block. Above 48 KB this sets
  /// the opt-in attribute; more than the device's opt-in maximum is a RuntimeError.
  void set_dynamic_shared_memory(size_t bytes) const;
  /// Enqueues the kernel on the default stream. A launch the driver refuses
  /// (bad grid, too many threads, too much shared memory) throws RuntimeError
  /// naming the kernel, grid and block; faults during execution surface at the
  /// next synchronising call, or use run().
  void launch(Dim3 grid, Dim3 block, KernelArgs &args, size_t dynamic_smem = 0) const;
  /// launch() then wait; an execution fault also names the kernel.
  void run(Dim3 grid, Dim3 block, KernelArgs &args, size_t dynamic_smem = 0) const;
  /// launch() with the caller's own argument block (cuLaunchKernel's
  /// `void **`) on `stream` (a CUstream; null: the default): nothing is
  /// allocated unless the driver refuses, when the message is built.
  void launch_raw(Dim3 grid, Dim3 block, void **params, size_t dynamic_smem = 0, void *stream = nullptr) const;

 private:
  friend class Module;
  Kernel(void *fn, std::string name, int device) : fn_(fn), name_(std::move(name)), device_(device) {}
  void *fn_ = nullptr;  // CUfunction
  std::string name_;
  int device_ = 0;
};

/// A loaded cubin (or PTX), unloaded when destroyed.
class Module {
 public:
  Module() = default;
  /// Loads an image (cubin bytes from compile_cuda) on `device`.
  static Module load(const std::vector<uint8_t> &image, int device = 0);
  ~Module();
  Module(Module &&o) noexcept;
  Module &operator=(Module &&o) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;
  /// The entry named `name` (as in the cubin: extern "C" names are plain).
  /// RuntimeError naming it when absent.
  Kernel kernel(const std::string &name) const;

 private:
  void *module_ = nullptr;  // CUmodule
  int device_ = 0;
};

}  // namespace tessera::runtime
