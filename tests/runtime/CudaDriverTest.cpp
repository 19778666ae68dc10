//===- CudaDriverTest.cpp - Device query, memory, launch, timing (gpu) -----===//
//
// Every test skips itself unless the driver status is Ok, so this binary is
// green (all skipped) on machines without a GPU.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <random>

#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/KernelTimer.h"
#include "tessera/runtime/NDArray.h"
#include "tessera/runtime/NVRTC.h"

namespace tessera::runtime {
namespace {

#define TESSERA_REQUIRE_GPU()                                                            \
  do {                                                                                   \
    if (driver_status() != DriverStatus::Ok) GTEST_SKIP() << "no CUDA device: " << driver_message(); \
  } while (0)

const char *kVadd = R"(
extern "C" __global__ void vadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void big_smem(float *x) {
  extern __shared__ float dyn[];
  dyn[threadIdx.x] = x[threadIdx.x];
  __syncthreads();
  x[threadIdx.x] = dyn[blockDim.x - 1 - threadIdx.x];
}
)";

/// Compiles kVadd for the device's own arch and loads it.
Module load_vadd() {
  CompileResult r = compile_cuda(kVadd, {.arch = Device::get().properties().arch(), .name = "vadd"});
  return Module::load(r.cubin);
}

TEST(CudaDriver, DeviceQueryIsSane) {
  TESSERA_REQUIRE_GPU();
  const DeviceProperties &p = Device::get(0).properties();
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.cc_major, 7);
  EXPECT_GT(p.sm_count, 0);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_GE(p.max_threads_per_block, 1024);
  EXPECT_GE(p.max_threads_per_sm, p.max_threads_per_block);
  EXPECT_EQ(p.smem_per_block, 48 * 1024);
  EXPECT_GE(p.smem_per_block_optin, p.smem_per_block);
  EXPECT_GE(p.smem_per_sm, p.smem_per_block_optin);
  EXPECT_GT(p.regs_per_block, 0);
  EXPECT_GT(p.regs_per_sm, 0);
  EXPECT_GT(p.l2_bytes, 1 << 20);
  EXPECT_GT(p.clock_khz, 0);
  EXPECT_GT(p.memory_bus_width_bits, 0);
  EXPECT_GT(p.total_memory, int64_t(1) << 30);
  auto [free_bytes, total] = Device::get(0).memory_info();
  EXPECT_GT(free_bytes, 0);
  EXPECT_LE(free_bytes, total);
  EXPECT_EQ(p.arch(), "sm_" + std::to_string(p.cc_major) + std::to_string(p.cc_minor));
  EXPECT_THROW(Device::get(device_count()), RuntimeError);
}

TEST(CudaDriver, VaddMatchesHost) {
  TESSERA_REQUIRE_GPU();
  const int n = 100003;  // not a multiple of the block
  std::mt19937_64 rng(7);
  NDArray a(ir::DataType::float32(), {n}), b(ir::DataType::float32(), {n}), c(ir::DataType::float32(), {n});
  a.fill_random(rng);
  b.fill_random(rng);
  DeviceBuffer da = DeviceBuffer::from_host(a), db = DeviceBuffer::from_host(b), dc(c.nbytes());
  dc.fill_bytes(0xff);  // NaN everywhere: a missed element cannot pass
  Module m = load_vadd();
  Kernel k = m.kernel("vadd");
  EXPECT_GT(k.attributes().registers, 0);
  KernelArgs args;
  args.buffer(da).buffer(db).buffer(dc).scalar<int>(n);
  k.run(Dim3((n + 255) / 256), Dim3(256), args);
  dc.copy_to(c);
  for (int i = 0; i < n; ++i) ASSERT_EQ(c.get(i), static_cast<float>(a.get(i) + b.get(i))) << i;
}

TEST(CudaDriver, LaunchErrorNamesKernelGridAndBlock) {
  TESSERA_REQUIRE_GPU();
  Module m = load_vadd();
  Kernel k = m.kernel("vadd");
  DeviceBuffer buf(1024);
  KernelArgs args;
  args.buffer(buf).buffer(buf).buffer(buf).scalar<int>(0);
  try {
    k.launch(Dim3(0), Dim3(4096), args);  // empty grid, block over the limit
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError &e) {
    std::string what = e.what();
    EXPECT_EQ(e.call(), "cuLaunchKernel");
    EXPECT_NE(what.find("'vadd'"), std::string::npos) << what;
    EXPECT_NE(what.find("grid (0, 1, 1)"), std::string::npos) << what;
    EXPECT_NE(what.find("block (4096, 1, 1)"), std::string::npos) << what;
    EXPECT_NE(e.error_name().find("CUDA_ERROR"), std::string::npos) << e.error_name();
  }
  EXPECT_THROW(m.kernel("no_such_kernel"), RuntimeError);
}

TEST(CudaDriver, DynamicSharedMemoryOptIn) {
  TESSERA_REQUIRE_GPU();
  const DeviceProperties &p = Device::get().properties();
  if (p.smem_per_block_optin <= 48 * 1024) GTEST_SKIP() << "device has no opt-in shared memory";
  Module m = load_vadd();
  Kernel k = m.kernel("big_smem");
  NDArray x(ir::DataType::float32(), {256});
  std::mt19937_64 rng(3);
  x.fill_random(rng);
  DeviceBuffer dx = DeviceBuffer::from_host(x);
  KernelArgs args;
  args.buffer(dx);
  size_t bytes = 64 * 1024;
  EXPECT_THROW(k.run(Dim3(1), Dim3(256), args, bytes), RuntimeError) << "above 48 KB needs the opt-in";
  k.set_dynamic_shared_memory(bytes);
  k.run(Dim3(1), Dim3(256), args, bytes);
  NDArray y(ir::DataType::float32(), {256});
  dx.copy_to(y);
  for (int i = 0; i < 256; ++i) ASSERT_EQ(y.get(i), x.get(255 - i));
  EXPECT_THROW(k.set_dynamic_shared_memory(p.smem_per_block_optin + 1), RuntimeError);
}

TEST(CudaDriver, TimingMedianBetweenMinAndMax) {
  TESSERA_REQUIRE_GPU();
  const int n = 1 << 20;
  std::mt19937_64 rng(11);
  NDArray a(ir::DataType::float32(), {n});
  a.fill_random(rng);
  DeviceBuffer da = DeviceBuffer::from_host(a), db = DeviceBuffer::from_host(a), dc(a.nbytes());
  Module m = load_vadd();
  KernelArgs args;
  args.buffer(da).buffer(db).buffer(dc).scalar<int>(n);
  TimingOptions opts;
  opts.measure_ms = 20;
  TimingResult t = time_kernel(m.kernel("vadd"), Dim3(n / 256), Dim3(256), args, 0, opts);
  EXPECT_GT(t.median_ms, 0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_LE(t.median_ms, t.max_ms);
  EXPECT_GE(t.repetitions, opts.min_reps);
  EXPECT_EQ(static_cast<int>(t.samples_ms.size()), t.repetitions);
  // 12 MB of buffers: flushed exactly when they fit in L2.
  EXPECT_EQ(t.l2_flushed, static_cast<int64_t>(args.buffer_bytes()) <= Device::get().properties().l2_bytes);
}

}  // namespace
}  // namespace tessera::runtime
