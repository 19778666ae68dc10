# bfloat16 elementwise with math intrinsics (exp, rsqrt, tanh through float)
# and a floor modulo on a possibly negative index (the helper function).
@T.prim_func
def main(A: T.Buffer((65536,), "bfloat16"), B: T.Buffer((65536,), "bfloat16")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(256, thread="blockIdx.x"):
        for i_1 in T.thread_binding(256, thread="threadIdx.x"):
            with T.block("B"):
                v_i = T.axis.spatial(65536, i_0 * 256 + i_1)
                B[v_i] = T.exp(A[(v_i - 3) % 65536]) + T.rsqrt(A[v_i] * A[v_i] + T.bfloat16(1)) * T.tanh(A[v_i])
