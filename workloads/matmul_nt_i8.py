# Matmul in int8 with B stored [N, K] ("nt", the layout 8-bit tensor-core
# fragments load from): C[i, j] = sum_k int32(A[i, k]) * int32(B[j, k]).
# dtypes: int8 inputs, int32 accumulator and output (exact, wrapping).
# Symbolic: m, n, k.
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle) -> None:
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    k = T.int32()
    A = T.match_buffer(a, (m, k), "int8")
    B = T.match_buffer(b, (n, k), "int8")
    C = T.match_buffer(c, (m, n), "int32")
    for i, j, r in T.grid(m, n, k):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = 0
            C[v_i, v_j] = C[v_i, v_j] + T.Cast("int32", A[v_i, v_r]) * T.Cast("int32", B[v_j, v_r])
