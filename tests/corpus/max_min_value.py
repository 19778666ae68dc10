# Saturating float16 conversion with T.max_value / T.min_value.
@T.prim_func
def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float16"), lo: T.Buffer((1,), "int64")):
    for i in range(1024):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.Cast("float16", T.min(T.max(A[vi], T.Cast("float32", T.min_value("float16"))), T.Cast("float32", T.max_value("float16"))))
    with T.block("lo"):
        T.reads()
        T.writes(lo[0])
        lo[0] = T.min_value("int64")
