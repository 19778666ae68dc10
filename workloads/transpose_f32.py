# Transpose: B[j, i] = A[i, j].
# dtypes: float32 in, float32 out. Symbolic: rows, cols (of A; B is cols x rows).
@T.prim_func
def main(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int32()
    cols = T.int32()
    A = T.match_buffer(a, (rows, cols), "float32")
    B = T.match_buffer(b, (cols, rows), "float32")
    for i, j in T.grid(rows, cols):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_j, v_i] = A[v_i, v_j]
