# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def first(A: T.Buffer((8,), "int32"), n: T.int32):
        for i in range(8):
            x: T.int32 = i * 2
            if 0 <= x < n and i != 3:
                A[i] = T.if_then_else(x > 2, x, -x) << 1
            elif i % 2 == 1:
                A[i] = T.floordiv(i, 3) ** 2
            else:
                A[i] = T.let(y, i + 1, y * y)

    @T.prim_func
    def second(A: T.Buffer((), "float16"), B: T.Buffer((4, 4), "float32", strides=(4, 1))):
        with T.block("root"):
            for i in T.vectorized(4):
                with T.sblock("s"):
                    vi = T.axis.spatial((0, 4), i)
                    T.reads()
                    T.writes([B[vi, 0:4]])
                    B[vi, 0] = T.sqrt(T.float32(A[()])) + T.exp2(1e-5) + T.min_value("float32")
