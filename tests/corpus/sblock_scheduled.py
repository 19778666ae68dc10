# Current spelling on a scheduled kernel with a local cache allocated in a block.
@T.prim_func
def main(A: T.Buffer((4096,), "float16"), B: T.Buffer((4096,), "float16")):
    T.func_attr({"tirx.noalias": True})
    for i_0 in T.thread_binding(32, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.sblock("B"):
                v_i = T.axis.spatial(4096, i_0 * 128 + i_1)
                T.reads(A[v_i])
                T.writes(B[v_i])
                A_local = T.sblock_alloc_buffer((1,), "float16", scope="local")
                A_local[0] = A[v_i]
                B[v_i] = A_local[0] + A_local[0]
