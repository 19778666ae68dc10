//===- CublasGpuTest.cpp - cuBLAS GEMMs against a CPU reference (gpu) ------===//
//
// Label `gpu` (every test skips itself without a device): the row-major
// mapping of Cublas::gemm_ex for every layout (nn, nt, tn, tt), float32 and
// float16 inputs with float16 or float32 outputs, strided batches and gemv,
// on shapes that are multiples of nothing, against a double-precision CPU
// product of the same inputs; bad descriptors are UserErrors before any
// launch.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tessera/runtime/Cublas.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/runtime/Verify.h"

namespace tessera::runtime {
namespace {

#define TESSERA_REQUIRE_GPU()                                          \
  do {                                                                 \
    if (driver_status() != DriverStatus::Ok)                           \
      GTEST_SKIP() << "no CUDA device: " << driver_message();          \
  } while (0)

std::vector<int64_t> stored(const GemmDesc &g, int64_t rows, int64_t cols) {
  return g.batch == 1 ? std::vector<int64_t>{rows, cols} : std::vector<int64_t>{g.batch, rows, cols};
}

/// C = A x B in double from the arrays as stored (see Cublas.h for the
/// layouts), with the variance of the rounding error of a float32
/// accumulation, as runtime/Verify.h models it.
struct CpuGemm {
  NDArray value, variance;
};
CpuGemm cpu_gemm(const GemmDesc &g, const NDArray &a, const NDArray &b) {
  CpuGemm c{NDArray(ir::DataType::float64(), stored(g, g.m, g.n)), NDArray(ir::DataType::float64(), stored(g, g.m, g.n))};
  const double u = std::ldexp(1.0, -24);
  for (int64_t p = 0; p < g.batch; ++p)
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0, var = 0;
        for (int64_t r = 0; r < g.k; ++r) {
          int64_t ia = p * g.m * g.k + (g.a_transposed ? r * g.m + i : i * g.k + r);
          int64_t ib = p * g.k * g.n + (g.b_transposed ? j * g.k + r : r * g.n + j);
          double term = a.get(ia) * b.get(ib);
          sum += term;
          var += (u * term) * (u * term) + (u * sum) * (u * sum);
        }
        c.value.set(p * g.m * g.n + i * g.n + j, sum);
        c.variance.set(p * g.m * g.n + i * g.n + j, var);
      }
  return c;
}

void expect_matches_cpu(const GemmDesc &g) {
  SCOPED_TRACE(g.str());
  std::mt19937_64 rng(3);
  NDArray a(g.a_dtype, g.a_transposed ? stored(g, g.k, g.m) : stored(g, g.m, g.k));
  NDArray b(g.b_dtype, g.b_transposed ? stored(g, g.n, g.k) : stored(g, g.k, g.n));
  a.fill_random(rng);
  b.fill_random(rng);
  Cublas blas = Cublas::load();
  DeviceBuffer da = DeviceBuffer::from_host(a), db = DeviceBuffer::from_host(b), dc(g.c_bytes());
  blas.gemm_ex(g, da, db, dc);
  NDArray c(g.c_dtype, stored(g, g.m, g.n));
  dc.copy_to(c);
  CpuGemm want = cpu_gemm(g, a, b);
  OutputCheck check = check_output("C", c, want.value, want.variance);
  EXPECT_TRUE(check.ok) << check.str();
}

const ir::DataType f16 = ir::DataType::float16(), f32 = ir::DataType::float32();

TEST(CublasGpu, Float32EveryLayout) {
  TESSERA_REQUIRE_GPU();
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      expect_matches_cpu({.m = 67, .n = 45, .k = 33, .a_transposed = ta, .b_transposed = tb});
}

TEST(CublasGpu, Float16InputsFloat16AndFloat32Outputs) {
  TESSERA_REQUIRE_GPU();
  for (ir::DataType out : {f16, f32}) {
    expect_matches_cpu({.m = 130, .n = 72, .k = 257, .a_dtype = f16, .b_dtype = f16, .c_dtype = out});
    expect_matches_cpu(
        {.m = 130, .n = 72, .k = 257, .b_transposed = true, .a_dtype = f16, .b_dtype = f16, .c_dtype = out});
  }
}

TEST(CublasGpu, StridedBatches) {
  TESSERA_REQUIRE_GPU();
  expect_matches_cpu({.batch = 3, .m = 33, .n = 17, .k = 40});
  expect_matches_cpu({.batch = 4, .m = 20, .n = 24, .k = 31, .b_transposed = true, .a_dtype = f16, .b_dtype = f16,
                      .c_dtype = f16});
}

TEST(CublasGpu, GemvIsGemmWithOneColumn) {
  TESSERA_REQUIRE_GPU();
  expect_matches_cpu({.m = 300, .n = 1, .k = 129, .a_dtype = f16, .b_dtype = f16, .c_dtype = f16});
  // gemv() on the same data as the CPU: y = W x with W[m, k].
  std::mt19937_64 rng(5);
  NDArray w(f32, {100, 37}), x(f32, {37}), y(f32, {100});
  w.fill_random(rng);
  x.fill_random(rng);
  Cublas blas = Cublas::load();
  DeviceBuffer dw = DeviceBuffer::from_host(w), dx = DeviceBuffer::from_host(x), dy(y.nbytes());
  blas.gemv(100, 37, /*a_transposed=*/false, f32, f32, dw, dx, dy);
  dy.copy_to(y);
  // The same as a 100 x 1 x 37 GEMM whose C is y's 100 elements.
  CpuGemm c = cpu_gemm(GemmDesc{.m = 100, .n = 1, .k = 37}, w, x);
  NDArray value(ir::DataType::float64(), {100}), variance(ir::DataType::float64(), {100});
  for (int64_t i = 0; i < 100; ++i) {
    value.set(i, c.value.get(i));
    variance.set(i, c.variance.get(i));
  }
  OutputCheck check = check_output("y", y, value, variance);
  EXPECT_TRUE(check.ok) << check.str();
}

TEST(CublasGpu, BadDescriptorsAreUserErrors) {
  TESSERA_REQUIRE_GPU();
  Cublas blas = Cublas::load();
  DeviceBuffer small(64), big(1 << 20);
  GemmDesc ok{.m = 16, .n = 16, .k = 16};
  EXPECT_THROW(blas.gemm_ex(ok, small, big, big), UserError) << "A does not fit";
  GemmDesc mixed = ok;
  mixed.a_dtype = f16;
  EXPECT_THROW(blas.gemm_ex(mixed, big, big, big), UserError) << "A and B dtypes differ";
  GemmDesc ints = ok;
  ints.a_dtype = ints.b_dtype = ir::DataType::int32();
  EXPECT_THROW(blas.gemm_ex(ints, big, big, big), UserError);
  GemmDesc empty = ok;
  empty.k = 0;
  EXPECT_THROW(blas.gemm_ex(empty, big, big, big), UserError);
}

TEST(CublasGpu, TimingGivesAPositiveMedian) {
  TESSERA_REQUIRE_GPU();
  Cublas blas = Cublas::load();
  GemmDesc g{.m = 512, .n = 512, .k = 512, .a_dtype = f16, .b_dtype = f16, .c_dtype = f16};
  DeviceBuffer a(g.a_bytes()), b(g.b_bytes()), c(g.c_bytes());
  a.fill_bytes(0x3c);  // float16 1.0 repeated: 0x3c3c
  b.fill_bytes(0x3c);
  TimingResult t = blas.time(g, a, b, c, {.warmup_ms = 1, .measure_ms = 5});
  EXPECT_GT(t.median_ms, 0);
  EXPECT_GE(t.repetitions, 10);
}

}  // namespace
}  // namespace tessera::runtime
