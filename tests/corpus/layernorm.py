# Layer normalisation with gamma and beta, mean and variance in one pass.
@T.prim_func
def main(A: T.Buffer((8, 768), "float32"), gamma: T.Buffer((768,), "float32"), beta: T.Buffer((768,), "float32"), B: T.Buffer((8, 768), "float32")):
    T.func_attr({"tir.noalias": True})
    A_red_temp_v0 = T.alloc_buffer((8,))
    A_red_temp_v1 = T.alloc_buffer((8,))
    for ax0, k1 in T.grid(8, 768):
        with T.block("A_red_temp"):
            v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
            T.reads(A[v_ax0, v_k1])
            T.writes(A_red_temp_v0[v_ax0], A_red_temp_v1[v_ax0])
            with T.init():
                A_red_temp_v0[v_ax0] = T.float32(0.0)
                A_red_temp_v1[v_ax0] = T.float32(0.0)
            v_A_red_temp_v0: T.float32 = A_red_temp_v0[v_ax0] + A[v_ax0, v_k1]
            v_A_red_temp_v1: T.float32 = A_red_temp_v1[v_ax0] + A[v_ax0, v_k1] * A[v_ax0, v_k1]
            A_red_temp_v0[v_ax0] = v_A_red_temp_v0
            A_red_temp_v1[v_ax0] = v_A_red_temp_v1
    for ax0, ax1 in T.grid(8, 768):
        with T.block("T_layer_norm"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1], A_red_temp_v0[v_ax0], A_red_temp_v1[v_ax0], gamma[v_ax1], beta[v_ax1])
            T.writes(B[v_ax0, v_ax1])
            B[v_ax0, v_ax1] = (A[v_ax0, v_ax1] - A_red_temp_v0[v_ax0] * T.float32(0.0013020833333333333)) * T.rsqrt(A_red_temp_v1[v_ax0] * T.float32(0.0013020833333333333) - A_red_temp_v0[v_ax0] * T.float32(0.0013020833333333333) * (A_red_temp_v0[v_ax0] * T.float32(0.0013020833333333333)) + T.float32(1.0000000000000001e-05)) * gamma[v_ax1] + beta[v_ax1]
