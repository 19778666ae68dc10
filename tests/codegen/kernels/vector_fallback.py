# Vectorized loops whose loads must stay scalar: a load one element past an
# aligned run (misaligned), and a load with stride 2; their stores are
# aligned runs (one float4 store each, from registers).
@T.prim_func
def main(A: T.Buffer((4100,), "float32"), S: T.Buffer((8192,), "float32"), B: T.Buffer((4096,), "float32"), C: T.Buffer((4096,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(4, thread="blockIdx.x"):
        for i_1 in T.thread_binding(256, thread="threadIdx.x"):
            for i_2 in T.vectorized(4):
                with T.block("B"):
                    v_i = T.axis.spatial(4096, i_0 * 1024 + i_1 * 4 + i_2)
                    B[v_i] = A[v_i + 1]
            for i_2 in T.vectorized(4):
                with T.block("C"):
                    v_i = T.axis.spatial(4096, i_0 * 1024 + i_1 * 4 + i_2)
                    C[v_i] = S[v_i * 2]
