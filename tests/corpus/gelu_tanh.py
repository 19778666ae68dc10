# GELU, tanh approximation, in float16 with float32 math.
@T.prim_func
def main(X: T.Buffer((8, 4096), "float16"), Y: T.Buffer((8, 4096), "float16")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(8, 4096):
        with T.block("gelu"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(X[vi, vj])
            T.writes(Y[vi, vj])
            Y[vi, vj] = T.Cast("float16", T.float32(0.5) * T.Cast("float32", X[vi, vj]) * (T.float32(1.0) + T.tanh(T.float32(0.79788456080286541) * (T.Cast("float32", X[vi, vj]) + T.float32(0.044715) * T.Cast("float32", X[vi, vj]) * T.Cast("float32", X[vi, vj]) * T.Cast("float32", X[vi, vj])))))
