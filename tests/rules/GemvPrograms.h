//===- tests/rules/GemvPrograms.h - Gemv shapes beyond the corpus -----------===//
#pragma once

#include <string>

namespace tessera::test {

/// y[b, i] = sum_k W[i, k] * x[b, k] (float16 in, float32 accumulation, a cast epilogue).
inline std::string batch_gemv(int b, int m, int k) {
  std::string B = std::to_string(b), M = std::to_string(m), K = std::to_string(k);
  return R"(
@T.prim_func
def main(W: T.Buffer(()" + M + ", " + K + R"(), "float16"), x: T.Buffer(()" + B + ", " + K +
         R"(), "float16"), y: T.Buffer(()" + B + ", " + M + R"(), "float16")):
    T.func_attr({"tir.noalias": True})
    acc = T.alloc_buffer(()" + B + ", " + M + R"())
    for b, i, r in T.grid()" + B + ", " + M + ", " + K + R"():
        with T.block("acc"):
            v_b, v_i, v_r = T.axis.remap("SSR", [b, i, r])
            with T.init():
                acc[v_b, v_i] = T.float32(0)
            acc[v_b, v_i] = acc[v_b, v_i] + T.Cast("float32", W[v_i, v_r]) * T.Cast("float32", x[v_b, v_r])
    for b, i in T.grid()" + B + ", " + M + R"():
        with T.block("y"):
            v_b, v_i = T.axis.remap("SS", [b, i])
            y[v_b, v_i] = T.Cast("float16", acc[v_b, v_i])
)";
}

/// y[i] = sum_k W[k, i] * x[k], float32, W with m contiguous (outer reduction).
inline std::string outer_gemv(int m, int k) {
  std::string M = std::to_string(m), K = std::to_string(k);
  return R"(
@T.prim_func
def main(W: T.Buffer(()" + K + ", " + M + R"(), "float32"), x: T.Buffer(()" + K + R"(,), "float32"), y: T.Buffer(()" +
         M + R"(,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, r in T.grid()" + M + ", " + K + R"():
        with T.block("y"):
            v_i, v_r = T.axis.remap("SR", [i, r])
            with T.init():
                y[v_i] = T.float32(0)
            y[v_i] = y[v_i] + W[v_r, v_i] * x[v_r]
)";
}

/// y[b, i] = sum_k W[k, i] * x[b, k] (float16 in, float32 out).
inline std::string outer_batch_gemv(int b, int m, int k) {
  std::string B = std::to_string(b), M = std::to_string(m), K = std::to_string(k);
  return R"(
@T.prim_func
def main(W: T.Buffer(()" + K + ", " + M + R"(), "float16"), x: T.Buffer(()" + B + ", " + K +
         R"(), "float16"), y: T.Buffer(()" + B + ", " + M + R"(), "float32")):
    T.func_attr({"tir.noalias": True})
    for b, i, r in T.grid()" + B + ", " + M + ", " + K + R"():
        with T.block("y"):
            v_b, v_i, v_r = T.axis.remap("SSR", [b, i, r])
            with T.init():
                y[v_b, v_i] = T.float32(0)
            y[v_b, v_i] = y[v_b, v_i] + T.Cast("float32", W[v_r, v_i]) * T.Cast("float32", x[v_b, v_r])
)";
}

/// y[i] = float16(sum_k W[i, k] * x[k] + bias[i]): two epilogue blocks.
inline std::string bias_gemv(int m, int k) {
  std::string M = std::to_string(m), K = std::to_string(k);
  return R"(
@T.prim_func
def main(W: T.Buffer(()" + M + ", " + K + R"(), "float16"), x: T.Buffer(()" + K + R"(,), "float16"), bias: T.Buffer(()" +
         M + R"(,), "float32"), y: T.Buffer(()" + M + R"(,), "float16")):
    T.func_attr({"tir.noalias": True})
    acc = T.alloc_buffer(()" + M + R"(,))
    biased = T.alloc_buffer(()" + M + R"(,))
    for i, r in T.grid()" + M + ", " + K + R"():
        with T.block("acc"):
            v_i, v_r = T.axis.remap("SR", [i, r])
            with T.init():
                acc[v_i] = T.float32(0)
            acc[v_i] = acc[v_i] + T.Cast("float32", W[v_i, v_r]) * T.Cast("float32", x[v_r])
    for i in range()" + M + R"():
        with T.block("biased"):
            v_i = T.axis.remap("S", [i])
            biased[v_i] = acc[v_i] + bias[v_i]
    for i in range()" + M + R"():
        with T.block("y"):
            v_i = T.axis.remap("S", [i])
            y[v_i] = T.Cast("float16", biased[v_i])
)";
}

/// A dot product: no row iter.
inline const char *kDot = R"(
@T.prim_func
def main(a: T.Buffer((64,), "float32"), b: T.Buffer((64,), "float32"), c: T.Buffer((1,), "float32")):
    for r in range(64):
        with T.block("c"):
            v_r = T.axis.remap("R", [r])
            with T.init():
                c[0] = T.float32(0)
            c[0] = c[0] + a[v_r] * b[v_r]
)";

/// A max of products: not a sum.
inline const char *kMaxProduct = R"(
@T.prim_func
def main(W: T.Buffer((16, 64), "float32"), x: T.Buffer((64,), "float32"), y: T.Buffer((16,), "float32")):
    for i, r in T.grid(16, 64):
        with T.block("y"):
            v_i, v_r = T.axis.remap("SR", [i, r])
            with T.init():
                y[v_i] = T.min_value("float32")
            y[v_i] = T.max(y[v_i], W[v_i, v_r] * x[v_r])
)";

/// A decode step's projection as relax prints it (black-formatted, T.int64
/// sizes, unit batch axes: x is (1, 1, k), the output (1, 1, n)), with a
/// bias epilogue; `transposed_w` stores W as (k, n) (the outer layout).
inline std::string decode_gemv(int n, int k, bool transposed_w = false) {
  auto i64 = [](int v) { return "T.int64(" + std::to_string(v) + ")"; };
  std::string w_shape = transposed_w ? i64(k) + ", " + i64(n) : i64(n) + ", " + i64(k);
  std::string w_at = transposed_w ? "p_w[v_k, v_i2]" : "p_w[v_i2, v_k]";
  return R"(
@T.prim_func(private=True)
def fused_NT_matmul_add(
    lv1654: T.Buffer((T.int64(1), T.int64(1), )" + i64(k) + R"(), "float16"),
    p_w: T.Buffer(()" + w_shape + R"(), "float16"),
    p_b: T.Buffer(()" + i64(n) + R"(,), "float16"),
    var_T_add_intermediate: T.Buffer((T.int64(1), T.int64(1), )" + i64(n) + R"(), "float16"),
):
    T.func_attr({"tir.noalias": T.bool(True)})
    # with T.block("root"):
    var_NT_matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(1), )" + i64(n) + R"(), "float16")
    for i0, i1, i2, k in T.grid(T.int64(1), T.int64(1), )" + i64(n) + ", " + i64(k) + R"():
        with T.block("NT_matmul"):
            v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
            T.reads(lv1654[v_i0, v_i1, v_k], )" + w_at + R"()
            T.writes(var_NT_matmul_intermediate[v_i0, v_i1, v_i2])
            with T.init():
                var_NT_matmul_intermediate[v_i0, v_i1, v_i2] = T.float16(0.0)
            var_NT_matmul_intermediate[v_i0, v_i1, v_i2] = (
                var_NT_matmul_intermediate[v_i0, v_i1, v_i2] + lv1654[v_i0, v_i1, v_k] * )" + w_at + R"(
            )
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(1), )" + i64(n) + R"():
        with T.block("T_add"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(var_NT_matmul_intermediate[v_ax0, v_ax1, v_ax2], p_b[v_ax2])
            T.writes(var_T_add_intermediate[v_ax0, v_ax1, v_ax2])
            var_T_add_intermediate[v_ax0, v_ax1, v_ax2] = var_NT_matmul_intermediate[v_ax0, v_ax1, v_ax2] + p_b[v_ax2]
)";
}

}  // namespace tessera::test
