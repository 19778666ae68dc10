# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
    for i in range(64):
        if i < 32:
            for j in range(64):
                with T.block("upper"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    if vi == vj:
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
                    else:
                        B[vi, vj] = A[vi, vj]
        else:
            for j_1 in range(64):
                with T.block("lower"):
                    vi_1, vj_1 = T.axis.remap("SS", [i, j_1])
                    T.reads(A[vi_1, vj_1])
                    T.writes(B[vi_1, vj_1])
                    if vi_1 % 2 == 0 and vj_1 % 2 == 1:
                        B[vi_1, vj_1] = T.float32(0.0)
                    else:
                        if vi_1 > vj_1:
                            B[vi_1, vj_1] = -A[vi_1, vj_1]
                        else:
                            B[vi_1, vj_1] = A[vi_1, vj_1] - T.float32(1.0)
