# Scheduled elementwise kernel: the loop split into blockIdx.x and threadIdx.x.
@T.prim_func
def main(A: T.Buffer((1048576,), "float32"), B: T.Buffer((1048576,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(4096, thread="blockIdx.x"):
        for i_1 in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("B"):
                v_i = T.axis.spatial(1048576, i_0 * 256 + i_1)
                T.reads(A[v_i])
                T.writes(B[v_i])
                B[v_i] = A[v_i] * T.float32(2) + T.float32(1)
