# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100, 100), "float16")):
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(256, thread="threadIdx.x"):
            if (bx * 256 + tx) % 2 == 0:
                for j in range(100):
                    with T.block("block1"):
                        T.where(tx < 100)
                        T.reads()
                        T.writes(A[bx * 256 + tx, j])
                        A[bx * 256 + tx, j] = T.float16(1.0)
            else:
                for j_1 in range(100):
                    with T.block("block2"):
                        T.where(tx < 100)
                        T.reads()
                        T.writes(A[bx * 256 + tx, j_1])
                        A[bx * 256 + tx, j_1] = T.float16(2.0)
