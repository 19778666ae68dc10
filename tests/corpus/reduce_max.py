# Row maximum, starting from the lowest float.
@T.prim_func
def main(A: T.Buffer((64, 512), "float32"), B: T.Buffer((64,), "float32")):
    for i, k in T.grid(64, 512):
        with T.block("max"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.min_value("float32")
            B[vi] = T.max(B[vi], A[vi, vk])
