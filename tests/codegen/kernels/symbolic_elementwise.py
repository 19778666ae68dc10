# Elementwise over a symbolic length n: the grid is ceil(n / 256) blocks and
# the tail is guarded by the block predicate.
@T.prim_func
def main(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    for i_0 in T.thread_binding((n + 255) // 256, thread="blockIdx.x"):
        for i_1 in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("B"):
                v_i = T.axis.spatial(n, i_0 * 256 + i_1)
                T.where(i_0 * 256 + i_1 < n)
                B[v_i] = T.max(A[v_i], T.float32(0))
