# Int8 weights packed four to a uint32 word with shifts and masks, float32 accumulation.
@T.prim_func
def main(Wp: T.Buffer((1024, 256), "uint32"), s: T.Buffer((1024,), "float32"), x: T.Buffer((1024,), "float32"), y: T.Buffer((1024,), "float32")):
    for i, k in T.grid(1024, 1024):
        with T.block("gemv"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(Wp[v_i, v_k // 4], s[v_i], x[v_k])
            T.writes(y[v_i])
            with T.init():
                y[v_i] = T.float32(0)
            y[v_i] = y[v_i] + T.Cast("float32", T.Cast("int8", Wp[v_i, v_k // 4] >> T.Cast("uint32", v_k % 4 * 8) & T.uint32(255))) * s[v_i] * x[v_k]
