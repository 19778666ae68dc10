# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4096, 4096), "float16"), B: T.Buffer((4096, 4096), "float16"), C: T.Buffer((4096, 4096), "float16")):
    T.func_attr({"tir.noalias": True})
    for by in T.thread_binding((4096 + 127) // 128, thread="blockIdx.y"):
        for bx in T.thread_binding((4096 + 255) // 256, thread="blockIdx.x"):
            with T.block("matmul_tensor_core"):
                T.reads(A[0:4096, 0:4096], B[0:4096, 0:4096])
                T.writes(C[0:4096, 0:4096])
                A_shared = T.alloc_buffer((3, 128, 72), "float16", scope="shared")
                B_shared = T.alloc_buffer((3, 64, 264), "float16", scope="shared")
                A_frag = T.alloc_buffer((8, 32, 32), "float16", scope="warp")
                B_frag = T.alloc_buffer((8, 32, 32), "float16", scope="warp")
                C_frag = T.alloc_buffer((8, 32, 128), scope="warp")
                for ty in T.thread_binding(8, thread="threadIdx.y"):
                    for tx in T.thread_binding(32, thread="threadIdx.x"):
                        for e in T.unroll(128):
                            C_frag[ty, tx, e] = T.float32(0.0)
                for ty_1 in T.thread_binding(8, thread="threadIdx.y"):
                    for tx_1 in T.thread_binding(32, thread="threadIdx.x"):
                        for c in T.unroll(4):
                            T.evaluate(T.cp_async(A_shared[0, (c * 256 + ty_1 * 32 + tx_1) // 8, (c * 256 + ty_1 * 32 + tx_1) % 8 * 8], A[by * 128 + (c * 256 + ty_1 * 32 + tx_1) // 8, 0 * 64 + (c * 256 + ty_1 * 32 + tx_1) % 8 * 8], 16, T.Select(by * 128 + (c * 256 + ty_1 * 32 + tx_1) // 8 < 4096 and 0 * 64 + (c * 256 + ty_1 * 32 + tx_1) % 8 * 8 < 4096, 16, 0)))
                for ty_2 in T.thread_binding(8, thread="threadIdx.y"):
                    for tx_2 in T.thread_binding(32, thread="threadIdx.x"):
                        for c_1 in T.unroll(8):
                            T.evaluate(T.cp_async(B_shared[0, (c_1 * 256 + ty_2 * 32 + tx_2) // 32, (c_1 * 256 + ty_2 * 32 + tx_2) % 32 * 8], B[0 * 64 + (c_1 * 256 + ty_2 * 32 + tx_2) // 32, bx * 256 + (c_1 * 256 + ty_2 * 32 + tx_2) % 32 * 8], 16, T.Select(bx * 256 + (c_1 * 256 + ty_2 * 32 + tx_2) % 32 * 8 < 4096 and 0 * 64 + (c_1 * 256 + ty_2 * 32 + tx_2) // 32 < 4096, 16, 0)))
                T.evaluate(T.cp_async_commit_group())
                for ty_3 in T.thread_binding(8, thread="threadIdx.y"):
                    for tx_3 in T.thread_binding(32, thread="threadIdx.x"):
                        for c_2 in T.unroll(4):
                            T.evaluate(T.cp_async(A_shared[1, (c_2 * 256 + ty_3 * 32 + tx_3) // 8, (c_2 * 256 + ty_3 * 32 + tx_3) % 8 * 8], A[by * 128 + (c_2 * 256 + ty_3 * 32 + tx_3) // 8, 1 * 64 + (c_2 * 256 + ty_3 * 32 + tx_3) % 8 * 8], 16, T.Select(by * 128 + (c_2 * 256 + ty_3 * 32 + tx_3) // 8 < 4096 and 1 * 64 + (c_2 * 256 + ty_3 * 32 + tx_3) % 8 * 8 < 4096, 16, 0)))
                for ty_4 in T.thread_binding(8, thread="threadIdx.y"):
                    for tx_4 in T.thread_binding(32, thread="threadIdx.x"):
                        for c_3 in T.unroll(8):
                            T.evaluate(T.cp_async(B_shared[1, (c_3 * 256 + ty_4 * 32 + tx_4) // 32, (c_3 * 256 + ty_4 * 32 + tx_4) % 32 * 8], B[1 * 64 + (c_3 * 256 + ty_4 * 32 + tx_4) // 32, bx * 256 + (c_3 * 256 + ty_4 * 32 + tx_4) % 32 * 8], 16, T.Select(bx * 256 + (c_3 * 256 + ty_4 * 32 + tx_4) % 32 * 8 < 4096 and 1 * 64 + (c_3 * 256 + ty_4 * 32 + tx_4) // 32 < 4096, 16, 0)))
                T.evaluate(T.cp_async_commit_group())
                for ko in range((4096 + 63) // 64):
                    T.evaluate(T.cp_async_wait_group(1))
                    T.evaluate(T.syncthreads())
                    for ty_5 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_5 in T.thread_binding(32, thread="threadIdx.x"):
                            for c_4 in T.unroll(4):
                                T.evaluate(T.cp_async(A_shared[(ko + 2) % 3, (c_4 * 256 + ty_5 * 32 + tx_5) // 8, (c_4 * 256 + ty_5 * 32 + tx_5) % 8 * 8], A[by * 128 + (c_4 * 256 + ty_5 * 32 + tx_5) // 8, (ko + 2) * 64 + (c_4 * 256 + ty_5 * 32 + tx_5) % 8 * 8], 16, T.Select(by * 128 + (c_4 * 256 + ty_5 * 32 + tx_5) // 8 < 4096 and (ko + 2) * 64 + (c_4 * 256 + ty_5 * 32 + tx_5) % 8 * 8 < 4096, 16, 0)))
                    for ty_6 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_6 in T.thread_binding(32, thread="threadIdx.x"):
                            for c_5 in T.unroll(8):
                                T.evaluate(T.cp_async(B_shared[(ko + 2) % 3, (c_5 * 256 + ty_6 * 32 + tx_6) // 32, (c_5 * 256 + ty_6 * 32 + tx_6) % 32 * 8], B[(ko + 2) * 64 + (c_5 * 256 + ty_6 * 32 + tx_6) // 32, bx * 256 + (c_5 * 256 + ty_6 * 32 + tx_6) % 32 * 8], 16, T.Select(bx * 256 + (c_5 * 256 + ty_6 * 32 + tx_6) % 32 * 8 < 4096 and (ko + 2) * 64 + (c_5 * 256 + ty_6 * 32 + tx_6) // 32 < 4096, 16, 0)))
                    T.evaluate(T.cp_async_commit_group())
                    for ty_7 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_7 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi in T.unroll(4):
                                T.evaluate(T.ldmatrix(0, 4, A_frag[ty_7, tx_7, mi * 8], A_shared[ko % 3, ty_7 // 4 * 64 + mi * 16 + tx_7 // 8 % 2 * 8 + tx_7 % 8, 0 + tx_7 // 8 // 2 * 8], tx_7))
                    for ty_8 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_8 in T.thread_binding(32, thread="threadIdx.x"):
                            for nj in T.unroll(4):
                                T.evaluate(T.ldmatrix(1, 4, B_frag[ty_8, tx_8, nj * 8], B_shared[ko % 3, 0 + tx_8 // 8 % 2 * 8 + tx_8 % 8, ty_8 % 4 * 64 + nj * 16 + tx_8 // 8 // 2 * 8], tx_8))
                    for ty_9 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_9 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_1 in T.unroll(4):
                                for ni in T.unroll(8):
                                    T.evaluate(T.mma_sync("m16n8k16", C_frag[ty_9, tx_9, (mi_1 * 8 + ni) * 4], A_frag[ty_9, tx_9, mi_1 * 8], B_frag[ty_9, tx_9, ni * 4], tx_9))
                    for ty_10 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_10 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_2 in T.unroll(4):
                                T.evaluate(T.ldmatrix(0, 4, A_frag[ty_10, tx_10, mi_2 * 8], A_shared[ko % 3, ty_10 // 4 * 64 + mi_2 * 16 + tx_10 // 8 % 2 * 8 + tx_10 % 8, 16 + tx_10 // 8 // 2 * 8], tx_10))
                    for ty_11 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_11 in T.thread_binding(32, thread="threadIdx.x"):
                            for nj_1 in T.unroll(4):
                                T.evaluate(T.ldmatrix(1, 4, B_frag[ty_11, tx_11, nj_1 * 8], B_shared[ko % 3, 16 + tx_11 // 8 % 2 * 8 + tx_11 % 8, ty_11 % 4 * 64 + nj_1 * 16 + tx_11 // 8 // 2 * 8], tx_11))
                    for ty_12 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_12 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_3 in T.unroll(4):
                                for ni_1 in T.unroll(8):
                                    T.evaluate(T.mma_sync("m16n8k16", C_frag[ty_12, tx_12, (mi_3 * 8 + ni_1) * 4], A_frag[ty_12, tx_12, mi_3 * 8], B_frag[ty_12, tx_12, ni_1 * 4], tx_12))
                    for ty_13 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_13 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_4 in T.unroll(4):
                                T.evaluate(T.ldmatrix(0, 4, A_frag[ty_13, tx_13, mi_4 * 8], A_shared[ko % 3, ty_13 // 4 * 64 + mi_4 * 16 + tx_13 // 8 % 2 * 8 + tx_13 % 8, 32 + tx_13 // 8 // 2 * 8], tx_13))
                    for ty_14 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_14 in T.thread_binding(32, thread="threadIdx.x"):
                            for nj_2 in T.unroll(4):
                                T.evaluate(T.ldmatrix(1, 4, B_frag[ty_14, tx_14, nj_2 * 8], B_shared[ko % 3, 32 + tx_14 // 8 % 2 * 8 + tx_14 % 8, ty_14 % 4 * 64 + nj_2 * 16 + tx_14 // 8 // 2 * 8], tx_14))
                    for ty_15 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_15 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_5 in T.unroll(4):
                                for ni_2 in T.unroll(8):
                                    T.evaluate(T.mma_sync("m16n8k16", C_frag[ty_15, tx_15, (mi_5 * 8 + ni_2) * 4], A_frag[ty_15, tx_15, mi_5 * 8], B_frag[ty_15, tx_15, ni_2 * 4], tx_15))
                    for ty_16 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_16 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_6 in T.unroll(4):
                                T.evaluate(T.ldmatrix(0, 4, A_frag[ty_16, tx_16, mi_6 * 8], A_shared[ko % 3, ty_16 // 4 * 64 + mi_6 * 16 + tx_16 // 8 % 2 * 8 + tx_16 % 8, 48 + tx_16 // 8 // 2 * 8], tx_16))
                    for ty_17 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_17 in T.thread_binding(32, thread="threadIdx.x"):
                            for nj_3 in T.unroll(4):
                                T.evaluate(T.ldmatrix(1, 4, B_frag[ty_17, tx_17, nj_3 * 8], B_shared[ko % 3, 48 + tx_17 // 8 % 2 * 8 + tx_17 % 8, ty_17 % 4 * 64 + nj_3 * 16 + tx_17 // 8 // 2 * 8], tx_17))
                    for ty_18 in T.thread_binding(8, thread="threadIdx.y"):
                        for tx_18 in T.thread_binding(32, thread="threadIdx.x"):
                            for mi_7 in T.unroll(4):
                                for ni_3 in T.unroll(8):
                                    T.evaluate(T.mma_sync("m16n8k16", C_frag[ty_18, tx_18, (mi_7 * 8 + ni_3) * 4], A_frag[ty_18, tx_18, mi_7 * 8], B_frag[ty_18, tx_18, ni_3 * 4], tx_18))
                T.evaluate(T.cp_async_wait_group(0))
                for ty_19 in T.thread_binding(8, thread="threadIdx.y"):
                    for tx_19 in T.thread_binding(32, thread="threadIdx.x"):
                        for mi_8 in T.unroll(4):
                            for ni_4 in T.unroll(8):
                                for e_1 in T.unroll(4):
                                    if by * 128 + ty_19 // 4 * 64 + mi_8 * 16 + tx_19 // 4 + e_1 // 2 * 8 < 4096 and bx * 256 + ty_19 % 4 * 64 + ni_4 * 8 + tx_19 % 4 * 2 + e_1 % 2 < 4096:
                                        C[by * 128 + ty_19 // 4 * 64 + mi_8 * 16 + tx_19 // 4 + e_1 // 2 * 8, bx * 256 + ty_19 % 4 * 64 + ni_4 * 8 + tx_19 % 4 * 2 + e_1 % 2] = T.Cast("float16", C_frag[ty_19, tx_19, (mi_8 * 8 + ni_4) * 4 + e_1])
