# Block iter vars with explicit (begin, end) domains and non-trivial bindings.
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((32, 64), "float32")):
    for i_0, i_1, j in T.grid(16, 2, 64):
        with T.block("B"):
            vi = T.axis.spatial((0, 32), i_0 * 2 + i_1)
            vj = T.axis.spatial(64, j)
            T.reads(A[vi * 2:vi * 2 + 2, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi * 2, vj] + A[vi * 2 + 1, vj]
