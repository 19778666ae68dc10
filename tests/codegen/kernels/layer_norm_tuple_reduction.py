# Layer norm as dlight's general-reduction rule schedules it: the sum and the
# sum of squares are one tuple reduction (let-bound temporaries, two shared
# outputs) over 256 threads x 5 serial steps, lowered to two all-reduces; the
# normalisation reads both; one row per block.
# from tvm.script import tir as T


@T.prim_func
def main(
    p_x: T.handle,
    gamma: T.Buffer((T.int64(1280),), "float32"),
    beta: T.Buffer((T.int64(1280),), "float32"),
    p_out: T.handle,
):
    T.func_attr({"tir.is_scheduled": 1, "tir.noalias": T.bool(True)})
    x = T.match_buffer(p_x, (T.int64(1), T.int64(16), T.int64(1280)))
    out = T.match_buffer(p_out, (T.int64(1), T.int64(16), T.int64(1280)), "float16")
    # with T.block("root"):
    stats_v0_shared = T.alloc_buffer((T.int64(1), T.int64(16)), scope="shared")
    stats_v1_shared = T.alloc_buffer((T.int64(1), T.int64(16)), scope="shared")
    for ax0_fused in T.thread_binding(T.int64(16), thread="blockIdx.x"):
        for ax0 in range(T.int64(1)):
            for ax1_fused_1 in T.thread_binding(T.int64(256), thread="threadIdx.x"):
                for ax1_fused_0 in T.serial(T.int64(5), annotations={"pragma_auto_unroll_max_step": 256, "pragma_unroll_explicit": 1}):
                    with T.block("stats"):
                        v0 = T.axis.spatial(T.int64(16), ax0_fused + ax0)
                        v1 = T.axis.reduce(T.int64(1280), ax1_fused_0 * T.int64(256) + ax1_fused_1)
                        T.reads(x[T.int64(0), v0, v1])
                        T.writes(stats_v0_shared[T.int64(0), v0], stats_v1_shared[T.int64(0), v0])
                        with T.init():
                            stats_v0_shared[T.int64(0), v0] = T.float32(0)
                            stats_v1_shared[T.int64(0), v0] = T.float32(0)
                        v_stats_v0: T.float32 = stats_v0_shared[T.int64(0), v0] + x[T.int64(0), v0, v1]
                        v_stats_v1: T.float32 = stats_v1_shared[T.int64(0), v0] + x[T.int64(0), v0, v1] * x[T.int64(0), v0, v1]
                        stats_v0_shared[T.int64(0), v0] = v_stats_v0
                        stats_v1_shared[T.int64(0), v0] = v_stats_v1
        for ax1_1 in T.thread_binding(T.int64(256), thread="threadIdx.x"):
            for ax1_0 in T.serial(T.int64(5), annotations={"pragma_auto_unroll_max_step": 256, "pragma_unroll_explicit": 1}):
                with T.block("norm"):
                    v0 = T.axis.spatial(T.int64(16), ax0_fused)
                    v1 = T.axis.spatial(T.int64(1280), ax1_0 * T.int64(256) + ax1_1)
                    T.reads(x[T.int64(0), v0, v1], stats_v0_shared[T.int64(0), v0], stats_v1_shared[T.int64(0), v0], gamma[v1], beta[v1])
                    T.writes(out[T.int64(0), v0, v1])
                    out[T.int64(0), v0, v1] = T.Cast("float16", (x[T.int64(0), v0, v1] - stats_v0_shared[T.int64(0), v0] * T.float32(0.00078125)) * T.rsqrt(stats_v1_shared[T.int64(0), v0] * T.float32(0.00078125) - stats_v0_shared[T.int64(0), v0] * T.float32(0.00078125) * (stats_v0_shared[T.int64(0), v0] * T.float32(0.00078125)) + T.float32(1e-05)) * gamma[v1] + beta[v1])
