# Bit manipulation of floats through T.reinterpret: absolute value by masking the sign.
@T.prim_func
def main(A: T.Buffer((512,), "float32"), B: T.Buffer((512,), "float32"), H: T.Buffer((512,), "uint16")):
    for i in range(512):
        with T.block("abs"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.reinterpret("float32", T.bitwise_and(T.reinterpret("uint32", A[vi]), T.uint32(2147483647)))
            H[vi] = T.reinterpret("uint16", T.Cast("float16", A[vi]))
