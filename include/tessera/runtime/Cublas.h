//===- tessera/runtime/Cublas.h - cuBLAS GEMMs, loaded lazily --------------===//
//
// The vendor reference for matrix products: cuBLAS through dlopen, never
// linked, so every binary still starts on a machine without it. The
// benchmarks compare tessera's matmul and gemv kernels with it (time and
// results) on the same device and the same buffers:
//
//   GemmDesc g{.m = 4096, .n = 4096, .k = 4096, .b_transposed = true,      // "nt"
//              .a_dtype = f16, .b_dtype = f16, .c_dtype = f16};
//   Cublas blas = Cublas::load();                 // CublasUnavailable if it cannot
//   DeviceBuffer a = DeviceBuffer::from_host(A), b = ..., c(g.c_bytes());
//   blas.gemm_ex(g, a, b, c);                      // enqueued on the default stream
//   TimingResult t = blas.time(g, a, b, c);        // KernelTimer: warm-up, median, L2 flush
//
// Every GEMM is row-major, as tessera's buffers are:
//   C[p][M, N] = A[p][M, K] x B[p][K, N]          for p < batch
// with A stored [M, K] or (a_transposed) [K, M], B stored [K, N] or
// (b_transposed, "nt": x W^T with W[N, K]) [N, K], C always [M, N], every
// matrix contiguous and the batches one matrix apart (strided batched).
// cuBLAS is column-major, and a row-major X[R, C] read column-major is X^T
// with leading dimension C, so the call computes C^T = B^T x A^T:
//   cublasGemmEx(op_B, op_A, N, M, K, B, ldb, A, lda, C, ldc = N)
// where op_B is N with ldb = N for B[K, N] and T with ldb = K for B[N, K],
// op_A is N with lda = K for A[M, K] and T with lda = M for A[K, M].
// A matrix-vector product y[M] = A[M, K] x[K] is the case N = 1 (gemv()).
//
// Inputs float16, bfloat16 or float32 (A and B alike), output float16,
// bfloat16 or float32, always accumulated in float32 (CUBLAS_COMPUTE_32F; for
// float32 inputs that is true FP32, never TF32, in the default math mode,
// unless the GEMM asks for tf32: CUBLAS_COMPUTE_32F_FAST_TF32);
// alpha = 1, beta = 0.
//
// Errors: CublasUnavailable (a UserError) when no libcublas opens (the
// message lists every name tried), when it lacks an entry point, or when
// there is no usable CUDA device for a handle; UserError for a GemmDesc
// cuBLAS cannot take (dtypes, sizes past int, buffers too small);
// RuntimeError naming the cuBLAS call and status for a failing call.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>

#include "tessera/ir/DataType.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/support/Error.h"

namespace tessera::runtime {

/// cuBLAS cannot be used here; what() says why and what was tried.
class CublasUnavailable : public UserError {
 public:
  using UserError::UserError;
};

/// One (batched) row-major GEMM; see the file comment.
struct GemmDesc {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  bool a_transposed = false;  ///< A stored [K, M] instead of [M, K]
  bool b_transposed = false;  ///< B stored [N, K] instead of [K, N] ("nt")
  ir::DataType a_dtype = ir::DataType::float32();
  ir::DataType b_dtype = ir::DataType::float32();
  ir::DataType c_dtype = ir::DataType::float32();
  /// float32 operands multiplied as tf32 (a program that rounds them with
  /// T.round_to_tf32): CUBLAS_COMPUTE_32F_FAST_TF32.
  bool tf32 = false;

  /// "nn", "nt", "tn" or "tt" (A's letter first).
  std::string layout() const;
  /// "bmm 16x512x1024x1024 nn float16->float16" / "gemm 2048x2048x2048 nt float32->float32".
  std::string str() const;
  /// 2 * batch * M * N * K.
  double flops() const;
  size_t a_bytes() const;
  size_t b_bytes() const;
  size_t c_bytes() const;
};

/// The library that Cublas::load opened.
struct CublasLibrary {
  std::string path;  ///< the name dlopen accepted, "libcublas.so.13"
  int major = 0, minor = 0, patch = 0;
  /// "libcublas.so.13 (cuBLAS 13.0.2)"
  std::string str() const;
};

/// A cuBLAS handle on one device's primary context and its default stream.
/// Move-only; destroyed with the object.
class Cublas {
 public:
  /// Opens libcublas (once per process: libcublas.so.13, .12, libcublas.so,
  /// then the same under the build's CUDA toolkit directory) without any
  /// device. CublasUnavailable listing every name tried and dlopen's reason.
  static const CublasLibrary &library();
  /// library(), then a handle on `device` (its primary context made current,
  /// the default stream). CublasUnavailable with the driver's message when
  /// the driver is not usable; RuntimeError when cublasCreate fails.
  static Cublas load(int device = 0);

  ~Cublas();
  Cublas(Cublas &&o) noexcept;
  Cublas &operator=(Cublas &&o) noexcept;
  Cublas(const Cublas &) = delete;
  Cublas &operator=(const Cublas &) = delete;

  int device() const { return device_; }

  /// Enqueues C = A x B (cublasGemmEx, or cublasGemmStridedBatchedEx when
  /// batch > 1) on the default stream; asynchronous like Kernel::launch.
  void gemm_ex(const GemmDesc &g, const DeviceBuffer &a, const DeviceBuffer &b, DeviceBuffer &c) const;
  /// y[M] = A[M, K] x[K] (A stored [K, M] when a_transposed): gemm_ex with N = 1.
  void gemv(int64_t m, int64_t k, bool a_transposed, ir::DataType in_dtype, ir::DataType out_dtype,
            const DeviceBuffer &a, const DeviceBuffer &x, DeviceBuffer &y) const;
  /// Times gemm_ex as KernelTimer does (warm-up, median, L2 flushed when the
  /// three matrices fit in it).
  TimingResult time(const GemmDesc &g, const DeviceBuffer &a, const DeviceBuffer &b, DeviceBuffer &c,
                    const TimingOptions &options = {}) const;

 private:
  Cublas(void *handle, int device) : handle_(handle), device_(device) {}
  void *handle_ = nullptr;  // cublasHandle_t
  int device_ = 0;
};

}  // namespace tessera::runtime
