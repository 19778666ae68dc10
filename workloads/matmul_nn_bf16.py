# Matmul in bfloat16, both operands row-major ("nn"): C[i, j] = sum_k A[i, k] * B[k, j].
# dtypes: bfloat16 inputs cast to a float32 accumulator, then an epilogue block
# casts to the bfloat16 output. Symbolic: m, n, k.
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    k = T.int32()
    A = T.match_buffer(a, (m, k), "bfloat16")
    B = T.match_buffer(b, (k, n), "bfloat16")
    C = T.match_buffer(c, (m, n), "bfloat16")
    acc = T.alloc_buffer((m, n), "float32")
    for i, j, r in T.grid(m, n, k):
        with T.block("acc"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                acc[v_i, v_j] = T.float32(0)
            acc[v_i, v_j] = acc[v_i, v_j] + T.Cast("float32", A[v_i, v_r]) * T.Cast("float32", B[v_r, v_j])
    for i, j in T.grid(m, n):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            C[v_i, v_j] = T.Cast("bfloat16", acc[v_i, v_j])
