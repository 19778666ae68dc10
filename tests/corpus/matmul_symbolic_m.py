# Matmul with a dynamic number of rows m (int64 shapes, as Relax emits).
@T.prim_func
def main(var_A: T.handle, B: T.Buffer((T.int64(4096), T.int64(4096)), "float16"), var_C: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int64()
    A = T.match_buffer(var_A, (m, T.int64(4096)), "float16")
    C = T.match_buffer(var_C, (m, T.int64(4096)), "float16")
    for i, j, k in T.grid(m, T.int64(4096), T.int64(4096)):
        with T.block("matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float16(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
