# from tvm.script import tir as T

@T.prim_func(private=True)
def rms_norm(var_A: T.handle, var_B: T.handle, var_T_cast: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    k = T.int64()
    B = T.match_buffer(var_B, (k,), "float16")
    A = T.match_buffer(var_A, (T.int64(1), n, k), "float16")
    T_cast = T.match_buffer(var_T_cast, (T.int64(1), n, k), "float16")
    T_cast_1 = T.alloc_buffer((T.int64(1), n, k))
    T_multiply = T.alloc_buffer((T.int64(1), n, k))
    T_multiply_red = T.alloc_buffer((T.int64(1), n))
    rsqrt = T.alloc_buffer((T.int64(1), n))
    T_cast_2 = T.alloc_buffer((k,))
    T_rms_norm = T.alloc_buffer((T.int64(1), n, k))
    for ax0, ax1, ax2 in T.grid(T.int64(1), n, k):
        with T.block("T_cast"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(A[v_ax0, v_ax1, v_ax2])
            T.writes(T_cast_1[v_ax0, v_ax1, v_ax2])
            T_cast_1[v_ax0, v_ax1, v_ax2] = T.Cast("float32", A[v_ax0, v_ax1, v_ax2])
    for ax0, ax1, ax2 in T.grid(T.int64(1), n, k):
        with T.block("T_multiply"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(T_cast_1[v_ax0, v_ax1, v_ax2])
            T.writes(T_multiply[v_ax0, v_ax1, v_ax2])
            T_multiply[v_ax0, v_ax1, v_ax2] = T_cast_1[v_ax0, v_ax1, v_ax2] * T_cast_1[v_ax0, v_ax1, v_ax2]
    for ax0, ax1, k2 in T.grid(T.int64(1), n, k):
        with T.block("T_multiply_red"):
            v_ax0, v_ax1, v_k2 = T.axis.remap("SSR", [ax0, ax1, k2])
            T.reads(T_multiply[v_ax0, v_ax1, v_k2])
            T.writes(T_multiply_red[v_ax0, v_ax1])
            with T.init():
                T_multiply_red[v_ax0, v_ax1] = T.float32(0)
            T_multiply_red[v_ax0, v_ax1] = T_multiply_red[v_ax0, v_ax1] + T_multiply[v_ax0, v_ax1, v_k2]
    for ax0, ax1 in T.grid(T.int64(1), n):
        with T.block("rsqrt"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_multiply_red[v_ax0, v_ax1])
            T.writes(rsqrt[v_ax0, v_ax1])
            rsqrt[v_ax0, v_ax1] = T.rsqrt(T_multiply_red[v_ax0, v_ax1] * T.float32(1) / T.Cast("float32", k) + T.float32(1e-05))
    for ax0 in range(k):
        with T.block("T_cast_1"):
            v_ax0 = T.axis.spatial(k, ax0)
            T.reads(B[v_ax0])
            T.writes(T_cast_2[v_ax0])
            T_cast_2[v_ax0] = T.Cast("float32", B[v_ax0])
    for ax0, ax1, ax2 in T.grid(T.int64(1), n, k):
        with T.block("T_rms_norm"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(rsqrt[v_ax0, v_ax1], T_cast_1[v_ax0, v_ax1, v_ax2], T_cast_2[v_ax2])
            T.writes(T_rms_norm[v_ax0, v_ax1, v_ax2])
            T_rms_norm[v_ax0, v_ax1, v_ax2] = rsqrt[v_ax0, v_ax1] * T_cast_1[v_ax0, v_ax1, v_ax2] * T_cast_2[v_ax2]
    for ax0, ax1, ax2 in T.grid(T.int64(1), n, k):
        with T.block("T_cast_2"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(T_rms_norm[v_ax0, v_ax1, v_ax2])
            T.writes(T_cast[v_ax0, v_ax1, v_ax2])
            T_cast[v_ax0, v_ax1, v_ax2] = T.Cast("float16", T_rms_norm[v_ax0, v_ax1, v_ax2])
