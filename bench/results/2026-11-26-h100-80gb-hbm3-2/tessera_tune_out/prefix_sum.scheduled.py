# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100,), "float16"), B: T.Buffer((100,), "float16")):
    B[0] = T.float16(0.0)
    for serial_block in T.thread_binding(1, thread="blockIdx.x"):
        for serial_thread in T.thread_binding(1, thread="threadIdx.x"):
            for i_ in range(99):
                with T.block("block"):
                    i = T.axis.remap("R", [i_])
                    T.reads(B[i], A[i + 1])
                    T.writes(B[i + 1])
                    B[i + 1] = B[i] + A[i + 1]
