# Matmul with a bias + ReLU epilogue block:
#   D[i, j] = max(sum_k A[i, k] * B[k, j] + bias[j], 0)
# dtypes: float32 throughout. Symbolic: m, n, k.
@T.prim_func
def main(a: T.handle, b: T.handle, bias_h: T.handle, d: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    k = T.int32()
    A = T.match_buffer(a, (m, k), "float32")
    B = T.match_buffer(b, (k, n), "float32")
    bias = T.match_buffer(bias_h, (n,), "float32")
    D = T.match_buffer(d, (m, n), "float32")
    C = T.alloc_buffer((m, n), "float32")
    for i, j, r in T.grid(m, n, k):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_r] * B[v_r, v_j]
    for i, j in T.grid(m, n):
        with T.block("D"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            D[v_i, v_j] = T.max(C[v_i, v_j] + bias[v_j], T.float32(0))
