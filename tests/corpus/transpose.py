# 2-d transpose.
@T.prim_func
def main(A: T.Buffer((256, 512), "float32"), B: T.Buffer((512, 256), "float32")):
    for i, j in T.grid(512, 256):
        with T.block("T_transpose"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_j, v_i])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_j, v_i]
