# Matmul, both operands row-major ("nn"): C[i, j] = sum_k A[i, k] * B[k, j].
# dtypes: float32 throughout, accumulating in the output. Symbolic: m, n, k.
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    k = T.int32()
    A = T.match_buffer(a, (m, k), "float32")
    B = T.match_buffer(b, (k, n), "float32")
    C = T.match_buffer(c, (m, n), "float32")
    for i, j, r in T.grid(m, n, k):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_r] * B[v_r, v_j]
