//===- CublasApiCheck.cpp - CublasApi.h against the real cublas_api.h ------===//
//
// Built only when the CUDA toolkit is present: a hand-written constant or
// entry point type that drifted from the headers fails the build here
// instead of misbehaving on a GPU.
//
//===----------------------------------------------------------------------===//
#include <cublas_v2.h>

#include <type_traits>

#include "CublasApi.h"

namespace tessera::runtime::detail::blas {

static_assert(sizeof(cublasStatus_t) == sizeof(Status) && sizeof(cublasHandle_t) == sizeof(Handle));
static_assert(sizeof(cudaDataType) == sizeof(DataType) && sizeof(cublasComputeType_t) == sizeof(ComputeType));
static_assert(sizeof(cublasOperation_t) == sizeof(Operation) && sizeof(cublasGemmAlgo_t) == sizeof(GemmAlgo));
static_assert(sizeof(libraryPropertyType) == sizeof(LibraryProperty) && sizeof(cudaStream_t) == sizeof(Stream));

#define TESSERA_SAME(ours, theirs) static_assert(static_cast<int>(ours) == static_cast<int>(theirs), #ours)
TESSERA_SAME(kSuccess, CUBLAS_STATUS_SUCCESS);
TESSERA_SAME(kOpN, CUBLAS_OP_N);
TESSERA_SAME(kOpT, CUBLAS_OP_T);
TESSERA_SAME(kR32F, CUDA_R_32F);
TESSERA_SAME(kR16F, CUDA_R_16F);
TESSERA_SAME(kR16BF, CUDA_R_16BF);
TESSERA_SAME(kCompute32F, CUBLAS_COMPUTE_32F);
TESSERA_SAME(kCompute32FFastTf32, CUBLAS_COMPUTE_32F_FAST_TF32);
TESSERA_SAME(kGemmDefault, CUBLAS_GEMM_DEFAULT);
TESSERA_SAME(kMajorVersion, MAJOR_VERSION);
TESSERA_SAME(kMinorVersion, MINOR_VERSION);
TESSERA_SAME(kPatchLevel, PATCH_LEVEL);
#undef TESSERA_SAME

// The entry points: same parameter count and sizes, position by position
// (the header's enums are int-sized, checked above). cublasGemmEx is
// overloaded in C++ (a wrapper taking a cudaDataType compute type): the cast
// picks the C entry, and fails to compile if its signature changed.
using GemmExC = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                   const void *, const void *, cudaDataType, int, const void *, cudaDataType, int,
                                   const void *, void *, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExC = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                                 int, const void *, const void *, cudaDataType, int, long long int,
                                                 const void *, cudaDataType, int, long long int, const void *, void *,
                                                 cudaDataType, int, long long int, int, cublasComputeType_t,
                                                 cublasGemmAlgo_t);
[[maybe_unused]] constexpr GemmExC kGemmEx = &::cublasGemmEx;
[[maybe_unused]] constexpr GemmStridedBatchedExC kGemmStridedBatchedEx = &::cublasGemmStridedBatchedEx;
static_assert(std::is_same_v<decltype(&::cublasCreate_v2), cublasStatus_t (*)(cublasHandle_t *)>);
static_assert(std::is_same_v<decltype(&::cublasDestroy_v2), cublasStatus_t (*)(cublasHandle_t)>);
static_assert(std::is_same_v<decltype(&::cublasSetStream_v2), cublasStatus_t (*)(cublasHandle_t, cudaStream_t)>);
static_assert(std::is_same_v<decltype(&::cublasGetProperty), cublasStatus_t (*)(libraryPropertyType, int *)>);
static_assert(std::is_same_v<decltype(&::cublasGetStatusName), const char *(*)(cublasStatus_t)>);

}  // namespace tessera::runtime::detail::blas
