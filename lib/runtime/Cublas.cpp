//===- Cublas.cpp - cuBLAS through dlopen ----------------------------------===//
//
// Loading (once per process, thread-safe through a function-local static):
// dlopen the first libcublas that opens, resolve every entry point, read the
// version. Nothing here aborts: a library that cannot be used is a
// CublasUnavailable thrown to whoever asks for it.
//
//===----------------------------------------------------------------------===//
#include "tessera/runtime/Cublas.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "CublasApi.h"

namespace tessera::runtime {

namespace detail::blas {
namespace {

struct Loaded {
  bool ok = false;
  std::string error;  ///< why not, when !ok
  CublasLibrary info;
  Api api{};
};

/// The names tried, in order: the sonames a driver-matched installation
/// registers with the loader (or that LD_LIBRARY_PATH reaches), then the same
/// files in $CUDA_HOME/lib64, in the toolkit tessera was built with and in
/// /usr/local/cuda/lib64 (a relocated binary runs where the toolkit may sit
/// elsewhere than where it was built).
std::vector<std::string> candidate_names() {
  const std::vector<std::string> sonames = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  std::vector<std::string> dirs;
  if (const char *home = std::getenv("CUDA_HOME"); home && *home) dirs.push_back(std::string(home) + "/lib64");
#ifdef TESSERA_CUDA_LIBRARY_DIR
  dirs.push_back(TESSERA_CUDA_LIBRARY_DIR);
#endif
  dirs.push_back("/usr/local/cuda/lib64");
  std::vector<std::string> out = sonames;
  for (const std::string &d : dirs)
    for (const std::string &s : sonames) out.push_back(d + "/" + s);
  return out;
}

template <typename Fn>
bool resolve(void *lib, Fn &slot, const char *name, std::string &missing) {
  void *p = dlsym(lib, name);
  if (!p) {
    missing = name;
    return false;
  }
  slot = reinterpret_cast<Fn>(p);
  return true;
}

Loaded load() {
  Loaded l;
  void *lib = nullptr;
  std::string tried;
  for (const std::string &name : candidate_names()) {
    // RTLD_LOCAL: its symbols (and its static CUDA runtime's) must not
    // satisfy anyone else's. The handle is never closed, like the driver's.
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      l.info.path = name;
      break;
    }
    const char *why = dlerror();
    tried += (tried.empty() ? "" : "; ") + name + ": " + (why ? why : "?");
  }
  if (!lib) {
    l.error = "cuBLAS not available: no libcublas could be opened (tried " + tried + ")";
    return l;
  }
  Api &a = l.api;
  std::string missing;
  bool ok = resolve(lib, a.cublasCreate, "cublasCreate_v2", missing) &&
            resolve(lib, a.cublasDestroy, "cublasDestroy_v2", missing) &&
            resolve(lib, a.cublasSetStream, "cublasSetStream_v2", missing) &&
            resolve(lib, a.cublasGetProperty, "cublasGetProperty", missing) &&
            resolve(lib, a.cublasGetStatusName, "cublasGetStatusName", missing) &&
            resolve(lib, a.cublasGetStatusString, "cublasGetStatusString", missing) &&
            resolve(lib, a.cublasGemmEx, "cublasGemmEx", missing) &&
            resolve(lib, a.cublasGemmStridedBatchedEx, "cublasGemmStridedBatchedEx", missing);
  if (!ok) {
    l.error = "cuBLAS not available: " + l.info.path + " lacks " + missing + " (cuBLAS older than 11?)";
    return l;
  }
  a.cublasGetProperty(kMajorVersion, &l.info.major);
  a.cublasGetProperty(kMinorVersion, &l.info.minor);
  a.cublasGetProperty(kPatchLevel, &l.info.patch);
  l.ok = true;
  return l;
}

const Loaded &loaded() {
  static const Loaded l = load();
  return l;
}

const Api &api() {
  const Loaded &l = loaded();
  if (!l.ok) throw CublasUnavailable(l.error);
  return l.api;
}

/// Throws RuntimeError("<call>: CUBLAS_STATUS_... (text) <detail>") unless s is success.
void check(Status s, const char *call, const std::string &detail) {
  if (s == kSuccess) return;
  const Api &a = api();
  std::string name = a.cublasGetStatusName(s), text = a.cublasGetStatusString(s);
  throw RuntimeError(call, name, name + " (" + text + ")" + (detail.empty() ? "" : " " + detail));
}

DataType cuda_type(ir::DataType t, const char *operand) {
  if (t == ir::DataType::float32()) return kR32F;
  if (t == ir::DataType::float16()) return kR16F;
  if (t == ir::DataType::bfloat16()) return kR16BF;
  throw UserError(std::string("cuBLAS GEMM: ") + operand + " has dtype " + t.str() +
                  "; only float16, bfloat16 and float32 are supported");
}

int as_int(int64_t v, const char *what) {
  if (v <= 0 || v > INT_MAX) throw UserError("cuBLAS GEMM: " + std::string(what) + " = " + std::to_string(v) +
                                             " is outside [1, " + std::to_string(INT_MAX) + "]");
  return static_cast<int>(v);
}

void require_size(const DeviceBuffer &b, size_t bytes, const char *operand, const GemmDesc &g) {
  if (b.size() < bytes)
    throw UserError("cuBLAS GEMM " + g.str() + ": buffer " + operand + " holds " + std::to_string(b.size()) +
                    " bytes, needs " + std::to_string(bytes));
}

}  // namespace
}  // namespace detail::blas

using namespace detail;

std::string GemmDesc::layout() const {
  return std::string(a_transposed ? "t" : "n") + (b_transposed ? "t" : "n");
}

