//===- examples/consumer/consumer.cpp - tessera as a library ---------------===//
//
// Tunes a row softmax for this CPU through the facade, runs it on arrays,
// checks every element against a float64 softmax within the rounding bound
// of its sums, saves the kernel, loads it back and checks that the loaded
// kernel gives the same bits. Exit status 0 when every check passes.
//
//   tessera_consumer [ROWS]
//
//===----------------------------------------------------------------------===//
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.h>

namespace {

const char *kSoftmax = R"(
@T.prim_func
def softmax(var_A: T.handle, var_B: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int64()
    A = T.match_buffer(var_A, (rows, T.int64(256)), "float32")
    B = T.match_buffer(var_B, (rows, T.int64(256)), "float32")
    A_max = T.alloc_buffer((rows,), "float32")
    A_exp = T.alloc_buffer((rows, T.int64(256)), "float32")
    A_sum = T.alloc_buffer((rows,), "float32")
    for i, k in T.grid(rows, T.int64(256)):
        with T.block("max"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                A_max[v_i] = T.min_value("float32")
            A_max[v_i] = T.max(A_max[v_i], A[v_i, v_k])
    for i, j in T.grid(rows, T.int64(256)):
        with T.block("exp"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            A_exp[v_i, v_j] = T.exp(A[v_i, v_j] - A_max[v_i])
    for i, k in T.grid(rows, T.int64(256)):
        with T.block("sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                A_sum[v_i] = T.float32(0)
            A_sum[v_i] = A_sum[v_i] + A_exp[v_i, v_k]
    for i, j in T.grid(rows, T.int64(256)):
        with T.block("normalize"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = A_exp[v_i, v_j] / A_sum[v_i]
)";

constexpr int64_t kCols = 256;

/// The largest |got - exact| / bound over the outputs, the bound being what
/// float32 rounding of a 256-term sum, an exp and a division can explain:
/// (cols + 4) ulps of float32 relative to the exact value (the sum's terms are
/// positive, so the sum of absolute values is the sum itself).
double worst_error_ratio(const std::vector<float> &a, const std::vector<float> &b, int64_t rows) {
  const double eps = std::ldexp(1.0, -24);
  double worst = 0;
  for (int64_t i = 0; i < rows; ++i) {
    double max = -INFINITY, sum = 0;
    for (int64_t k = 0; k < kCols; ++k) max = std::max(max, double(a[i * kCols + k]));
    for (int64_t k = 0; k < kCols; ++k) sum += std::exp(double(a[i * kCols + k]) - max);
    for (int64_t k = 0; k < kCols; ++k) {
      const double exact = std::exp(double(a[i * kCols + k]) - max) / sum;
      const double bound = (kCols + 4) * eps * exact + 1e-30;
      worst = std::max(worst, std::abs(double(b[i * kCols + k]) - exact) / bound);
    }
  }
  return worst;
}

/// A DLPack tensor over a host vector.
DLTensor host_tensor(std::vector<float> &data, int64_t *shape) {
  DLTensor t{};
  t.data = data.data();
  t.device = {kDLCPU, 0};
  t.ndim = 2;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = shape;
  return t;
}

}  // namespace

int main(int argc, char **argv) {
  const int64_t rows = argc > 1 ? std::stoll(argv[1]) : 300;
  try {
    tessera::Target cpu = tessera::Target::cpu();
    tessera::Kernel k = tessera::tune(kSoftmax, cpu, {.dims = {{"rows", rows}}}, "softmax.py");
    std::cout << k.report().table();

    std::vector<float> a(size_t(rows * kCols)), b(a.size(), NAN), again(a.size(), NAN);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-4, 4);
    for (float &x : a) x = u(rng);
    int64_t shape[] = {rows, kCols};
    DLTensor ta = host_tensor(a, shape), tb = host_tensor(b, shape), tagain = host_tensor(again, shape);
    k.run({&ta, &tb});
    const double ratio = worst_error_ratio(a, b, rows);
    std::printf("softmax %lld x %lld on %s: worst error %.3g of the bound\n", (long long)rows, (long long)kCols,
                cpu.str().c_str(), ratio);
    if (!(ratio <= 1)) return 1;

    const std::string path = (std::filesystem::temp_directory_path() / "tessera_consumer_softmax.tsk").string();
    k.save(path);
    tessera::Kernel loaded = tessera::load(path);
    loaded.run({&ta, &tagain});
    std::filesystem::remove(path);
    if (std::memcmp(b.data(), again.data(), b.size() * sizeof(float)) != 0) {
      std::printf("the loaded kernel's output differs from the tuned one's\n");
      return 1;
    }
    std::printf("saved to %s, loaded back: the same bits\n", path.c_str());
    return 0;
  } catch (const tessera::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
