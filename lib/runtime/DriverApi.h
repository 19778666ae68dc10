//===- DriverApi.h - The driver entry points tessera uses (private) --------===//
//
// The CUDA driver ABI declared here by hand instead of including cuda.h, so
// the runtime builds without the toolkit. DriverApiCheck.cpp compares every
// constant with cuda.h whenever the toolkit is present. Each entry is looked
// up by its versioned name (what cuda.h's macros expand to), falling back to
// older names where a recent driver renamed one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tessera::runtime::detail::cu {

using Result = int;  // CUresult
using Device = int;  // CUdevice
using DevicePtr = unsigned long long;  // CUdeviceptr
using Context = void *;
using ModuleHandle = void *;
using Function = void *;
using Stream = void *;
using Event = void *;

constexpr Result kSuccess = 0;
constexpr Result kErrorNotInitialized = 3;
constexpr Result kErrorStubLibrary = 34;
constexpr Result kErrorNoDevice = 100;

// CUdevice_attribute
enum Attr : int {
  kMaxThreadsPerBlock = 1,
  kMaxBlockDimX = 2,
  kMaxBlockDimY = 3,
  kMaxBlockDimZ = 4,
  kMaxGridDimX = 5,
  kMaxGridDimY = 6,
  kMaxGridDimZ = 7,
  kMaxSharedMemoryPerBlock = 8,
  kWarpSize = 10,
  kMaxRegistersPerBlock = 12,
  kClockRate = 13,
  kMultiprocessorCount = 16,
  kMemoryClockRate = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kMaxThreadsPerMultiprocessor = 39,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerMultiprocessor = 81,
  kMaxRegistersPerMultiprocessor = 82,
  kMaxSharedMemoryPerBlockOptin = 97,
  kMaxBlocksPerMultiprocessor = 106,
};

// CUfunction_attribute
enum FuncAttr : int {
  kFuncMaxThreadsPerBlock = 0,
  kFuncSharedSizeBytes = 1,
  kFuncLocalSizeBytes = 3,
  kFuncNumRegs = 4,
  kFuncMaxDynamicSharedSizeBytes = 8,
};

/// The function table, filled by load_driver(). Pointers are null until then.
struct Api {
  Result (*cuInit)(unsigned);
  Result (*cuDriverGetVersion)(int *);
  Result (*cuGetErrorName)(Result, const char **);
  Result (*cuGetErrorString)(Result, const char **);
  Result (*cuDeviceGetCount)(int *);
  Result (*cuDeviceGet)(Device *, int);
  Result (*cuDeviceGetName)(char *, int, Device);
  Result (*cuDeviceGetAttribute)(int *, int, Device);
  Result (*cuDeviceTotalMem)(size_t *, Device);
  Result (*cuDevicePrimaryCtxRetain)(Context *, Device);
  Result (*cuDevicePrimaryCtxRelease)(Device);
  Result (*cuCtxSetCurrent)(Context);
  Result (*cuCtxSynchronize)();
  Result (*cuMemGetInfo)(size_t *, size_t *);
  Result (*cuMemAlloc)(DevicePtr *, size_t);
  Result (*cuMemFree)(DevicePtr);
  Result (*cuMemcpyHtoD)(DevicePtr, const void *, size_t);
  Result (*cuMemcpyDtoH)(void *, DevicePtr, size_t);
  Result (*cuMemsetD8)(DevicePtr, unsigned char, size_t);
  Result (*cuMemcpyDtoDAsync)(DevicePtr, DevicePtr, size_t, Stream);
  Result (*cuMemsetD32Async)(DevicePtr, unsigned, size_t, Stream);
  Result (*cuModuleLoadData)(ModuleHandle *, const void *);
  Result (*cuModuleUnload)(ModuleHandle);
  Result (*cuModuleGetFunction)(Function *, ModuleHandle, const char *);
  Result (*cuFuncGetAttribute)(int *, int, Function);
  Result (*cuFuncSetAttribute)(Function, int, int);
  Result (*cuLaunchKernel)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, Stream, void **, void **);
  Result (*cuEventCreate)(Event *, unsigned);
  Result (*cuEventDestroy)(Event);
  Result (*cuEventRecord)(Event, Stream);
  Result (*cuEventSynchronize)(Event);
  Result (*cuEventElapsedTime)(float *, Event, Event);
  /// Optional (CUDA 12.0+, for T.tma_load kernels): null when the driver lacks
  /// it, and everything else still works. The enums are cuda.h's, passed as
  /// int (runtime/TensorMap.h); `tensor_map` is 128 bytes, 64-byte aligned.
  Result (*cuTensorMapEncodeTiled)(void *tensor_map, int data_type, uint32_t rank, void *global_address,
                                   const uint64_t *global_dim, const uint64_t *global_strides,
                                   const uint32_t *box_dim, const uint32_t *element_strides, int interleave,
                                   int swizzle, int l2_promotion, int oob_fill);
};

/// The loaded table; only valid when driver_status() is Ok (or, for the
/// version and error-name entries, when the library loaded at all).
const Api &api();

/// "CUDA_ERROR_INVALID_VALUE (invalid argument)" for a result code.
std::string error_text(Result r);
/// The bare name, "CUDA_ERROR_INVALID_VALUE" (or "CUresult 999").
std::string error_name(Result r);

/// Throws RuntimeError("<call>: <error> <detail>") unless r is success.
void check(Result r, const char *call, const std::string &detail = "");

}  // namespace tessera::runtime::detail::cu
