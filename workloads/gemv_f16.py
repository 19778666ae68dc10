# Matrix-vector product: y[i] = sum_k W[i, k] * x[k], W row-major.
# dtypes: float16 inputs cast to a float32 accumulator, then an epilogue block
# casts to the float16 output. Symbolic: m (rows of W), k.
@T.prim_func
def main(w: T.handle, x_h: T.handle, y_h: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    k = T.int32()
    W = T.match_buffer(w, (m, k), "float16")
    x = T.match_buffer(x_h, (k,), "float16")
    y = T.match_buffer(y_h, (m,), "float16")
    acc = T.alloc_buffer((m,), "float32")
    for i, r in T.grid(m, k):
        with T.block("acc"):
            v_i, v_r = T.axis.remap("SR", [i, r])
            with T.init():
                acc[v_i] = T.float32(0)
            acc[v_i] = acc[v_i] + T.Cast("float32", W[v_i, v_r]) * T.Cast("float32", x[v_r])
    for i in range(m):
        with T.block("y"):
            v_i = T.axis.remap("S", [i])
            y[v_i] = T.Cast("float16", acc[v_i])
