# Layer normalisation over the last axis, two-pass (mean, then variance):
#   mean[i] = sum_k A[i, k] / cols
#   var[i]  = sum_k (A[i, k] - mean[i])^2 / cols
#   B[i, j] = (A[i, j] - mean[i]) * rsqrt(var[i] + 1e-5) * gamma[j] + beta[j]
# dtypes: float16 in and out; the sums and the normalisation in float32, the
# result cast to float16 once. Symbolic: rows, cols (reduced).
@T.prim_func
def main(a: T.handle, gamma_h: T.handle, beta_h: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int32()
    cols = T.int32()
    A = T.match_buffer(a, (rows, cols), "float16")
    gamma = T.match_buffer(gamma_h, (cols,), "float16")
    beta = T.match_buffer(beta_h, (cols,), "float16")
    B = T.match_buffer(b, (rows, cols), "float16")
    row_sum = T.alloc_buffer((rows,), "float32")
    mean = T.alloc_buffer((rows,), "float32")
    sq_dev_sum = T.alloc_buffer((rows,), "float32")
    for i, k in T.grid(rows, cols):
        with T.block("row_sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                row_sum[v_i] = T.float32(0)
            row_sum[v_i] = row_sum[v_i] + T.Cast("float32", A[v_i, v_k])
    for i in range(rows):
        with T.block("mean"):
            v_i = T.axis.remap("S", [i])
            mean[v_i] = row_sum[v_i] / T.Cast("float32", cols)
    for i, k in T.grid(rows, cols):
        with T.block("sq_dev_sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                sq_dev_sum[v_i] = T.float32(0)
            sq_dev_sum[v_i] = sq_dev_sum[v_i] + (T.Cast("float32", A[v_i, v_k]) - mean[v_i]) * (T.Cast("float32", A[v_i, v_k]) - mean[v_i])
    for i, j in T.grid(rows, cols):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = T.Cast("float16", (T.Cast("float32", A[v_i, v_j]) - mean[v_i]) * T.rsqrt(sq_dev_sum[v_i] / T.Cast("float32", cols) + T.float32(1e-05)) * T.Cast("float32", gamma[v_j]) + T.Cast("float32", beta[v_j]))