std::string GemmDesc::str() const {
  std::string shape = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  if (batch != 1) shape = std::to_string(batch) + "x" + shape;
  std::string in = a_dtype == b_dtype ? a_dtype.str() : a_dtype.str() + "*" + b_dtype.str();
  if (tf32) in += "(tf32)";
  return std::string(batch != 1 ? "bmm " : "gemm ") + shape + " " + layout() + " " + in + "->" + c_dtype.str();
}

double GemmDesc::flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
size_t GemmDesc::a_bytes() const { return size_t(batch * m * k) * a_dtype.bytes(); }
size_t GemmDesc::b_bytes() const { return size_t(batch * k * n) * b_dtype.bytes(); }
size_t GemmDesc::c_bytes() const { return size_t(batch * m * n) * c_dtype.bytes(); }

std::string CublasLibrary::str() const {
  return path + " (cuBLAS " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch) + ")";
}

const CublasLibrary &Cublas::library() {
  blas::api();  // throws CublasUnavailable when it did not load
  return blas::loaded().info;
}

Cublas Cublas::load(int device) {
  const blas::Api &a = blas::api();
  if (driver_status() != DriverStatus::Ok)
    throw CublasUnavailable("cuBLAS needs a CUDA device: " + driver_message());
  Device::get(device);  // retains the primary context and makes it current
  blas::Handle h = nullptr;
  blas::check(a.cublasCreate(&h), "cublasCreate", "on device " + std::to_string(device));
  Cublas out(h, device);
  // The legacy default stream: the one Kernel::launch and KernelTimer use.
  blas::check(a.cublasSetStream(h, nullptr), "cublasSetStream", "");
  return out;
}

Cublas::~Cublas() {
  if (!handle_) return;
  Device::get(device_).make_current();
  blas::api().cublasDestroy(handle_);  // nothing to do about a failure here
}

Cublas::Cublas(Cublas &&o) noexcept : handle_(o.handle_), device_(o.device_) { o.handle_ = nullptr; }

Cublas &Cublas::operator=(Cublas &&o) noexcept {
  if (this != &o) {
    std::swap(handle_, o.handle_);
    std::swap(device_, o.device_);
  }
  return *this;
}

void Cublas::gemm_ex(const GemmDesc &g, const DeviceBuffer &a, const DeviceBuffer &b, DeviceBuffer &c) const {
  // Validate everything before touching the device.
  if (g.a_dtype != g.b_dtype)
    throw UserError("cuBLAS GEMM " + g.str() + ": A and B must have the same dtype");
  blas::DataType ta = blas::cuda_type(g.a_dtype, "A"), tc = blas::cuda_type(g.c_dtype, "C");
  if (g.c_dtype != g.a_dtype && g.c_dtype != ir::DataType::float32())
    throw UserError("cuBLAS GEMM " + g.str() + ": the output must be float32 or the inputs' dtype");
  int m = blas::as_int(g.m, "M"), n = blas::as_int(g.n, "N"), k = blas::as_int(g.k, "K");
  int batch = blas::as_int(g.batch, "batch");
  blas::require_size(a, g.a_bytes(), "A", g);
  blas::require_size(b, g.b_bytes(), "B", g);
  blas::require_size(c, g.c_bytes(), "C", g);

  // Row-major C = A x B is column-major C^T = B^T x A^T (see the header).
  blas::Operation op_b = g.b_transposed ? blas::kOpT : blas::kOpN;
  blas::Operation op_a = g.a_transposed ? blas::kOpT : blas::kOpN;
  int ldb = g.b_transposed ? k : n, lda = g.a_transposed ? m : k, ldc = n;
  const float alpha = 1.0f, beta = 0.0f;
  const void *pa = reinterpret_cast<const void *>(a.ptr()), *pb = reinterpret_cast<const void *>(b.ptr());
  void *pc = reinterpret_cast<void *>(c.ptr());

  Device::get(device_).make_current();
  const blas::Api &api = blas::api();
  const blas::ComputeType compute = g.tf32 ? blas::kCompute32FFastTf32 : blas::kCompute32F;
  if (batch == 1) {
    blas::check(api.cublasGemmEx(handle_, op_b, op_a, n, m, k, &alpha, pb, ta, ldb, pa, ta, lda, &beta, pc, tc,
                                 ldc, compute, blas::kGemmDefault),
                "cublasGemmEx", g.str());
  } else {
    long long stride_a = (long long)m * k, stride_b = (long long)k * n, stride_c = (long long)m * n;
    blas::check(api.cublasGemmStridedBatchedEx(handle_, op_b, op_a, n, m, k, &alpha, pb, ta, ldb, stride_b, pa, ta,
                                               lda, stride_a, &beta, pc, tc, ldc, stride_c, batch,
                                               compute, blas::kGemmDefault),
                "cublasGemmStridedBatchedEx", g.str());
  }
}

void Cublas::gemv(int64_t m, int64_t k, bool a_transposed, ir::DataType in_dtype, ir::DataType out_dtype,
                  const DeviceBuffer &a, const DeviceBuffer &x, DeviceBuffer &y) const {
  GemmDesc g{.m = m, .n = 1, .k = k, .a_transposed = a_transposed, .a_dtype = in_dtype, .b_dtype = in_dtype,
             .c_dtype = out_dtype};
  gemm_ex(g, a, x, y);
}

TimingResult Cublas::time(const GemmDesc &g, const DeviceBuffer &a, const DeviceBuffer &b, DeviceBuffer &c,
                          const TimingOptions &options) const {
  return time_launches([&] { gemm_ex(g, a, b, c); }, g.a_bytes() + g.b_bytes() + g.c_bytes(), options, device_);
}

}  // namespace tessera::runtime
