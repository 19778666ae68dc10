# Row max in float16 with a float16 min_value init, one thread per row.
@T.prim_func
def main(A: T.Buffer((1024, 512), "float16"), B: T.Buffer((1024,), "float16")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(8, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            for k in range(512):
                with T.block("B"):
                    vi = T.axis.spatial(1024, i_0 * 128 + i_1)
                    vk = T.axis.reduce(512, k)
                    with T.init():
                        B[vi] = T.min_value("float16")
                    B[vi] = T.max(B[vi], A[vi, vk])
