# from tvm.script import tir as T

@T.prim_func(private=True)
def sum(var_A: T.handle, A_red: T.Buffer((), "float32")):
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    A = T.match_buffer(var_A, (n, T.int64(3)))
    for k0, k1 in T.grid(n, T.int64(3)):
        with T.block("A_red"):
            v_k0, v_k1 = T.axis.remap("RR", [k0, k1])
            T.reads(A[v_k0, v_k1])
            T.writes(A_red[()])
            with T.init():
                A_red[()] = T.float32(0.0)
            A_red[()] = A_red[()] + A[v_k0, v_k1]
