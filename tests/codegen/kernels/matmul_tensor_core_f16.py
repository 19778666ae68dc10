# A float16 matmul (100 x 76 x 48, float32 out) as the matmul_tensor_core rule schedules it
# at block 64 x 64 x 32, 2 x 2 warps, 3 stages: cp.async pipeline, ldmatrix (.trans for B), mma.sync.
# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((100, 48), "float16"), B: T.Buffer((48, 76), "float16"), C: T.Buffer((100, 76), "float32")):
    for by in T.thread_binding((100 + 63) // 64, thread="blockIdx.y"):
        for bx in T.thread_binding((76 + 63) // 64, thread="blockIdx.x"):
            with T.block("matmul_tensor_core"):
                T.reads()
                T.writes()
                A_shared = T.alloc_buffer((3, 64, 40), "float16", scope="shared")
                B_shared = T.alloc_buffer((3, 32, 72), "float16", scope="shared")
                A_frag = T.alloc_buffer((4, 32, 16), "float16", scope="warp")
                B_frag = T.alloc_buffer((4, 32, 16), "float16", scope="warp")
                C_frag = T.alloc_buffer((4, 32, 32), scope="warp")
                for ty in T.thread_binding(4, thread="threadIdx.y"):
                    for tx in T.thread_binding(32, thread="threadIdx.x"):
                        for e in T.unroll(32):
                            C_frag[ty, tx, e] = T.float32(0.0)
                for ty_1 in T.thread_binding(4, thread="threadIdx.y"):
                    for tx_1 in T.thread_binding(32, thread="threadIdx.x"):
                        for c in T.unroll(2):
                            T.evaluate(T.cp_async(A_shared[0, (c * 128 + ty_1 * 32 + tx_1) // 4, (c * 128 + ty_1 * 32 + tx_1) % 4 * 8], A[by * 64 + (c * 128 + ty_1 * 32 + tx_1) // 4, 0 * 32 + (c * 128 + ty_1 * 32 + tx_1) % 4 * 8], 16, T.Select(by * 64 + (c * 128 + ty_1 * 32 + tx_1) // 4 < 100 and 0 * 32 + (c * 128 + ty_1 * 32 + tx_1) % 4 * 8 < 48, 16, 0)))
                for ty_2 in T.thread_binding(4, thread="threadIdx.y"):
                    for tx_2 in T.thread_binding(32, thread="threadIdx.x"):
                        for c_1 in T.unroll(4):
                            T.evaluate(T.cp_async(B_shared[0, (c_1 * 128 + ty_2 * 32 + tx_2) // 16, (c_1 * 128 + ty_2 * 32 + tx_2) % 16 * 4], B[0 * 32 + (c_1 * 128 + ty_2 * 32 + tx_2) // 16, bx * 64 + (c_1 * 128 + ty_2 * 32 + tx_2) % 16 * 4], 8, T.Select(bx * 64 + (c_1 * 128 + ty_2 * 32 + tx_2) % 16 * 4 < 76 and 0 * 32 + (c_1 * 128 + ty_2 * 32 + tx_2) // 16 < 48, 8, 0)))
                T.evaluate(T.cp_async_commit_group())
                for ty_3 in T.thread_binding(4, thread="threadIdx.y"):
                    for tx_3 in T.thread_binding(32, thread="threadIdx.x"):
                        for c_2 in T.unroll(2):
                            T.evaluate(T.cp_async(A_shared[1, (c_2 * 128 + ty_3 * 32 + tx_3) // 4, (c_2 * 128 + ty_3 * 32 + tx_3) % 4 * 8], A[by * 64 + (c_2 * 128 + ty_3 * 32 + tx_3) // 4, 1 * 32 + (c_2 * 128 + ty_3 * 32 + tx_3) % 4 * 8], 16, T.Select(by * 64 + (c_2 * 128 + ty_3 * 32 + tx_3) // 4 < 100 and 1 * 32 + (c_2 * 128 + ty_3 * 32 + tx_3) % 4 * 8 < 48, 16, 0)))
                for ty_4 in T.thread_binding(4, thread="threadIdx.y"):
                    for tx_4 in T.thread_binding(32, thread="threadIdx.x"):
                        for c_3 in T.unroll(4):
                            T.evaluate(T.cp_async(B_shared[1, (c_3 * 128 + ty_4 * 32 + tx_4) // 16, (c_3 * 128 + ty_4 * 32 + tx_4) % 16 * 4], B[1 * 32 + (c_3 * 128 + ty_4 * 32 + tx_4) // 16, bx * 64 + (c_3 * 128 + ty_4 * 32 + tx_4) % 16 * 4], 8, T.Select(bx * 64 + (c_3 * 128 + ty_4 * 32 + tx_4) % 16 * 4 < 76 and 1 * 32 + (c_3 * 128 + ty_4 * 32 + tx_4) // 16 < 48, 8, 0)))
                T.evaluate(T.cp_async_commit_group())
                for ko in range((48 + 31) // 32):
                    T.evaluate(T.cp_async_wait_group(1))
                    T.evaluate(T.syncthreads())
                    for ty_5 in T.thread_binding(4, thread="threadIdx.y"):
                        for tx_5 in T.thread_binding(32, thread="threadIdx.x"):
                            for c_4 in T.unroll(2):
                                T.evaluate(T.cp_async(A_shared[(ko + 2) % 3, (c_4 * 128 + ty_5 * 32 + tx_5) // 4, (c_4 * 128 + ty_5 * 32 + tx_5) % 4 * 8], A[by * 64 + (c_4 * 128 + ty_5 * 32 + tx_5) // 4, (ko + 2) * 32 + (c_4 * 128 + ty_5 * 32 + tx_5) % 4 * 8], 16, T.Select(by * 64 + (c_4 * 128 + ty_5 * 32 + tx_5) // 4 < 100 and (ko + 2) * 32 + (c_4 * 128 + ty_5 * 32 + tx_5) % 4 * 8 < 48, 16, 0)))
                    for ty_6 in T.thread_binding(4, thread="threadIdx.y"):
                        for tx_6 in T.thread_binding(32, thread="threadIdx.x"):
                            for c_5 in T.unroll(4):
                                T.evaluate(T.cp_async(B_shared[(ko + 2) % 3, (c_5 * 128 + ty_6 * 32 + tx_6) // 16, (c_5 * 128 + ty_6 * 32 + tx_6) % 16 * 4], B[(ko + 2) * 32 + (c_5 * 128 + ty_6 * 32 + tx_6) // 16, bx * 64 + (c_5 * 128 + ty_6 * 32 + tx_6) % 16 * 4], 8, T.Select(bx * 64 + (c_5 * 128 + ty_6 * 32 + tx_6) % 16 * 4 < 76 and (ko + 2) * 32 + (c_5 * 128 + ty_6 * 32 + tx_6) // 16 < 48, 8, 0)))
                    T.evaluate(T.cp_async_commit_group())
                    for ty_7 in T.thread_binding(4, thread="threadIdx.y"):
                        for tx_7 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi in T.unroll(2):
                                T.evaluate(T.ldmatrix(0, 4, A_frag[ty_7, tx_7, mi * 8], A_shared[ko % 3, ty_7 // 2 * 32 + mi * 16 + tx_7 // 8 % 2 * 8 + tx_7 % 8, 0 + tx_7 // 8 // 2 * 8], tx_7))
                    for ty_8 in T.thread_binding(4, thread="threadIdx.y"):
                        for tx_8 in T.thread_binding(32, thread="threadIdx.x"):
                            for nj in T.unroll(2):
                                T.evaluate(T.ldmatrix(1, 4, B_frag[ty_8, tx_8, nj * 8], B_shared[ko % 3, 0 + tx_8 // 8 % 2 * 8 + tx_8 % 8, ty_8 % 2 * 32 + nj * 16 + tx_8 // 8 // 2 * 8], tx_8))
                    for ty_9 in T.thread_binding(4, thread="threadIdx.y"):
                        for tx_9 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_1 in T.unroll(2):
                                for ni in T.unroll(4):
                                    T.evaluate(T.mma_sync("m16n8k16", C_frag[ty_9, tx_9, (mi_1 * 4 + ni) * 4], A_frag[ty_9, tx_9, mi_1 * 8], B_frag[ty_9, tx_9, ni * 4], tx_9))
                    for ty_10 in T.thread_binding(4, thread="threadIdx.y"):
                        for tx_10 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_2 in T.unroll(2):
                                T.evaluate(T.ldmatrix(0, 4, A_frag[ty_10, tx_10, mi_2 * 8], A_shared[ko % 3, ty_10 // 2 * 32 + mi_2 * 16 + tx_10 // 8 % 2 * 8 + tx_10 % 8, 16 + tx_10 // 8 // 2 * 8], tx_10))
                    for ty_11 in T.thread_binding(4, thread="threadIdx.y"):
                        for tx_11 in T.thread_binding(32, thread="threadIdx.x"):
                            for nj_1 in T.unroll(2):
                                T.evaluate(T.ldmatrix(1, 4, B_frag[ty_11, tx_11, nj_1 * 8], B_shared[ko % 3, 16 + tx_11 // 8 % 2 * 8 + tx_11 % 8, ty_11 % 2 * 32 + nj_1 * 16 + tx_11 // 8 // 2 * 8], tx_11))
                    for ty_12 in T.thread_binding(4, thread="threadIdx.y"):
                        for tx_12 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_3 in T.unroll(2):
                                for ni_1 in T.unroll(4):
                                    T.evaluate(T.mma_sync("m16n8k16", C_frag[ty_12, tx_12, (mi_3 * 4 + ni_1) * 4], A_frag[ty_12, tx_12, mi_3 * 8], B_frag[ty_12, tx_12, ni_1 * 4], tx_12))
                T.evaluate(T.cp_async_wait_group(0))
                for ty_13 in T.thread_binding(4, thread="threadIdx.y"):
                    for tx_13 in T.thread_binding(32, thread="threadIdx.x"):
                        for mi_4 in T.unroll(2):
                            for ni_2 in T.unroll(4):
                                for e_1 in T.unroll(4):
                                    if by * 64 + ty_13 // 2 * 32 + mi_4 * 16 + tx_13 // 4 + e_1 // 2 * 8 < 100 and bx * 64 + ty_13 % 2 * 32 + ni_2 * 8 + tx_13 % 4 * 2 + e_1 % 2 < 76:
                                        C[by * 64 + ty_13 // 2 * 32 + mi_4 * 16 + tx_13 // 4 + e_1 // 2 * 8, bx * 64 + ty_13 % 2 * 32 + ni_2 * 8 + tx_13 % 4 * 2 + e_1 % 2] = C_frag[ty_13, tx_13, (mi_4 * 4 + ni_2) * 4 + e_1]
