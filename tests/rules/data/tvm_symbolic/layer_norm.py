# from tvm.script import tir as T

@T.prim_func(private=True)
def layer_norm(var_A: T.handle, var_B: T.handle, var_C: T.handle, var_T_layer_norm: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    m = T.int64()
    B = T.match_buffer(var_B, (m,))
    C = T.match_buffer(var_C, (m,))
    A = T.match_buffer(var_A, (T.int64(1), n, m))
    T_layer_norm = T.match_buffer(var_T_layer_norm, (T.int64(1), n, m))
    A_red_temp_v0 = T.alloc_buffer((T.int64(1), n))
    A_red_temp_v1 = T.alloc_buffer((T.int64(1), n))
    for ax0, ax1, k2 in T.grid(T.int64(1), n, m):
        with T.block("A_red_temp"):
            v_ax0, v_ax1, v_k2 = T.axis.remap("SSR", [ax0, ax1, k2])
            T.reads(A[v_ax0, v_ax1, v_k2])
            T.writes(A_red_temp_v0[v_ax0, v_ax1], A_red_temp_v1[v_ax0, v_ax1])
            with T.init():
                A_red_temp_v0[v_ax0, v_ax1] = T.float32(0.0)
                A_red_temp_v1[v_ax0, v_ax1] = T.float32(0.0)
            v_A_red_temp_v0: T.float32 = A_red_temp_v0[v_ax0, v_ax1] + A[v_ax0, v_ax1, v_k2]
            v_A_red_temp_v1: T.float32 = A_red_temp_v1[v_ax0, v_ax1] + A[v_ax0, v_ax1, v_k2] * A[v_ax0, v_ax1, v_k2]
            A_red_temp_v0[v_ax0, v_ax1] = v_A_red_temp_v0
            A_red_temp_v1[v_ax0, v_ax1] = v_A_red_temp_v1
    for ax0, ax1, ax2 in T.grid(T.int64(1), n, m):
        with T.block("T_layer_norm"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            T.reads(A[v_ax0, v_ax1, v_ax2], A_red_temp_v0[v_ax0, v_ax1], A_red_temp_v1[v_ax0, v_ax1], B[v_ax2], C[v_ax2])
            T.writes(T_layer_norm[v_ax0, v_ax1, v_ax2])
            T_layer_norm[v_ax0, v_ax1, v_ax2] = (A[v_ax0, v_ax1, v_ax2] - A_red_temp_v0[v_ax0, v_ax1] * T.float32(0.000244140625)) * T.rsqrt(A_red_temp_v1[v_ax0, v_ax1] * T.float32(0.000244140625) - A_red_temp_v0[v_ax0, v_ax1] * T.float32(0.000244140625) * (A_red_temp_v0[v_ax0, v_ax1] * T.float32(0.000244140625)) + T.float32(1.0000000000000001e-05)) * B[v_ax2] + C[v_ax2]
