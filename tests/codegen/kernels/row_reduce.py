# Row sum, one thread per row with a serial reduction over the row (for the
# threads of a row reducing together see row_reduce_cross_thread.py).
@T.prim_func
def main(A: T.Buffer((4096, 1024), "float32"), B: T.Buffer((4096,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(32, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for k in range(1024):
                with T.block("B"):
                    vi = T.axis.spatial(4096, i_0 * 128 + i_1)
                    vk = T.axis.reduce(1024, k)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
