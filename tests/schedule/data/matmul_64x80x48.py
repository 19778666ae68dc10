# C = A @ B, 64x80x48 float32: the matmul of the trace example
# (matmul_trace.json). The reduction block lists its regions explicitly, as
# TVM prints them, so that read buffer 0 is A.
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
