# Row sum: reduce the inner axis.
@T.prim_func
def main(A: T.Buffer((128, 1024), "float32"), B: T.Buffer((128,), "float32")):
    for i, k in T.grid(128, 1024):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
