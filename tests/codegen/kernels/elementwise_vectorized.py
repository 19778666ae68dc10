# Elementwise B = A * 2 + 1: blockIdx.x x threadIdx.x x a vectorised inner loop of 4.
@T.prim_func
def main(A: T.Buffer((1048576,), "float32"), B: T.Buffer((1048576,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(1024, thread="blockIdx.x"):
        for i_1 in T.thread_binding(256, thread="threadIdx.x"):
            for i_2 in T.vectorized(4):
                with T.block("B"):
                    v_i = T.axis.spatial(1048576, i_0 * 1024 + i_1 * 4 + i_2)
                    B[v_i] = A[v_i] * T.float32(2) + T.float32(1)
