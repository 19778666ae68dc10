# T.Select evaluates both arms; clamp and sign with nested selects.
@T.prim_func
def main(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), S: T.Buffer((256,), "int32")):
    for i in range(256):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.Select(A[vi] < T.float32(-1), T.float32(-1), T.Select(A[vi] > T.float32(1), T.float32(1), A[vi]))
            S[vi] = T.Select(A[vi] > T.float32(0), 1, T.Select(A[vi] < T.float32(0), -1, 0))
