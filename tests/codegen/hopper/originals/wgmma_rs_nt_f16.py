# The unscheduled program of ../wgmma_rs_nt_f16.py: C = A B^T, float16 in, float32 out.
# from tvm.script import tir as T


@T.prim_func
def main(
    A: T.Buffer((100, 40), "float16"),
    B: T.Buffer((56, 40), "float16"),
    C: T.Buffer((100, 56), "float32"),
) -> None:
    for i, j, k in T.grid(100, 56, 40):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vj, vk])
