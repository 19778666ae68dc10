# ReLU over a 1-d vector, hand-written without reads/writes.
@T.prim_func
def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for i in range(1024):
        with T.block("relu"):
            vi = T.axis.spatial(1024, i)
            B[vi] = T.max(A[vi], T.float32(0))
