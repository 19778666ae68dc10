# Batched matmul, "nn" per batch: C[p, i, j] = sum_k A[p, i, k] * B[p, k, j].
# The row count m stays symbolic when compiling (a sequence length known only
# at run time); the batch b, n and k are specialised.
# dtypes: float16 inputs cast to a float32 accumulator, then an epilogue block
# casts to the float16 output. Symbolic: b, m, n, k.
@T.prim_func
def main(a: T.handle, b_h: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    b = T.int32()
    m = T.int32()
    n = T.int32()
    k = T.int32()
    A = T.match_buffer(a, (b, m, k), "float16")
    B = T.match_buffer(b_h, (b, k, n), "float16")
    C = T.match_buffer(c, (b, m, n), "float16")
    acc = T.alloc_buffer((b, m, n), "float32")
    for p, i, j, r in T.grid(b, m, n, k):
        with T.block("acc"):
            v_p, v_i, v_j, v_r = T.axis.remap("SSSR", [p, i, j, r])
            with T.init():
                acc[v_p, v_i, v_j] = T.float32(0)
            acc[v_p, v_i, v_j] = acc[v_p, v_i, v_j] + T.Cast("float32", A[v_p, v_i, v_r]) * T.Cast("float32", B[v_p, v_r, v_j])
    for p, i, j in T.grid(b, m, n):
        with T.block("C"):
            v_p, v_i, v_j = T.axis.remap("SSS", [p, i, j])
            C[v_p, v_i, v_j] = T.Cast("float16", acc[v_p, v_i, v_j])
