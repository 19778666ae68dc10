# T.evaluate and scalar parameters of several types.
@T.prim_func
def main(A: T.Buffer((32,), "float32"), n: T.int32, scale: T.float32, flag: T.bool):
    for i in range(32):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            if flag and vi < n:
                A[vi] = A[vi] * scale
            else:
                T.evaluate(0)
