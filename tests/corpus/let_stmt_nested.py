# Lets that are not the tail of their statement list: the printer writes them
# as `with T.LetStmt(value) as x:`, scoping over the indented body only.
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            with T.LetStmt(A[vi] * T.float32(2)) as x:
                B[vi] = x + T.float32(1)
            with T.LetStmt(vi * 3 + 1) as y:
                B[vi] = B[vi] + T.Cast("float32", y)
    for i in range(64):
        with T.LetStmt(i % 8) as x:
            if x == 0:
                with T.LetStmt(T.float32(0.5)) as h:
                    A[i] = h
                A[i] = A[i] * T.float32(2)
        A[i] = A[i] + T.float32(1)
