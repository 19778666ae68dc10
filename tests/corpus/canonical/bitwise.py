# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((256,), "int32"), B: T.Buffer((256,), "int32"), C: T.Buffer((256,), "uint8")):
    for i in range(256):
        with T.block("bits"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi])
            T.writes(B[vi], C[vi])
            B[vi] = (A[vi] << 3 | A[vi] >> 29) ^ ~A[vi] & 255
            C[vi] = T.Cast("uint8", vi) & T.uint8(15) | T.Cast("uint8", vi) >> T.uint8(4)
