# Batched matmul, both operands row-major (NN).
@T.prim_func
def main(A: T.Buffer((8, 256, 128), "float32"), B: T.Buffer((8, 128, 512), "float32"), C: T.Buffer((8, 256, 512), "float32")):
    T.func_attr({"tir.noalias": True})
    for b, i, j, k in T.grid(8, 256, 512, 128):
        with T.block("matmul"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
            T.reads(A[v_b, v_i, v_k], B[v_b, v_k, v_j])
            T.writes(C[v_b, v_i, v_j])
            with T.init():
                C[v_b, v_i, v_j] = T.float32(0.0)
            C[v_b, v_i, v_j] = C[v_b, v_i, v_j] + A[v_b, v_i, v_k] * B[v_b, v_k, v_j]
