# If/else statements on loop variables inside and outside blocks.
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i in range(64):
        if i < 32:
            for j in range(64):
                with T.block("upper"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    if vi == vj:
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                    else:
                        B[vi, vj] = A[vi, vj]
        else:
            for j in range(64):
                with T.block("lower"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    if vi % 2 == 0 and vj % 2 == 1:
                        B[vi, vj] = T.float32(0)
                    else:
                        if vi > vj:
                            B[vi, vj] = -A[vi, vj]
                        else:
                            B[vi, vj] = A[vi, vj] - T.float32(1)
