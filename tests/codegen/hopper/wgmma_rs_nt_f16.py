# C = A B^T in float16 -> float32 (100 x 56, K = 40) on Hopper's wgmma in its
# RS form (sm_90a): A and B staged as in wgmma_nt_f16.py, then each thread
# loads its A fragments from the shared tile into registers (A_frag, a
# `warp` buffer: per K step of 16 its 8 elements, at rows g and g + 8 of its
# warp's 16 and columns 2q, 2q + 1, 2q + 8, 2q + 9, g = lane / 4, q = lane %
# 4: mma.sync's A fragment), and the four m64n64k16 wgmma read A from them
# and B from its shared tile.
# from tvm.script import tir as T


@T.prim_func
def main(
    A: T.Buffer((100, 40), "float16"),
    B: T.Buffer((56, 40), "float16"),
    C: T.Buffer((100, 56), "float32"),
) -> None:
    for by in T.thread_binding(2, thread="blockIdx.x"):
        with T.block("wgmma_tile"):
            T.reads()
            T.writes()
            A_shared = T.alloc_buffer((4096,), "float16", scope="shared")
            B_shared = T.alloc_buffer((4096,), "float16", scope="shared")
            C_frag = T.alloc_buffer((128, 32), scope="warp")
            A_frag = T.alloc_buffer((128, 32), "float16", scope="warp")
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                for e in T.unroll(32):
                    C_frag[tx, e] = T.float32(0.0)
            for tx_1 in T.thread_binding(128, thread="threadIdx.x"):
                for i in range(32):
                    A_shared[(i * 128 + tx_1) // 64 * 64 + ((i * 128 + tx_1) % 64 // 8 ^ (i * 128 + tx_1) // 64 % 8) * 8 + (i * 128 + tx_1) % 8] = T.if_then_else(by * 64 + (i * 128 + tx_1) // 64 < 100 and (i * 128 + tx_1) % 64 < 40, A[T.min(by * 64 + (i * 128 + tx_1) // 64, 99), T.min((i * 128 + tx_1) % 64, 39)], T.float16(0.0))
                    B_shared[(i * 128 + tx_1) // 64 * 64 + ((i * 128 + tx_1) % 64 // 8 ^ (i * 128 + tx_1) // 64 % 8) * 8 + (i * 128 + tx_1) % 8] = T.if_then_else((i * 128 + tx_1) // 64 < 56 and (i * 128 + tx_1) % 64 < 40, B[T.min((i * 128 + tx_1) // 64, 55), T.min((i * 128 + tx_1) % 64, 39)], T.float16(0.0))
                T.evaluate(T.fence_proxy_async())
            T.evaluate(T.syncthreads())
            for tx_5 in T.thread_binding(128, thread="threadIdx.x"):
                for ks_1, i_1 in T.grid(4, 8):
                    A_frag[tx_5, ks_1 * 8 + i_1] = A_shared[(tx_5 // 32 * 16 + tx_5 % 32 // 4 + i_1 // 2 % 2 * 8) * 64 + ((ks_1 * 16 + tx_5 % 4 * 2 + i_1 % 2 + i_1 // 4 * 8) // 8 ^ (tx_5 // 32 * 16 + tx_5 % 32 // 4 + i_1 // 2 % 2 * 8) % 8) * 8 + (tx_5 % 4 * 2 + i_1 % 2) % 8]
            for tx_2 in T.thread_binding(128, thread="threadIdx.x"):
                T.evaluate(T.wgmma_fence())
                for ks in T.unroll(4):
                    T.evaluate(T.wgmma("m64n64k16", C_frag[tx_2, 0], A_frag[tx_2, ks * 8], B_shared[ks * 16], tx_2, 128, 16, 1024))
                T.evaluate(T.wgmma_commit_group())
                T.evaluate(T.wgmma_wait_group(0))
            for tx_3 in T.thread_binding(128, thread="threadIdx.x"):
                for e_1 in T.unroll(32):
                    if by * 64 + tx_3 // 32 * 16 + tx_3 % 32 // 4 + e_1 // 2 % 2 * 8 < 100 and e_1 // 4 * 8 + tx_3 % 4 * 2 + e_1 % 2 < 56:
                        C[by * 64 + tx_3 // 32 * 16 + tx_3 % 32 // 4 + e_1 // 2 % 2 * 8, e_1 // 4 * 8 + tx_3 % 4 * 2 + e_1 % 2] = C_frag[tx_3, e_1]
