# An opaque block with explicit regions, nested blocks and an opaque iter var.
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i in range(16):
        with T.block("row"):
            vi = T.axis.opaque(16, i)
            T.reads(A[vi, 0:16])
            T.writes(B[vi, 0:16])
            acc = T.alloc_buffer((1,), scope="local")
            acc[0] = T.float32(0)
            for j in range(16):
                with T.block("prefix"):
                    vj = T.axis.remap("S", [j])
                    T.reads(acc[0], A[vi, vj])
                    T.writes(acc[0], B[vi, vj])
                    acc[0] = acc[0] + A[vi, vj]
                    B[vi, vj] = acc[0]
