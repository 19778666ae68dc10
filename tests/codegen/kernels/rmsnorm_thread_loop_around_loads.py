# RMS norm as dlight's rmsnorm rule schedules it (tir.is_scheduled): one row
# per block, each of 128 threads loads 8 halfs (vectorized) into registers and
# squares them; the sum of squares reduces over the threadIdx loop that also
# encloses the loads, into a local buffer every thread keeps; one thread
# computes the rsqrt into shared memory; every thread scales its 8 elements.
# from tvm.script import tir as T


@T.prim_func
def main(
    data: T.Buffer((T.int64(64), T.int64(1024)), "float16"),
    weight: T.Buffer((T.int64(1024),), "float16"),
    T_cast: T.Buffer((T.int64(64), T.int64(1024)), "float16"),
):
    T.func_attr({"tir.is_scheduled": 1, "tir.noalias": T.bool(True)})
    # with T.block("root"):
    data_local = T.alloc_buffer((T.int64(64), T.int64(1024)), "float16", scope="local")
    sq_local = T.alloc_buffer((T.int64(64), T.int64(1024)), scope="local")
    sum_sq_local = T.alloc_buffer((T.int64(64),), scope="local")
    rsqrt_shared = T.alloc_buffer((T.int64(64),), scope="shared")
    for row in T.thread_binding(T.int64(64), thread="blockIdx.x"):
        for ax1_0 in T.thread_binding(T.int64(128), thread="threadIdx.x"):
            for ax1_1 in T.vectorized(T.int64(8)):
                with T.block("data_local"):
                    v0 = T.axis.spatial(T.int64(64), row)
                    v1 = T.axis.spatial(T.int64(1024), ax1_0 * T.int64(8) + ax1_1)
                    T.reads(data[v0, v1])
                    T.writes(data_local[v0, v1])
                    data_local[v0, v1] = data[v0, v1]
            for ax1 in range(T.int64(8)):
                with T.block("sq"):
                    v0 = T.axis.spatial(T.int64(64), row)
                    v1 = T.axis.spatial(T.int64(1024), ax1_0 * T.int64(8) + ax1)
                    T.reads(data_local[v0, v1])
                    T.writes(sq_local[v0, v1])
                    sq_local[v0, v1] = T.Cast("float32", data_local[v0, v1]) * T.Cast("float32", data_local[v0, v1])
            for ax1 in range(T.int64(8)):
                with T.block("sum_sq"):
                    v0 = T.axis.spatial(T.int64(64), row)
                    v_k = T.axis.reduce(T.int64(1024), ax1_0 * T.int64(8) + ax1)
                    T.reads(sq_local[v0, v_k])
                    T.writes(sum_sq_local[v0])
                    with T.init():
                        sum_sq_local[v0] = T.float32(0)
                    sum_sq_local[v0] = sum_sq_local[v0] + sq_local[v0, v_k]
        with T.block("rsqrt"):
            v0 = T.axis.spatial(T.int64(64), row)
            T.reads(sum_sq_local[v0])
            T.writes(rsqrt_shared[v0])
            rsqrt_shared[v0] = T.rsqrt(sum_sq_local[v0] * T.float32(0.0009765625) + T.float32(1e-06))
        for ax1_0 in T.thread_binding(T.int64(128), thread="threadIdx.x"):
            for ax1_1 in range(T.int64(8)):
                with T.block("T_cast"):
                    v0 = T.axis.spatial(T.int64(64), row)
                    v1 = T.axis.spatial(T.int64(1024), ax1_0 * T.int64(8) + ax1_1)
                    T.reads(rsqrt_shared[v0], data_local[v0, v1], weight[v1])
                    T.writes(T_cast[v0, v1])
                    T_cast[v0, v1] = T.Cast("float16", rsqrt_shared[v0] * T.Cast("float32", data_local[v0, v1]) * T.Cast("float32", weight[v1]))
