# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128,), "float32")):
    T.func_attr({"global_symbol": "main", "tirx.noalias": True})
    tmp = T.alloc_buffer((128, 128))
    for i, j in T.grid(128, 128):
        with T.block("tmp"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(tmp[vi, vj])
            tmp[vi, vj] = A[vi, vj] * T.float32(2.0)
    for i_1, k in T.grid(128, 128):
        with T.block("B"):
            vi_1, vk = T.axis.remap("SR", [i_1, k])
            T.reads(tmp[vi_1, vk])
            T.writes(B[vi_1])
            with T.init():
                B[vi_1] = T.float32(0.0)
            B[vi_1] = B[vi_1] + tmp[vi_1, vk]
