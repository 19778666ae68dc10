# from tvm.script import tir as T

@T.prim_func(private=True)
def sum(var_A: T.handle, var_A_red: T.handle):
    T.func_attr({"tir.noalias": True})
    m, n = T.int64(), T.int64()
    A = T.match_buffer(var_A, (m, n))
    A_red = T.match_buffer(var_A_red, (m,))
    for ax0, k1 in T.grid(m, n):
        with T.block("A_red"):
            v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
            T.reads(A[v_ax0, v_k1])
            T.writes(A_red[v_ax0])
            with T.init():
                A_red[v_ax0] = T.float32(0)
            A_red[v_ax0] = A_red[v_ax0] + A[v_ax0, v_k1]
