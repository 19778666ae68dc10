# Bias add: C[i, j] = A[i, j] + bias[j], the bias row broadcast over the rows.
# dtypes: float16 in, float16 out. Symbolic: rows, cols.
@T.prim_func
def main(a: T.handle, bias_h: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int32()
    cols = T.int32()
    A = T.match_buffer(a, (rows, cols), "float16")
    bias = T.match_buffer(bias_h, (cols,), "float16")
    C = T.match_buffer(c, (rows, cols), "float16")
    for i, j in T.grid(rows, cols):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            C[v_i, v_j] = A[v_i, v_j] + bias[v_j]
