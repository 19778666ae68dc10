# A softmax over rows as TVM prints it today: two symbolic sizes declared in
# one statement, T.sblock / T.sblock_attr, typed lets (x: T.let[T.float32] and
# y: T.float32), T.cast with the value first, dtype= on a math call, and a
# float32 value stored into a float16 buffer (converted, as TVM does).
# from tvm.script import tir as T

@T.prim_func(private=True)
def softmax(var_A: T.handle, var_B: T.handle):
    T.func_attr({"tir.noalias": True})
    n, m = T.int64(), T.int64()
    A = T.match_buffer(var_A, (n, m), "float16")
    B = T.match_buffer(var_B, (n, m), "float16")
    # with T.sblock("root"):
    A_max = T.alloc_buffer((n,), "float16")
    A_sum = T.alloc_buffer((n,))
    for i, k in T.grid(n, m):
        with T.sblock("A_max"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(A_max[v_i])
            T.sblock_attr({"meta_schedule.unroll_explicit": 16})
            with T.init():
                A_max[v_i] = T.float16(-65504.0)
            A_max[v_i] = T.max(A_max[v_i], A[v_i, v_k])
    for i, k in T.grid(n, m):
        with T.sblock("A_sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                A_sum[v_i] = T.float32(0.0)
            A_sum[v_i] = A_sum[v_i] + T.exp(T.cast(A[v_i, v_k] - A_max[v_i], "float32"), dtype="float32")
    for i, j in T.grid(n, m):
        with T.sblock("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            x: T.let[T.float32] = T.cast(A[v_i, v_j] - A_max[v_i], "float32")
            y: T.float32 = T.exp(x) / A_sum[v_i]
            B[v_i, v_j] = y
