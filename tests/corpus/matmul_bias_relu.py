# Matmul followed by a bias + ReLU epilogue.
@T.prim_func
def main(A: T.Buffer((512, 256), "float32"), B: T.Buffer((256, 512), "float32"), bias: T.Buffer((512,), "float32"), D: T.Buffer((512, 512), "float32")):
    T.func_attr({"tir.noalias": True})
    C = T.alloc_buffer((512, 512))
    for i, j, k in T.grid(512, 512, 256):
        with T.block("matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_k, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
    for i, j in T.grid(512, 512):
        with T.block("bias_relu"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(C[v_i, v_j], bias[v_j])
            T.writes(D[v_i, v_j])
            D[v_i, v_j] = T.max(C[v_i, v_j] + bias[v_j], T.float32(0))
