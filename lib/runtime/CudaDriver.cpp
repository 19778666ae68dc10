//===- CudaDriver.cpp - The CUDA driver through dlopen ---------------------===//
//
// Loading (once per process, thread-safe through a function-local static):
// dlopen libcuda.so.1, resolve every entry point, cuInit, count devices. Each
// step that fails becomes a DriverStatus with a message; nothing here aborts
// or throws until someone asks for a device.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/CudaDriver.h"

#include <dlfcn.h>

#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>

#include "DriverApi.h"

namespace tessera::runtime {

RuntimeError::RuntimeError(std::string call, std::string error_name, std::string detail)
    : Error(call + ": " + detail), call_(std::move(call)), error_name_(std::move(error_name)) {}

const char *to_string(DriverStatus s) {
  switch (s) {
    case DriverStatus::Ok: return "Ok";
    case DriverStatus::NoLibrary: return "NoLibrary";
    case DriverStatus::MissingSymbol: return "MissingSymbol";
    case DriverStatus::StubLibrary: return "StubLibrary";
    case DriverStatus::NoDevice: return "NoDevice";
    case DriverStatus::InitFailed: return "InitFailed";
  }
  return "?";
}

namespace detail::cu {
namespace {

struct Loaded {
  DriverStatus status = DriverStatus::NoLibrary;
  std::string message;
  int version = 0;
  int devices = 0;
  Api api{};
};

/// Resolves `slot` from the first name that exists; false if none does.
template <typename Fn>
bool resolve(void *lib, Fn &slot, std::initializer_list<const char *> names, std::string &missing) {
  for (const char *n : names)
    if (void *p = dlsym(lib, n)) {
      slot = reinterpret_cast<Fn>(p);
      return true;
    }
  missing = *names.begin();
  return false;
}

std::string name_of(const Api &a, Result r) {
  const char *name = nullptr;
  if (a.cuGetErrorName && a.cuGetErrorName(r, &name) == kSuccess && name) return name;
  // The link stub fails even cuGetErrorName; name the codes load() reports.
  switch (r) {
    case kErrorNotInitialized: return "CUDA_ERROR_NOT_INITIALIZED";
    case kErrorStubLibrary: return "CUDA_ERROR_STUB_LIBRARY";
    case kErrorNoDevice: return "CUDA_ERROR_NO_DEVICE";
    default: return "CUresult " + std::to_string(r);
  }
}

std::string text_of(const Api &a, Result r) {
  std::string out = name_of(a, r);
  const char *text = nullptr;
  if (a.cuGetErrorString && a.cuGetErrorString(r, &text) == kSuccess && text)
    out += std::string(" (") + text + ")";
  return out;
}

// Never calls loaded() (directly or through error_text): it runs inside its
// initialiser, and for probe_driver on a library other than the cached one.
Loaded load(const char *library) {
  Loaded l;
  // Step 1. The library. RTLD_LOCAL: its symbols must not satisfy anyone else's.
  void *lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *why = dlerror();
    l.message = std::string(library) + " not found, no CUDA driver installed (" + (why ? why : "?") + ")";
    return l;
  }
  // The handle is never closed: function pointers and contexts outlive any
  // object that could own it, and the driver does not support unloading.

