# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((37, 130), "float32"), B: T.Buffer((37,), "float32")):
    T.func_attr({"tir.noalias": True})
    for bx in T.thread_binding(19, thread="blockIdx.x"):
        for ry in T.thread_binding(2, thread="threadIdx.y"):
            for k_t in T.thread_binding(32, thread="threadIdx.x"):
                for k_o in T.unroll(5):
                    with T.block("B"):
                        v_i = T.axis.spatial(37, bx * 2 + ry)
                        v_k = T.axis.reduce(130, k_o * 32 + k_t)
                        T.where(bx * 2 + ry < 37 and k_o * 32 + k_t < 130)
                        T.reads(B[v_i], A[v_i, v_k])
                        T.writes(B[v_i])
                        with T.init():
                            B[v_i] = T.float32(0.0)
                        B[v_i] = B[v_i] + A[v_i, v_k]
