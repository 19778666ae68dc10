# Row sum with 128 threads per row: the reduce loop is split into k_0 (serial)
# and k_1 (threadIdx.x), so the threads reduce across each other: per-thread
# partials, warp shuffles, per-warp totals through shared memory, and thread 0
# writes the row's sum.
@T.prim_func
def main(A: T.Buffer((4096, 1024), "float32"), B: T.Buffer((4096,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i in T.thread_binding(4096, thread="blockIdx.x"):
        for k_1 in T.thread_binding(128, thread="threadIdx.x"):
            for k_0 in range(8):
                with T.block("B"):
                    vi = T.axis.spatial(4096, i)
                    vk = T.axis.reduce(1024, k_0 * 128 + k_1)
                    with T.init():
                        B[vi] = T.float32(0)
                    B[vi] = B[vi] + A[vi, vk]
