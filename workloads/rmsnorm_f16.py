# RMSNorm over the last axis with a weight row:
#   B[i, j] = A[i, j] * rsqrt(mean_k A[i, k]^2 + 1e-6) * weight[j]
# dtypes: float16 in and out; the sum of squares and the normalisation in
# float32, the result cast to float16 once. Symbolic: rows, cols (reduced).
@T.prim_func
def main(a: T.handle, weight_h: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int32()
    cols = T.int32()
    A = T.match_buffer(a, (rows, cols), "float16")
    weight = T.match_buffer(weight_h, (cols,), "float16")
    B = T.match_buffer(b, (rows, cols), "float16")
    sum_sq = T.alloc_buffer((rows,), "float32")
    inv_rms = T.alloc_buffer((rows,), "float32")
    for i, k in T.grid(rows, cols):
        with T.block("sum_sq"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                sum_sq[v_i] = T.float32(0)
            sum_sq[v_i] = sum_sq[v_i] + T.Cast("float32", A[v_i, v_k]) * T.Cast("float32", A[v_i, v_k])
    for i in range(rows):
        with T.block("inv_rms"):
            v_i = T.axis.remap("S", [i])
            inv_rms[v_i] = T.rsqrt(sum_sq[v_i] / T.Cast("float32", cols) + T.float32(1e-06))
    for i, j in T.grid(rows, cols):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = T.Cast("float16", T.Cast("float32", A[v_i, v_j]) * inv_rms[v_i] * T.Cast("float32", weight[v_j]))
