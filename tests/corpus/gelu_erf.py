# GELU with erf: 0.5 * x * (1 + erf(x / sqrt(2))).
@T.prim_func
def main(X: T.Buffer((4, 3072), "float32"), Y: T.Buffer((4, 3072), "float32")):
    T.func_attr({"tir.noalias": True})
    for i0, i1 in T.grid(4, 3072):
        with T.block("gelu"):
            v0, v1 = T.axis.remap("SS", [i0, i1])
            T.reads(X[v0, v1])
            T.writes(Y[v0, v1])
            Y[v0, v1] = T.float32(0.5) * X[v0, v1] * (T.float32(1) + T.erf(X[v0, v1] * T.float32(0.70710678118654757)))
