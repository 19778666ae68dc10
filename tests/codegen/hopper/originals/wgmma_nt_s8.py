# The unscheduled program of ../wgmma_nt_s8.py: C = A B^T, int8 in, int32 out.
# from tvm.script import tir as T


@T.prim_func
def main(
    A: T.Buffer((100, 100), "int8"),
    B: T.Buffer((56, 100), "int8"),
    C: T.Buffer((100, 56), "int32"),
) -> None:
    for i, j, k in T.grid(100, 56, 100):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = 0
            C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vj, vk])
