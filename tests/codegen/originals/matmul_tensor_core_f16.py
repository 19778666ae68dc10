# The unscheduled program of kernels/matmul_tensor_core_f16.py: its float64 reference
# (the tensor-core intrinsics have no float64 model of their own).
@T.prim_func
def main(A: T.Buffer((100, 48), "float16"), B: T.Buffer((48, 76), "float16"), C: T.Buffer((100, 76), "float32")) -> None:
    for i, j, k in T.grid(100, 76, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
