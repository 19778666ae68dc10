# A split that overshoots: T.where guards the tail (1000 = 8 * 128 - 24).
@T.prim_func
def main(A: T.Buffer((1000,), "float32"), B: T.Buffer((1000,), "float32")):
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                v_i = T.axis.spatial(1000, i_0 * 128 + i_1)
                T.where(i_0 * 128 + i_1 < 1000)
                T.reads(A[v_i])
                T.writes(B[v_i])
                B[v_i] = T.exp(A[v_i])
