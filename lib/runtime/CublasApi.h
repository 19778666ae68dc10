//===- CublasApi.h - The cuBLAS entry points tessera uses (private) --------===//
//
// The cuBLAS ABI declared by hand instead of including cublas_api.h, so the
// runtime builds without the toolkit (as DriverApi.h does for the driver);
// CublasApiCheck.cpp compares every constant with the real headers whenever
// the toolkit is present. Entries are looked up by the names cublas_v2.h's
// macros expand to (cublasCreate -> cublasCreate_v2).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace tessera::runtime::detail::blas {

using Status = int;         // cublasStatus_t
using Handle = void *;      // cublasHandle_t
using Stream = void *;      // cudaStream_t (a CUstream)
using Operation = int;      // cublasOperation_t
using DataType = int;       // cudaDataType
using ComputeType = int;    // cublasComputeType_t
using GemmAlgo = int;       // cublasGemmAlgo_t
using LibraryProperty = int;  // libraryPropertyType

constexpr Status kSuccess = 0;           // CUBLAS_STATUS_SUCCESS
constexpr Operation kOpN = 0;            // CUBLAS_OP_N
constexpr Operation kOpT = 1;            // CUBLAS_OP_T
constexpr DataType kR32F = 0;            // CUDA_R_32F
constexpr DataType kR16F = 2;            // CUDA_R_16F
constexpr DataType kR16BF = 14;          // CUDA_R_16BF
constexpr ComputeType kCompute32F = 68;  // CUBLAS_COMPUTE_32F
constexpr ComputeType kCompute32FFastTf32 = 77;  // CUBLAS_COMPUTE_32F_FAST_TF32
constexpr GemmAlgo kGemmDefault = -1;    // CUBLAS_GEMM_DEFAULT
constexpr LibraryProperty kMajorVersion = 0, kMinorVersion = 1, kPatchLevel = 2;

/// The function table, filled when the library loads.
struct Api {
  Status (*cublasCreate)(Handle *);
  Status (*cublasDestroy)(Handle);
  Status (*cublasSetStream)(Handle, Stream);
  Status (*cublasGetProperty)(LibraryProperty, int *);
  const char *(*cublasGetStatusName)(Status);
  const char *(*cublasGetStatusString)(Status);
  Status (*cublasGemmEx)(Handle, Operation, Operation, int, int, int, const void *alpha, const void *A, DataType,
                         int lda, const void *B, DataType, int ldb, const void *beta, void *C, DataType, int ldc,
                         ComputeType, GemmAlgo);
  Status (*cublasGemmStridedBatchedEx)(Handle, Operation, Operation, int, int, int, const void *alpha,
                                       const void *A, DataType, int lda, long long stride_a, const void *B,
                                       DataType, int ldb, long long stride_b, const void *beta, void *C, DataType,
                                       int ldc, long long stride_c, int batch, ComputeType, GemmAlgo);
};

}  // namespace tessera::runtime::detail::blas
