# Row sum: B[i] = sum_k A[i, k], reducing the last (contiguous) axis.
# dtypes: float32 in, float32 out. Symbolic: rows, cols.
@T.prim_func
def main(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int32()
    cols = T.int32()
    A = T.match_buffer(a, (rows, cols), "float32")
    B = T.match_buffer(b, (rows,), "float32")
    for i, k in T.grid(rows, cols):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + A[v_i, v_k]
