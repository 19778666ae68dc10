# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((37, 130), "float16"), bias: T.Buffer((130,), "float16"), C: T.Buffer((37, 130), "float16")):
    T.func_attr({"tir.noalias": True})
    for bx in T.thread_binding(10, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            for vec in T.vectorized(2):
                with T.block("C"):
                    v_i = T.axis.spatial(37, (bx * 256 + tx) // 65)
                    v_j = T.axis.spatial(130, (bx * 61 + tx) % 65 * 2 + vec)
                    T.where(bx * 512 + tx * 2 + vec < 4810)
                    T.reads(A[v_i, v_j], bias[v_j])
                    T.writes(C[v_i, v_j])
                    C[v_i, v_j] = A[v_i, v_j] + bias[v_j]
