# Copy of a float16 vector, 8 halves per thread: one 16-byte (uint4) load and
# one 16-byte store per thread.
@T.prim_func
def main(A: T.Buffer((1048576,), "float16"), B: T.Buffer((1048576,), "float16")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(512, thread="blockIdx.x"):
        for i_1 in T.thread_binding(256, thread="threadIdx.x"):
            for i_2 in T.vectorized(8):
                with T.block("B"):
                    v_i = T.axis.spatial(1048576, i_0 * 2048 + i_1 * 8 + i_2)
                    B[v_i] = A[v_i]
