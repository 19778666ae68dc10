# Parallel outer loop, unrolled middle loop, vectorised inner loop.
@T.prim_func
def main(A: T.Buffer((64, 16, 4), "float16"), B: T.Buffer((64, 16, 4), "float16")):
    for i in T.parallel(64):
        for j in T.unroll(16):
            for k in T.vectorized(4):
                with T.block("B"):
                    vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                    T.reads(A[vi, vj, vk])
                    T.writes(B[vi, vj, vk])
                    B[vi, vj, vk] = A[vi, vj, vk] * T.float16(0.5)
