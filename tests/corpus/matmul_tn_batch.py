# Batched matmul with A transposed (TN).
@T.prim_func
def main(A: T.Buffer((2, 64, 96), "float32"), B: T.Buffer((2, 64, 80), "float32"), C: T.Buffer((2, 96, 80), "float32")):
    for b, i, j, k in T.grid(2, 96, 80, 64):
        with T.block("TN_matmul"):
            v_b = T.axis.spatial(2, b)
            v_i = T.axis.spatial(96, i)
            v_j = T.axis.spatial(80, j)
            v_k = T.axis.reduce(64, k)
            T.reads(A[v_b, v_k, v_i], B[v_b, v_k, v_j])
            T.writes(C[v_b, v_i, v_j])
            with T.init():
                C[v_b, v_i, v_j] = T.float32(0)
            C[v_b, v_i, v_j] = C[v_b, v_i, v_j] + A[v_b, v_k, v_i] * B[v_b, v_k, v_j]
