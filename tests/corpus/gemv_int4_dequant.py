# Int4 weights packed eight to a uint32, dequantised with a per-group scale.
@T.prim_func
def main(Wq: T.Buffer((4096, 512), "uint32"), scale: T.Buffer((4096, 32), "float16"), x: T.Buffer((4096,), "float16"), y: T.Buffer((4096,), "float16")):
    T.func_attr({"tir.noalias": True})
    W = T.alloc_buffer((4096, 4096), "float16")
    for i, j in T.grid(4096, 4096):
        with T.block("decode"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(Wq[v_i, v_j // 8], scale[v_i, v_j // 128])
            T.writes(W[v_i, v_j])
            W[v_i, v_j] = (T.Cast("float16", T.bitwise_and(T.shift_right(Wq[v_i, v_j // 8], T.Cast("uint32", v_j % 8 * 4)), T.uint32(15))) - T.float16(7)) * scale[v_i, v_j // 128]
    for i, k in T.grid(4096, 4096):
        with T.block("gemv"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(W[v_i, v_k], x[v_k])
            T.writes(y[v_i])
            with T.init():
                y[v_i] = T.float16(0)
            y[v_i] = y[v_i] + W[v_i, v_k] * x[v_k]
