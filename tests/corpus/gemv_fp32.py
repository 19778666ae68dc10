# Matrix-vector product in float32.
@T.prim_func
def main(A: T.Buffer((4096, 4096), "float32"), x: T.Buffer((4096,), "float32"), y: T.Buffer((4096,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(4096, 4096):
        with T.block("gemv"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk], x[vk])
            T.writes(y[vi])
            with T.init():
                y[vi] = T.float32(0)
            y[vi] = y[vi] + A[vi, vk] * x[vk]
