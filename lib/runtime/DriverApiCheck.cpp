//===- DriverApiCheck.cpp - DriverApi.h against the real cuda.h ------------===//
//
// Built only when the CUDA toolkit is present: a hand-written constant that
// drifted from cuda.h fails the build here instead of misbehaving on a GPU.
//
//===----------------------------------------------------------------------===//
#include <cuda.h>

#include "DriverApi.h"
#include "tessera/runtime/TensorMap.h"

namespace tessera::runtime::detail::cu {

static_assert(sizeof(CUresult) == sizeof(Result) && sizeof(CUdevice) == sizeof(Device));
static_assert(sizeof(CUdeviceptr) == sizeof(DevicePtr));
static_assert(CUDA_SUCCESS == kSuccess && CUDA_ERROR_NOT_INITIALIZED == kErrorNotInitialized);
static_assert(CUDA_ERROR_STUB_LIBRARY == kErrorStubLibrary && CUDA_ERROR_NO_DEVICE == kErrorNoDevice);

#define TESSERA_SAME(ours, theirs) static_assert(static_cast<int>(ours) == static_cast<int>(theirs), #ours)
TESSERA_SAME(kMaxThreadsPerBlock, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
TESSERA_SAME(kMaxBlockDimX, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
TESSERA_SAME(kMaxBlockDimY, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
TESSERA_SAME(kMaxBlockDimZ, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
TESSERA_SAME(kMaxGridDimX, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
TESSERA_SAME(kMaxGridDimY, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
TESSERA_SAME(kMaxGridDimZ, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
TESSERA_SAME(kMaxSharedMemoryPerBlock, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
TESSERA_SAME(kWarpSize, CU_DEVICE_ATTRIBUTE_WARP_SIZE);
TESSERA_SAME(kMaxRegistersPerBlock, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
TESSERA_SAME(kClockRate, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
TESSERA_SAME(kMultiprocessorCount, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
TESSERA_SAME(kMemoryClockRate, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
TESSERA_SAME(kGlobalMemoryBusWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
TESSERA_SAME(kL2CacheSize, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
TESSERA_SAME(kMaxThreadsPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
TESSERA_SAME(kComputeCapabilityMajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
TESSERA_SAME(kComputeCapabilityMinor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
TESSERA_SAME(kMaxSharedMemoryPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
TESSERA_SAME(kMaxRegistersPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
TESSERA_SAME(kMaxSharedMemoryPerBlockOptin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
TESSERA_SAME(kMaxBlocksPerMultiprocessor, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
TESSERA_SAME(kFuncMaxThreadsPerBlock, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
TESSERA_SAME(kFuncSharedSizeBytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
TESSERA_SAME(kFuncLocalSizeBytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
TESSERA_SAME(kFuncNumRegs, CU_FUNC_ATTRIBUTE_NUM_REGS);
TESSERA_SAME(kFuncMaxDynamicSharedSizeBytes, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
// runtime/TensorMap.h: the enums cuTensorMapEncodeTiled takes (as int).
// cuda.h aligns CUtensorMap to 128 bytes (TensorMap.cpp encodes into such a
// buffer); the driver documents 64, which the kernel parameter has.
static_assert(sizeof(CUtensorMap) == kTensorMapBytes && alignof(CUtensorMap) <= 128 &&
              alignof(CUtensorMap) % kTensorMapAlignment == 0);
static_assert(sizeof(CUtensorMapDataType) == sizeof(int) && sizeof(CUtensorMapSwizzle) == sizeof(int));
static_assert(sizeof(cuuint64_t) == sizeof(uint64_t) && sizeof(cuuint32_t) == sizeof(uint32_t));
TESSERA_SAME(TensorMapDataType::UInt8, CU_TENSOR_MAP_DATA_TYPE_UINT8);
TESSERA_SAME(TensorMapDataType::UInt16, CU_TENSOR_MAP_DATA_TYPE_UINT16);
TESSERA_SAME(TensorMapDataType::UInt32, CU_TENSOR_MAP_DATA_TYPE_UINT32);
TESSERA_SAME(TensorMapDataType::Int32, CU_TENSOR_MAP_DATA_TYPE_INT32);
TESSERA_SAME(TensorMapDataType::UInt64, CU_TENSOR_MAP_DATA_TYPE_UINT64);
TESSERA_SAME(TensorMapDataType::Int64, CU_TENSOR_MAP_DATA_TYPE_INT64);
TESSERA_SAME(TensorMapDataType::Float16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
TESSERA_SAME(TensorMapDataType::Float32, CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
TESSERA_SAME(TensorMapDataType::Float64, CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
TESSERA_SAME(TensorMapDataType::BFloat16, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
TESSERA_SAME(TensorMapInterleave::None, CU_TENSOR_MAP_INTERLEAVE_NONE);
TESSERA_SAME(TensorMapInterleave::Bytes16, CU_TENSOR_MAP_INTERLEAVE_16B);
TESSERA_SAME(TensorMapInterleave::Bytes32, CU_TENSOR_MAP_INTERLEAVE_32B);
TESSERA_SAME(TensorMapSwizzle::None, CU_TENSOR_MAP_SWIZZLE_NONE);
TESSERA_SAME(TensorMapSwizzle::Bytes32, CU_TENSOR_MAP_SWIZZLE_32B);
TESSERA_SAME(TensorMapSwizzle::Bytes64, CU_TENSOR_MAP_SWIZZLE_64B);
TESSERA_SAME(TensorMapSwizzle::Bytes128, CU_TENSOR_MAP_SWIZZLE_128B);
TESSERA_SAME(TensorMapL2Promotion::None, CU_TENSOR_MAP_L2_PROMOTION_NONE);
TESSERA_SAME(TensorMapL2Promotion::Bytes64, CU_TENSOR_MAP_L2_PROMOTION_L2_64B);
TESSERA_SAME(TensorMapL2Promotion::Bytes128, CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
TESSERA_SAME(TensorMapL2Promotion::Bytes256, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
TESSERA_SAME(TensorMapOobFill::None, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
TESSERA_SAME(TensorMapOobFill::NanRequestZeroFma, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA);
#undef TESSERA_SAME

}  // namespace tessera::runtime::detail::cu
