# A tour of math intrinsics.
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), F: T.Buffer((64,), "bool")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.sqrt(T.fabs(A[vi])) + T.log(T.exp(A[vi])) + T.pow(A[vi], T.float32(2)) + T.floor(A[vi]) + T.ceil(A[vi]) + T.round(A[vi]) + T.trunc(A[vi]) + T.exp2(A[vi]) + T.log2(T.exp2(A[vi])) + T.log1p(T.fabs(A[vi])) + T.sin(A[vi]) * T.cos(A[vi])
            F[vi] = T.isnan(A[vi]) or T.isinf(A[vi]) or not T.isfinite(A[vi])
