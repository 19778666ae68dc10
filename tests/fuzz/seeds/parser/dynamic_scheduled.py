# from tvm.script import tir as T

@T.prim_func(private=True)
def main(var_A: T.handle, var_B: T.handle):
    T.func_attr({"tir.is_scheduled": True, "tir.noalias": T.bool(True)})
    n = T.int64()
    A = T.match_buffer(var_A, (n, T.int64(4096)), "float16")
    B = T.match_buffer(var_B, (n,), "float16")
    # with T.block("root"):
    B_local = T.alloc_buffer((n,), "float16", scope="local")
    for ax0_fused_0 in T.thread_binding((n + T.int64(255)) // T.int64(256), thread="blockIdx.x"):
        for ax0_fused_1 in T.thread_binding(T.int64(256), thread="threadIdx.x"):
            for k in T.unroll(T.int64(4096), annotations={"pragma_auto_unroll_max_step": 16}):
                with T.block("B"):
                    v0 = T.axis.spatial(n, ax0_fused_0 * T.int64(256) + ax0_fused_1)
                    v1 = T.axis.reduce(T.int64(4096), k)
                    T.where(ax0_fused_0 * T.int64(256) + ax0_fused_1 < n)
                    T.reads(A[v0, v1])
                    T.writes(B_local[v0])
                    with T.init():
                        B_local[v0] = T.float16(0.0)
                    B_local[v0] = B_local[v0] + A[v0, v1]
            with T.block("B_local"):
                v0 = T.axis.spatial(n, ax0_fused_0 * T.int64(256) + ax0_fused_1)
                T.where(ax0_fused_0 * T.int64(256) + ax0_fused_1 < n)
                B[v0] = B_local[v0]
