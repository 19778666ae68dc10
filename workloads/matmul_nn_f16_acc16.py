# Matmul accumulated in float16, as TVM prints te.compute matmuls of float16
# tensors: C[i, j] = C[i, j] + A[i, k] * B[k, j], all float16 ("nn"). The
# tensor-core rule may keep float16 accumulators (acc_bytes 2) where the
# GPU runs them faster than float32 ones. Symbolic: m, n, k.
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    k = T.int32()
    A = T.match_buffer(a, (m, k), "float16")
    B = T.match_buffer(b, (k, n), "float16")
    C = T.match_buffer(c, (m, n), "float16")
    for i, j, r in T.grid(m, n, k):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = T.float16(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_r] * B[v_r, v_j]
