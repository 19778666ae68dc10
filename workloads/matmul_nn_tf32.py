# Matmul of float32 operands on tf32 tensor cores, both row-major ("nn"):
# C[i, j] = sum_k tf32(A[i, k]) * tf32(B[k, j]). The program asks for tf32
# by rounding both factors (T.round_to_tf32: 10 mantissa bits, to nearest,
# ties away), so the products are what tf32 tensor cores compute; the sum
# is float32. Symbolic: m, n, k.
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    n = T.int32()
    k = T.int32()
    A = T.match_buffer(a, (m, k), "float32")
    B = T.match_buffer(b, (k, n), "float32")
    C = T.match_buffer(c, (m, n), "float32")
    for i, j, r in T.grid(m, n, k):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + T.round_to_tf32(A[v_i, v_r]) * T.round_to_tf32(B[v_r, v_j])
