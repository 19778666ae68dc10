# Dynamic length n as an int32 symbolic variable; a scalar parameter as well.
@T.prim_func
def main(var_A: T.handle, var_B: T.handle, alpha: T.float32):
    n = T.int32()
    A = T.match_buffer(var_A, (n,))
    B = T.match_buffer(var_B, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * alpha
