# Half-precision gemv accumulating in float32, then cast back.
@T.prim_func
def main(W: T.Buffer((11008, 4096), "float16"), x: T.Buffer((1, 4096), "float16"), y: T.Buffer((1, 11008), "float16")):
    T.func_attr({"tir.noalias": True})
    acc = T.alloc_buffer((1, 11008))
    for b, i, k in T.grid(1, 11008, 4096):
        with T.block("matmul"):
            v_b, v_i, v_k = T.axis.remap("SSR", [b, i, k])
            T.reads(x[v_b, v_k], W[v_i, v_k])
            T.writes(acc[v_b, v_i])
            with T.init():
                acc[v_b, v_i] = T.float32(0)
            acc[v_b, v_i] = acc[v_b, v_i] + T.Cast("float32", x[v_b, v_k]) * T.Cast("float32", W[v_i, v_k])
    for b, i in T.grid(1, 11008):
        with T.block("cast"):
            v_b, v_i = T.axis.remap("SS", [b, i])
            T.reads(acc[v_b, v_i])
            T.writes(y[v_b, v_i])
            y[v_b, v_i] = T.Cast("float16", acc[v_b, v_i])
