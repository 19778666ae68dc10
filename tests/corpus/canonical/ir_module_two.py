# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def square(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32")):
        T.func_attr({"global_symbol": "square", "tir.noalias": True})
        for i, j in T.grid(64, 64):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * A[vi, vj]

    @T.prim_func
    def row_sum(B: T.Buffer((64, 64), "float32"), C: T.Buffer((64,), "float32")):
        T.func_attr({"global_symbol": "row_sum", "tir.noalias": True})
        for i, k in T.grid(64, 64):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(C[vi], B[vi, vk])
                T.writes(C[vi])
                with T.init():
                    C[vi] = T.float32(0.0)
                C[vi] = C[vi] + B[vi, vk]
