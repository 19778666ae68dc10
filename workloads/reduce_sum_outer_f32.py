# Column sum: B[j] = sum_k A[k, j], reducing the FIRST axis (the reduction is
# strided; consecutive outputs read consecutive elements).
# dtypes: float32 in, float32 out. Symbolic: rows (reduced), cols.
@T.prim_func
def main(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int32()
    cols = T.int32()
    A = T.match_buffer(a, (rows, cols), "float32")
    B = T.match_buffer(b, (cols,), "float32")
    for j, k in T.grid(cols, rows):
        with T.block("B"):
            v_j, v_k = T.axis.remap("SR", [j, k])
            with T.init():
                B[v_j] = T.float32(0)
            B[v_j] = B[v_j] + A[v_k, v_j]
