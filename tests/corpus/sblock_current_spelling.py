# The current TVM spelling: T.sblock, T.sblock_alloc_buffer and "tirx.noalias".
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "main", "tirx.noalias": True})
    with T.sblock("root"):
        T.reads()
        T.writes()
        tmp = T.sblock_alloc_buffer((128, 128))
        for i, j in T.grid(128, 128):
            with T.sblock("tmp"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(tmp[vi, vj])
                tmp[vi, vj] = A[vi, vj] * T.float32(2)
        for i, k in T.grid(128, 128):
            with T.sblock("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(tmp[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + tmp[vi, vk]
