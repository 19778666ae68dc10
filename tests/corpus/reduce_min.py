# Row minimum over int32 data.
@T.prim_func
def main(A: T.Buffer((64, 512), "int32"), B: T.Buffer((64,), "int32")):
    for i, k in T.grid(64, 512):
        with T.block("min"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.max_value("int32")
            B[vi] = T.min(B[vi], A[vi, vk])
