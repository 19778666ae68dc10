# bfloat16 scale-and-shift with float32 intermediates.
@T.prim_func
def main(A: T.Buffer((512,), "bfloat16"), B: T.Buffer((512,), "bfloat16")):
    for i in range(512):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.Cast("bfloat16", T.Cast("float32", A[vi]) * T.float32(1.5) - T.float32(0.25)) + T.bfloat16(1)
