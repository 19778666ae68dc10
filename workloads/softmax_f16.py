# Row softmax in four blocks: row max, exp(x - max), row sum, normalise.
#   B[i, j] = exp(A[i, j] - max_k A[i, k]) / sum_k exp(A[i, k] - max_k A[i, k])
# dtypes: float16 in and out; the max is kept in float16 (exact), the
# exponentials and their sum in float32. Symbolic: rows, cols (reduced).
@T.prim_func
def main(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int32()
    cols = T.int32()
    A = T.match_buffer(a, (rows, cols), "float16")
    B = T.match_buffer(b, (rows, cols), "float16")
    row_max = T.alloc_buffer((rows,), "float16")
    row_exp = T.alloc_buffer((rows, cols), "float32")
    row_sum = T.alloc_buffer((rows,), "float32")
    for i, k in T.grid(rows, cols):
        with T.block("row_max"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                row_max[v_i] = T.min_value("float16")
            row_max[v_i] = T.max(row_max[v_i], A[v_i, v_k])
    for i, j in T.grid(rows, cols):
        with T.block("row_exp"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            row_exp[v_i, v_j] = T.exp(T.Cast("float32", A[v_i, v_j]) - T.Cast("float32", row_max[v_i]))
    for i, k in T.grid(rows, cols):
        with T.block("row_sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                row_sum[v_i] = T.float32(0)
            row_sum[v_i] = row_sum[v_i] + row_exp[v_i, v_k]
    for i, j in T.grid(rows, cols):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = T.Cast("float16", row_exp[v_i, v_j] / row_sum[v_i])
