# Int8 x int8 dot products accumulated in int32, requantised to uint8.
@T.prim_func
def main(A: T.Buffer((64, 64), "int8"), B: T.Buffer((64, 64), "int8"), C: T.Buffer((64, 64), "uint8")):
    acc = T.alloc_buffer((64, 64), "int32")
    for i, j, k in T.grid(64, 64, 64):
        with T.block("acc"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                acc[vi, vj] = 0
            acc[vi, vj] = acc[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vk, vj])
    for i, j in T.grid(64, 64):
        with T.block("requant"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.Cast("uint8", T.max(T.min(acc[vi, vj] // 256 + 128, 255), 0))
