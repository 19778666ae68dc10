# Column sum with a (32, 8) thread block: threadIdx.x picks the column
# (coalesced loads), threadIdx.y reduces across rows with k_0 serial, so the
# 8 partials of a column meet in a shared-memory tree with a barrier per step;
# the thread with threadIdx.y == 0 writes the column's sum.
@T.prim_func
def main(A: T.Buffer((512, 2048), "float32"), B: T.Buffer((2048,), "float32")):
    T.func_attr({"tir.noalias": True})
    for j_0 in T.thread_binding(64, thread="blockIdx.x"):
        for k_1 in T.thread_binding(8, thread="threadIdx.y"):
            for j_1 in T.thread_binding(32, thread="threadIdx.x"):
                for k_0 in range(64):
                    with T.block("B"):
                        vj = T.axis.spatial(2048, j_0 * 32 + j_1)
                        vk = T.axis.reduce(512, k_0 * 8 + k_1)
                        with T.init():
                            B[vj] = T.float32(0)
                        B[vj] = B[vj] + A[vk, vj]
