# Loops that start at non-zero values: a stencil over the interior.
@T.prim_func
def main(A: T.Buffer((100, 100), "float32"), B: T.Buffer((100, 100), "float32")):
    for i in range(1, 99):
        for j in T.serial(1, 99):
            with T.block("stencil"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi - 1:vi + 2, vj - 1:vj + 2])
                T.writes(B[vi, vj])
                B[vi, vj] = (A[vi - 1, vj] + A[vi + 1, vj] + A[vi, vj - 1] + A[vi, vj + 1]) * T.float32(0.25)
