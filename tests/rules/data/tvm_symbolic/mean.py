# from tvm.script import tir as T

@T.prim_func(private=True)
def mean(var_A: T.handle, var_T_divide: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int64(), T.int64()
    A = T.match_buffer(var_A, (n, m))
    T_divide = T.match_buffer(var_T_divide, (n,))
    A_red = T.alloc_buffer((n,))
    for ax0, k1 in T.grid(n, m):
        with T.block("A_red"):
            v_ax0, v_k1 = T.axis.remap("SR", [ax0, k1])
            T.reads(A[v_ax0, v_k1])
            T.writes(A_red[v_ax0])
            with T.init():
                A_red[v_ax0] = T.float32(0.0)
            A_red[v_ax0] = A_red[v_ax0] + A[v_ax0, v_k1]
    for ax0 in range(n):
        with T.block("T_divide"):
            v_ax0 = T.axis.spatial(n, ax0)
            T.reads(A_red[v_ax0])
            T.writes(T_divide[v_ax0])
            T_divide[v_ax0] = A_red[v_ax0] / T.Cast("float32", m)
