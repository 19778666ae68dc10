# Floor and truncating integer division and remainder.
@T.prim_func
def main(A: T.Buffer((64,), "int32"), B: T.Buffer((64, 4), "int32")):
    for i in range(64):
        with T.block("div"):
            vi = T.axis.remap("S", [i])
            B[vi, 0] = A[vi] // 3 + A[vi] % 3
            B[vi, 1] = T.truncdiv(A[vi], 3) + T.truncmod(A[vi], 3)
            B[vi, 2] = T.floordiv(A[vi] - 7, 4) * T.floormod(A[vi], 4)
            B[vi, 3] = (A[vi] + 1) * (A[vi] - (vi - 2)) - -A[vi]
