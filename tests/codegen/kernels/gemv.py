# y = A x (float32), one thread per row; the dot product unrolled by 4.
@T.prim_func
def main(A: T.Buffer((4096, 4096), "float32"), x: T.Buffer((4096,), "float32"), y: T.Buffer((4096,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(32, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("row"):
                vi = T.axis.spatial(4096, i_0 * 128 + i_1)
                acc = T.alloc_buffer((1,), scope="local")
                for k_0 in range(1024):
                    for k_1 in T.unroll(4):
                        with T.block("dot"):
                            vk = T.axis.reduce(4096, k_0 * 4 + k_1)
                            with T.init():
                                acc[0] = T.float32(0)
                            acc[0] = acc[0] + A[vi, vk] * x[vk]
                with T.block("store"):
                    y[vi] = acc[0]
