# Row max in float16, one warp per row (threadIdx.x = 32 reduces, threadIdx.y
# = 4 rows per thread block): 1000 columns split 32 x 32 with a T.where mask on
# the tail, a pure warp-shuffle all-reduce (half overloads of __shfl_xor_sync).
@T.prim_func
def main(A: T.Buffer((256, 1000), "float16"), B: T.Buffer((256,), "float16")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(64, thread="blockIdx.x"):
        for i_1 in T.thread_binding(4, thread="threadIdx.y"):
            for k_1 in T.thread_binding(32, thread="threadIdx.x"):
                for k_0 in range(32):
                    with T.block("B"):
                        vi = T.axis.spatial(256, i_0 * 4 + i_1)
                        vk = T.axis.reduce(1000, k_0 * 32 + k_1)
                        T.where(k_0 * 32 + k_1 < 1000)
                        with T.init():
                            B[vi] = T.min_value("float16")
                        B[vi] = T.max(B[vi], A[vi, vk])
