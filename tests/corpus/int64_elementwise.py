# int64 shapes and loops, as Relax lowers them.
@T.prim_func
def main(A: T.Buffer((T.int64(2), T.int64(1024)), "float16"), B: T.Buffer((T.int64(2), T.int64(1024)), "float16")):
    T.func_attr({"tir.noalias": True})
    for i0, i1 in T.grid(T.int64(2), T.int64(1024)):
        with T.block("T_multiply"):
            v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
            T.reads(A[v_i0, v_i1])
            T.writes(B[v_i0, v_i1])
            B[v_i0, v_i1] = A[v_i0, v_i1] * T.float16(0.125)
