# A fused elementwise chain: multiply, add, sigmoid, scale (SiLU-like).
@T.prim_func
def main(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64, 256), "float32"), C: T.Buffer((64, 256), "float32"), D: T.Buffer((64, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    T_mul = T.alloc_buffer((64, 256))
    T_add = T.alloc_buffer((64, 256))
    for ax0, ax1 in T.grid(64, 256):
        with T.block("T_mul"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(A[v_ax0, v_ax1], B[v_ax0, v_ax1])
            T.writes(T_mul[v_ax0, v_ax1])
            T_mul[v_ax0, v_ax1] = A[v_ax0, v_ax1] * B[v_ax0, v_ax1]
    for ax0, ax1 in T.grid(64, 256):
        with T.block("T_add"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_mul[v_ax0, v_ax1], C[v_ax0, v_ax1])
            T.writes(T_add[v_ax0, v_ax1])
            T_add[v_ax0, v_ax1] = T_mul[v_ax0, v_ax1] + C[v_ax0, v_ax1]
    for ax0, ax1 in T.grid(64, 256):
        with T.block("silu"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(T_add[v_ax0, v_ax1])
            T.writes(D[v_ax0, v_ax1])
            D[v_ax0, v_ax1] = T_add[v_ax0, v_ax1] * T.sigmoid(T_add[v_ax0, v_ax1])
