# Column sum: reduce the outer axis (the reduction loop is outermost).
@T.prim_func
def main(A: T.Buffer((1024, 128), "float32"), B: T.Buffer((128,), "float32")):
    for k, j in T.grid(1024, 128):
        with T.block("B"):
            vk, vj = T.axis.remap("RS", [k, j])
            with T.init():
                B[vj] = T.float32(0.0)
            B[vj] = B[vj] + A[vk, vj]
