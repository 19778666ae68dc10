# Row softmax, one thread per row: max, sum of exponentials, normalise, with
# the row's running values in registers ("local" buffers of one element).
@T.prim_func
def main(A: T.Buffer((2048, 256), "float32"), B: T.Buffer((2048, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(16, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("row"):
                vi = T.axis.spatial(2048, i_0 * 128 + i_1)
                row_max = T.alloc_buffer((1,), scope="local")
                row_sum = T.alloc_buffer((1,), scope="local")
                for k in range(256):
                    with T.block("max"):
                        vk = T.axis.reduce(256, k)
                        with T.init():
                            row_max[0] = T.min_value("float32")
                        row_max[0] = T.max(row_max[0], A[vi, vk])
                for k in range(256):
                    with T.block("sum"):
                        vk = T.axis.reduce(256, k)
                        with T.init():
                            row_sum[0] = T.float32(0)
                        row_sum[0] = row_sum[0] + T.exp(A[vi, vk] - row_max[0])
                for k in range(256):
                    with T.block("norm"):
                        vk = T.axis.spatial(256, k)
                        B[vi, vk] = T.exp(A[vi, vk] - row_max[0]) / row_sum[0]
