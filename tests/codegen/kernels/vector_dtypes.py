# One vectorized loop per access width and dtype: float32 -> float16 (16
# lanes: four float4 loads, two uint4 stores), bfloat16 pairs (__nv_bfloat162),
# 16 int8 (uint4), 2 int8 (unsigned short) and packed int4 pairs in uint8
# bytes, nibbles swapped (unsigned int).
@T.prim_func
def main(F: T.Buffer((65536,), "float32"), H: T.Buffer((65536,), "float16"), X: T.Buffer((8192,), "bfloat16"), Y: T.Buffer((8192,), "bfloat16"), I: T.Buffer((65536,), "int8"), J: T.Buffer((65536,), "int8"), K: T.Buffer((8192,), "int8"), P: T.Buffer((16384,), "uint8"), Q: T.Buffer((16384,), "uint8")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(64, thread="blockIdx.x"):
        for i_1 in T.thread_binding(64, thread="threadIdx.x"):
            for v in T.vectorized(16):
                with T.block("H"):
                    vi = T.axis.spatial(65536, i_0 * 1024 + i_1 * 16 + v)
                    H[vi] = T.Cast("float16", F[vi])
            for v in T.vectorized(2):
                with T.block("Y"):
                    vi = T.axis.spatial(8192, i_0 * 128 + i_1 * 2 + v)
                    Y[vi] = X[vi] * X[vi] + T.bfloat16(1)
            for v in T.vectorized(16):
                with T.block("J"):
                    vi = T.axis.spatial(65536, i_0 * 1024 + i_1 * 16 + v)
                    J[vi] = I[vi] + T.int8(1)
            for v in T.vectorized(2):
                with T.block("K"):
                    vi = T.axis.spatial(8192, i_0 * 128 + i_1 * 2 + v)
                    K[vi] = I[vi] * T.int8(2)
            for v in T.vectorized(4):
                with T.block("Q"):
                    vi = T.axis.spatial(16384, i_0 * 256 + i_1 * 4 + v)
                    Q[vi] = T.shift_right(P[vi], T.uint8(4)) | T.shift_left(P[vi], T.uint8(4))
