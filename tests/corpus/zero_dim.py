# A 0-d buffer: the sum of all elements of a vector into a scalar.
@T.prim_func
def main(A: T.Buffer((4096,), "float32"), S: T.Buffer((), "float32")):
    for k in range(4096):
        with T.block("sum"):
            vk = T.axis.reduce(4096, k)
            T.reads(A[vk])
            T.writes(S[()])
            with T.init():
                S[()] = T.float32(0)
            S[()] = S[()] + A[vk]
