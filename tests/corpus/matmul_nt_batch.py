# Batched matmul with B transposed (NT), float16 in, float16 out.
@T.prim_func
def main(A: T.Buffer((4, 128, 64), "float16"), B: T.Buffer((4, 256, 64), "float16"), C: T.Buffer((4, 128, 256), "float16")):
    T.func_attr({"tir.noalias": True})
    for b, i, j, k in T.grid(4, 128, 256, 64):
        with T.block("NT_matmul"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
            T.reads(A[v_b, v_i, v_k], B[v_b, v_j, v_k])
            T.writes(C[v_b, v_i, v_j])
            with T.init():
                C[v_b, v_i, v_j] = T.float16(0.0)
            C[v_b, v_i, v_j] = C[v_b, v_i, v_j] + A[v_b, v_i, v_k] * B[v_b, v_j, v_k]
