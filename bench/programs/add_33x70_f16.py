# The kernel whose call bench/FacadeCallBench.cpp (from C++) and
# bench/python_call_overhead.py (from Python) time: a 33 x 70 float16 bias
# add, small enough that the call itself is what is measured.
@T.prim_func
def add(A: T.Buffer((T.int64(33), T.int64(70)), "float16"), bias: T.Buffer((T.int64(70),), "float16"),
        C: T.Buffer((T.int64(33), T.int64(70)), "float16")) -> None:
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(T.int64(33), T.int64(70)):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            C[v_i, v_j] = A[v_i, v_j] + bias[v_j]
