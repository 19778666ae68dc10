# A matmul scheduled the way TVM's dlight tiles registers: virtual threads
# (vthread.x/y) interleave 2x2 sub-tiles into each real thread, whose C_local
# holds one element per virtual thread. Lowering runs the virtual threads one
# after the other inside each thread (lower_virtual_threads).
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    C_local = T.alloc_buffer((64, 64), scope="local")
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for vy in T.thread_binding(2, thread="vthread.y"):
                for vx in T.thread_binding(2, thread="vthread.x"):
                    for ty in T.thread_binding(16, thread="threadIdx.y"):
                        for tx in T.thread_binding(16, thread="threadIdx.x"):
                            for k in range(64):
                                with T.block("C"):
                                    vi = T.axis.spatial(64, by * 32 + vy * 16 + ty)
                                    vj = T.axis.spatial(64, bx * 32 + vx * 16 + tx)
                                    vk = T.axis.reduce(64, k)
                                    T.reads(A[vi, vk], B[vk, vj])
                                    T.writes(C_local[vi, vj])
                                    with T.init():
                                        C_local[vi, vj] = T.float32(0)
                                    C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
                            with T.block("C_local"):
                                vi = T.axis.spatial(64, by * 32 + vy * 16 + ty)
                                vj = T.axis.spatial(64, bx * 32 + vx * 16 + tx)
                                T.reads(C_local[vi, vj])
                                T.writes(C[vi, vj])
                                C[vi, vj] = C_local[vi, vj]
