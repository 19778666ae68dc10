# The unscheduled program of ../tma_store_scale.py: B = 2 A, float32.
# from tvm.script import tir as T


@T.prim_func
def main(A: T.Buffer((40, 72), "float32"), B: T.Buffer((40, 72), "float32")) -> None:
    for i, j in T.grid(40, 72):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2.0)
