# Broadcast a bias vector over the rows of a matrix.
@T.prim_func
def main(A: T.Buffer((32, 768), "float16"), bias: T.Buffer((768,), "float16"), B: T.Buffer((32, 768), "float16")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(32, 768):
        with T.block("T_add"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], bias[v_j])
            T.writes(B[v_i, v_j])
            B[v_i, v_j] = A[v_i, v_j] + bias[v_j]
