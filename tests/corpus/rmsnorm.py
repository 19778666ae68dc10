# RMSNorm in float16 with a float32 sum of squares.
@T.prim_func
def main(A: T.Buffer((4, 4096), "float16"), W: T.Buffer((4096,), "float16"), B: T.Buffer((4, 4096), "float16")):
    T.func_attr({"tir.noalias": True})
    sq = T.alloc_buffer((4,))
    for i, k in T.grid(4, 4096):
        with T.block("sq_sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(sq[vi])
            with T.init():
                sq[vi] = T.float32(0)
            sq[vi] = sq[vi] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", A[vi, vk])
    for i, j in T.grid(4, 4096):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], W[vj], sq[vi])
            T.writes(B[vi, vj])
            B[vi, vj] = T.Cast("float16", T.Cast("float32", A[vi, vj]) * T.rsqrt(sq[vi] / T.float32(4096) + T.float32(9.9999999999999995e-07))) * W[vj]