  // Step 2. Every entry point, by the versioned names cuda.h maps to.
  Api &a = l.api;
  std::string missing;
  bool ok = resolve(lib, a.cuInit, {"cuInit"}, missing) &&
            resolve(lib, a.cuDriverGetVersion, {"cuDriverGetVersion"}, missing) &&
            resolve(lib, a.cuGetErrorName, {"cuGetErrorName"}, missing) &&
            resolve(lib, a.cuGetErrorString, {"cuGetErrorString"}, missing);
  if (!ok) a.cuGetErrorName = nullptr, a.cuGetErrorString = nullptr;
  ok = ok && resolve(lib, a.cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
       resolve(lib, a.cuDeviceGet, {"cuDeviceGet"}, missing) &&
       resolve(lib, a.cuDeviceGetName, {"cuDeviceGetName"}, missing) &&
       resolve(lib, a.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
       resolve(lib, a.cuDeviceTotalMem, {"cuDeviceTotalMem_v2"}, missing) &&
       resolve(lib, a.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
       resolve(lib, a.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2"}, missing) &&
       resolve(lib, a.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
       resolve(lib, a.cuCtxSynchronize, {"cuCtxSynchronize"}, missing) &&
       resolve(lib, a.cuMemGetInfo, {"cuMemGetInfo_v2"}, missing) &&
       resolve(lib, a.cuMemAlloc, {"cuMemAlloc_v2"}, missing) &&
       resolve(lib, a.cuMemFree, {"cuMemFree_v2"}, missing) &&
       resolve(lib, a.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
       resolve(lib, a.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
       resolve(lib, a.cuMemsetD8, {"cuMemsetD8_v2"}, missing) &&
       resolve(lib, a.cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, missing) &&
       resolve(lib, a.cuMemsetD32Async, {"cuMemsetD32Async"}, missing) &&
       resolve(lib, a.cuModuleLoadData, {"cuModuleLoadData"}, missing) &&
       resolve(lib, a.cuModuleUnload, {"cuModuleUnload"}, missing) &&
       resolve(lib, a.cuModuleGetFunction, {"cuModuleGetFunction"}, missing) &&
       resolve(lib, a.cuFuncGetAttribute, {"cuFuncGetAttribute"}, missing) &&
       resolve(lib, a.cuFuncSetAttribute, {"cuFuncSetAttribute"}, missing) &&
       resolve(lib, a.cuLaunchKernel, {"cuLaunchKernel"}, missing) &&
       resolve(lib, a.cuEventCreate, {"cuEventCreate"}, missing) &&
       resolve(lib, a.cuEventDestroy, {"cuEventDestroy_v2"}, missing) &&
       resolve(lib, a.cuEventRecord, {"cuEventRecord"}, missing) &&
       resolve(lib, a.cuEventSynchronize, {"cuEventSynchronize"}, missing) &&
       // _v2 since CUDA 12.8; older drivers only have the original.
       resolve(lib, a.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  if (!ok) {
    l.status = DriverStatus::MissingSymbol;
    l.message = std::string(library) + " lacks " + missing + " (driver too old for tessera?)";
    return l;
  }
  // Optional entry points: a driver without them runs everything else.
  std::string optional_missing;
  resolve(lib, a.cuTensorMapEncodeTiled, {"cuTensorMapEncodeTiled"}, optional_missing);
  a.cuDriverGetVersion(&l.version);

  // Step 3. cuInit: the link stub answers CUDA_ERROR_STUB_LIBRARY; a machine
  // with a driver and no GPU answers CUDA_ERROR_NO_DEVICE.
  Result r = a.cuInit(0);
  std::string version = std::to_string(l.version / 1000) + "." + std::to_string(l.version % 1000 / 10);
  if (r == kErrorStubLibrary) {
    l.status = DriverStatus::StubLibrary;
    l.message = std::string(library) + " is the toolkit's link stub, not a driver (cuInit: " + text_of(a, r) + ")";
    return l;
  }
  if (r == kErrorNoDevice) {
    l.status = DriverStatus::NoDevice;
    l.message = "CUDA driver " + version + " sees no device (cuInit: " + text_of(a, r) + ")";
    return l;
  }
  if (r != kSuccess) {
    l.status = DriverStatus::InitFailed;
    l.message = "CUDA driver " + version + ": cuInit failed: " + text_of(a, r);
    return l;
  }
  // Step 4. Devices.
  if (a.cuDeviceGetCount(&l.devices) != kSuccess || l.devices == 0) {
    l.status = DriverStatus::NoDevice;
    l.devices = 0;
    l.message = "CUDA driver " + version + " sees no device";
    return l;
  }
  l.status = DriverStatus::Ok;
  l.message = "CUDA driver " + version + ", " + std::to_string(l.devices) + " device" +
              (l.devices == 1 ? "" : "s");
  return l;
}

const Loaded &loaded() {
  static const Loaded l = load("libcuda.so.1");
  return l;
}

}  // namespace

const Api &api() { return loaded().api; }

std::string error_name(Result r) { return name_of(api(), r); }
std::string error_text(Result r) { return text_of(api(), r); }

void check(Result r, const char *call, const std::string &detail) {
  if (r == kSuccess) return;
  throw RuntimeError(call, error_name(r), error_text(r) + (detail.empty() ? "" : " " + detail));
}

}  // namespace detail::cu

std::pair<DriverStatus, std::string> probe_driver(const std::string &library) {
  detail::cu::Loaded l = detail::cu::load(library.c_str());
  return {l.status, l.message};
}

using namespace detail;

DriverStatus driver_status() { return cu::loaded().status; }
const std::string &driver_message() { return cu::loaded().message; }
int driver_version() { return cu::loaded().version; }
int device_count() { return cu::loaded().status == DriverStatus::Ok ? cu::loaded().devices : 0; }
bool driver_has_tensor_maps() { return cu::loaded().api.cuTensorMapEncodeTiled != nullptr; }

namespace {

void require_driver(const char *what) {
  if (driver_status() != DriverStatus::Ok)
    throw RuntimeError(what, to_string(driver_status()), "no CUDA device: " + driver_message());
}

}  // namespace

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

std::string DeviceProperties::arch() const {
  return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
}

double DeviceProperties::peak_dram_gbps() const {
  // DDR: two transfers per memory clock.
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_width_bits / 8.0) / 1e9;
}

DeviceProperties query_device(int ordinal) {
  require_driver("query_device");
  if (ordinal < 0 || ordinal >= device_count())
    throw RuntimeError("query_device", "CUDA_ERROR_INVALID_DEVICE",
                       "device " + std::to_string(ordinal) + " does not exist (" +
                           std::to_string(device_count()) + " device(s))");
  const cu::Api &a = cu::api();
  cu::Device dev = 0;
  cu::check(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  DeviceProperties p;
  p.ordinal = ordinal;
  char name[256] = {0};
  cu::check(a.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName");
  p.name = name;
  size_t total = 0;
  cu::check(a.cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem");
  p.total_memory = static_cast<int64_t>(total);
  auto attr = [&](cu::Attr which) {
    int v = 0;
    cu::check(a.cuDeviceGetAttribute(&v, which, dev), "cuDeviceGetAttribute",
              "(attribute " + std::to_string(which) + ")");
    return v;
  };
  p.cc_major = attr(cu::kComputeCapabilityMajor);
  p.cc_minor = attr(cu::kComputeCapabilityMinor);
  p.sm_count = attr(cu::kMultiprocessorCount);
  p.warp_size = attr(cu::kWarpSize);
  p.max_threads_per_block = attr(cu::kMaxThreadsPerBlock);
  p.max_threads_per_sm = attr(cu::kMaxThreadsPerMultiprocessor);
  p.max_blocks_per_sm = attr(cu::kMaxBlocksPerMultiprocessor);
  p.smem_per_block = attr(cu::kMaxSharedMemoryPerBlock);
  p.smem_per_block_optin = attr(cu::kMaxSharedMemoryPerBlockOptin);
  p.smem_per_sm = attr(cu::kMaxSharedMemoryPerMultiprocessor);
  p.regs_per_block = attr(cu::kMaxRegistersPerBlock);
  p.regs_per_sm = attr(cu::kMaxRegistersPerMultiprocessor);
  p.l2_bytes = attr(cu::kL2CacheSize);
  p.clock_khz = attr(cu::kClockRate);
  p.memory_clock_khz = attr(cu::kMemoryClockRate);
  p.memory_bus_width_bits = attr(cu::kGlobalMemoryBusWidth);
  p.max_grid[0] = attr(cu::kMaxGridDimX);
  p.max_grid[1] = attr(cu::kMaxGridDimY);
  p.max_grid[2] = attr(cu::kMaxGridDimZ);
  p.max_block[0] = attr(cu::kMaxBlockDimX);
  p.max_block[1] = attr(cu::kMaxBlockDimY);
  p.max_block[2] = attr(cu::kMaxBlockDimZ);
  return p;
}

Device::Device(int ordinal) : props_(query_device(ordinal)) {
  cu::Device dev = 0;
  cu::check(cu::api().cuDeviceGet(&dev, ordinal), "cuDeviceGet");
  cu::Context ctx = nullptr;
  // The primary context (the one the CUDA runtime and PyTorch use), not a
  // private cuCtxCreate one: kernels and buffers can be shared with them.
  cu::check(cu::api().cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain",
            "on device " + std::to_string(ordinal));
  context_ = ctx;
}

Device &Device::get(int ordinal) {
  require_driver("Device::get");
  static std::mutex mutex;
  // Leaked on purpose: buffers destroyed during static destruction still
  // find their device, and primary contexts live until exit anyway.
  static auto &devices = *new std::vector<std::unique_ptr<Device>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (devices.empty()) devices.resize(device_count());
  if (ordinal < 0 || ordinal >= static_cast<int>(devices.size()))
    throw RuntimeError("Device::get", "CUDA_ERROR_INVALID_DEVICE",
                       "device " + std::to_string(ordinal) + " does not exist (" +
                           std::to_string(devices.size()) + " device(s))");
  if (!devices[ordinal]) devices[ordinal].reset(new Device(ordinal));
  Device &d = *devices[ordinal];
  d.make_current();
  return d;
}

void Device::make_current() const {
  cu::check(cu::api().cuCtxSetCurrent(static_cast<cu::Context>(context_)), "cuCtxSetCurrent");
}

void Device::synchronize() const {
  make_current();
  cu::check(cu::api().cuCtxSynchronize(), "cuCtxSynchronize");
}

std::pair<int64_t, int64_t> Device::memory_info() const {
  make_current();
  size_t free_bytes = 0, total = 0;
  cu::check(cu::api().cuMemGetInfo(&free_bytes, &total), "cuMemGetInfo");
  return {static_cast<int64_t>(free_bytes), static_cast<int64_t>(total)};
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(size_t bytes, int device) : size_(bytes), device_(device) {
  Device::get(device);
  cu::DevicePtr p = 0;
  // cuMemAlloc refuses 0 bytes; an empty buffer is a valid (null) argument.
  if (bytes)
    cu::check(cu::api().cuMemAlloc(&p, bytes), "cuMemAlloc",
              "allocating " + std::to_string(bytes) + " bytes on device " + std::to_string(device));
  ptr_ = p;
}

DeviceBuffer::~DeviceBuffer() {
  // A destructor must not throw; a failing free (the context is being torn
  // down at exit) leaks nothing that outlives the process.
  if (!ptr_ || driver_status() != DriverStatus::Ok) return;
  try {
    Device::get(device_);
    cu::api().cuMemFree(ptr_);
  } catch (const Error &) {
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&o) noexcept
    : ptr_(std::exchange(o.ptr_, 0)), size_(std::exchange(o.size_, 0)), device_(o.device_) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    DeviceBuffer old(std::move(*this));
    ptr_ = std::exchange(o.ptr_, 0);
    size_ = std::exchange(o.size_, 0);
    device_ = o.device_;
  }
  return *this;
}

void DeviceBuffer::copy_from_host(const void *src, size_t bytes) {
  if (bytes > size_)
    throw UserError("copy of " + std::to_string(bytes) + " bytes into a device buffer of " +
                    std::to_string(size_));
  if (!bytes) return;
  Device::get(device_);
  cu::check(cu::api().cuMemcpyHtoD(ptr_, src, bytes), "cuMemcpyHtoD", std::to_string(bytes) + " bytes");
}

void DeviceBuffer::copy_to_host(void *dst, size_t bytes) const {
  if (bytes > size_)
    throw UserError("copy of " + std::to_string(bytes) + " bytes out of a device buffer of " +
                    std::to_string(size_));
  if (!bytes) return;
  Device::get(device_);
  cu::check(cu::api().cuMemcpyDtoH(dst, ptr_, bytes), "cuMemcpyDtoH", std::to_string(bytes) + " bytes");
}

void DeviceBuffer::enqueue_copy_from(const DeviceBuffer &src, size_t bytes) {
  if (bytes > size_ || bytes > src.size_)
    throw UserError("device copy of " + std::to_string(bytes) + " bytes between buffers of " +
                    std::to_string(src.size_) + " and " + std::to_string(size_) + " bytes");
  if (!bytes) return;
  Device::get(device_);
  cu::check(cu::api().cuMemcpyDtoDAsync(ptr_, src.ptr_, bytes, nullptr), "cuMemcpyDtoDAsync",
            std::to_string(bytes) + " bytes");
}

void DeviceBuffer::fill_bytes(uint8_t value) {
  if (!size_) return;
  Device::get(device_);
  cu::check(cu::api().cuMemsetD8(ptr_, value, size_), "cuMemsetD8");
}

//===----------------------------------------------------------------------===//
// Modules, kernels, launches
//===----------------------------------------------------------------------===//

KernelArgs &KernelArgs::buffer(const DeviceBuffer &b) {
  buffer_bytes_ += b.size();
  return pointer(b.ptr());
}

KernelArgs &KernelArgs::pointer(uint64_t device_ptr) {
  cu::DevicePtr p = device_ptr;
  return raw(&p, sizeof p, alignof(cu::DevicePtr));
}

KernelArgs &KernelArgs::raw(const void *bytes, size_t size, size_t align) {
  size_t offset = (storage_.size() + align - 1) / align * align;
  storage_.resize(offset + size);
  std::memcpy(storage_.data() + offset, bytes, size);
  offsets_.push_back(offset);
  return *this;
}

void **KernelArgs::data() {
  // Pointers are rebuilt on demand because storage_ may have moved.
  pointers_.resize(offsets_.size());
  for (size_t i = 0; i < offsets_.size(); ++i) pointers_[i] = storage_.data() + offsets_[i];
  return pointers_.data();
}

std::string Dim3::str() const {
  return "(" + std::to_string(x) + ", " + std::to_string(y) + ", " + std::to_string(z) + ")";
}

Module Module::load(const std::vector<uint8_t> &image, int device) {
  Device::get(device);
  if (image.empty()) throw UserError("cannot load an empty module image");
  Module m;
  m.device_ = device;
  cu::ModuleHandle h = nullptr;
  cu::check(cu::api().cuModuleLoadData(&h, image.data()), "cuModuleLoadData",
            "loading a " + std::to_string(image.size()) + "-byte image on device " + std::to_string(device));
  m.module_ = h;
  return m;
}

Module::~Module() {
  if (!module_ || driver_status() != DriverStatus::Ok) return;
  try {  // as ~DeviceBuffer: never throw from a destructor
    Device::get(device_);
    cu::api().cuModuleUnload(module_);
  } catch (const Error &) {
  }
}

Module::Module(Module &&o) noexcept : module_(std::exchange(o.module_, nullptr)), device_(o.device_) {}

Module &Module::operator=(Module &&o) noexcept {
  if (this != &o) {
    Module old(std::move(*this));
    module_ = std::exchange(o.module_, nullptr);
    device_ = o.device_;
  }
  return *this;
}

Kernel Module::kernel(const std::string &name) const {
  if (!module_) throw UserError("kernel '" + name + "' requested from an empty module");
  Device::get(device_);
  cu::Function fn = nullptr;
  cu::check(cu::api().cuModuleGetFunction(&fn, module_, name.c_str()), "cuModuleGetFunction",
            "kernel '" + name + "'");
  return Kernel(fn, name, device_);
}

KernelAttributes Kernel::attributes() const {
  Device::get(device_);
  auto attr = [&](cu::FuncAttr which) {
    int v = 0;
    cu::check(cu::api().cuFuncGetAttribute(&v, which, fn_), "cuFuncGetAttribute", "kernel '" + name_ + "'");
    return v;
  };
  KernelAttributes k;
  k.registers = attr(cu::kFuncNumRegs);
  k.static_shared_bytes = attr(cu::kFuncSharedSizeBytes);
  k.local_bytes = attr(cu::kFuncLocalSizeBytes);
  k.max_threads_per_block = attr(cu::kFuncMaxThreadsPerBlock);
  return k;
}

void Kernel::set_dynamic_shared_memory(size_t bytes) const {
  const DeviceProperties &p = Device::get(device_).properties();
  std::string where = "kernel '" + name_ + "' asks for " + std::to_string(bytes) + " bytes of dynamic shared memory";
  if (static_cast<int64_t>(bytes) > p.smem_per_block_optin)
    throw RuntimeError("set_dynamic_shared_memory", "CUDA_ERROR_INVALID_VALUE",
                       where + ", the device allows at most " + std::to_string(p.smem_per_block_optin));
  // Up to 48 KB needs no opt-in; above it the attribute must be raised.
  if (static_cast<int64_t>(bytes) > p.smem_per_block)
    cu::check(cu::api().cuFuncSetAttribute(fn_, cu::kFuncMaxDynamicSharedSizeBytes, static_cast<int>(bytes)),
              "cuFuncSetAttribute", "(" + where + ")");
}

void Kernel::launch(Dim3 grid, Dim3 block, KernelArgs &args, size_t dynamic_smem) const {
  Device::get(device_);
  std::string where = "launching kernel '" + name_ + "' grid " + grid.str() + " block " + block.str() +
                      " dynamic smem " + std::to_string(dynamic_smem) + " bytes";
  cu::check(cu::api().cuLaunchKernel(fn_, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                     static_cast<unsigned>(dynamic_smem), nullptr, args.data(), nullptr),
            "cuLaunchKernel", where);
}

void Kernel::launch_raw(Dim3 grid, Dim3 block, void **params, size_t dynamic_smem, void *stream) const {
  Device::get(device_);
  auto r = cu::api().cuLaunchKernel(fn_, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                    static_cast<unsigned>(dynamic_smem), static_cast<cu::Stream>(stream), params,
                                    nullptr);
  if (r != 0)
    cu::check(r, "cuLaunchKernel",
              "launching kernel '" + name_ + "' grid " + grid.str() + " block " + block.str() + " dynamic smem " +
                  std::to_string(dynamic_smem) + " bytes");
}

void Kernel::run(Dim3 grid, Dim3 block, KernelArgs &args, size_t dynamic_smem) const {
  launch(grid, block, args, dynamic_smem);
  cu::check(cu::api().cuCtxSynchronize(), "cuCtxSynchronize",
            "after kernel '" + name_ + "' grid " + grid.str() + " block " + block.str());
}

}  // namespace tessera::runtime
