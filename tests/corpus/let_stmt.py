# Let statements and let expressions.
@T.prim_func
def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32")):
    for i in range(128):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            x: T.float32 = A[vi] * T.float32(2)
            y: T.int32 = vi * 3 + 1
            B[vi] = x + T.Cast("float32", y) + T.let(t, x * x, t + T.float32(1))
