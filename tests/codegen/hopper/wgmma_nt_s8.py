# C = A B^T in int8 -> int32 (100 x 56, K = 100) on Hopper's wgmma (sm_90a):
# as wgmma_nt_f16.py, with 64 x 128 int8 tiles (128-byte rows: row r,
# element k at r * 128 + ((k // 16) ^ (r % 8)) * 16 + k % 16) and four
# m64n64k32 wgmma (K = 32 each, 32 bytes further along the row), exact.
# from tvm.script import tir as T


@T.prim_func
def main(
    A: T.Buffer((100, 100), "int8"),
    B: T.Buffer((56, 100), "int8"),
    C: T.Buffer((100, 56), "int32"),
) -> None:
    for by in T.thread_binding(2, thread="blockIdx.x"):
        with T.block("wgmma_tile"):
            T.reads()
            T.writes()
            A_shared = T.alloc_buffer((8192,), "int8", scope="shared")
            B_shared = T.alloc_buffer((8192,), "int8", scope="shared")
            C_frag = T.alloc_buffer((128, 32), "int32", scope="warp")
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                for e in T.unroll(32):
                    C_frag[tx, e] = 0
            for tx_1 in T.thread_binding(128, thread="threadIdx.x"):
                for i in range(64):
                    A_shared[(i * 128 + tx_1) // 128 * 128 + ((i * 128 + tx_1) % 128 // 16 ^ (i * 128 + tx_1) // 128 % 8) * 16 + (i * 128 + tx_1) % 16] = T.if_then_else(by * 64 + (i * 128 + tx_1) // 128 < 100 and (i * 128 + tx_1) % 128 < 100, A[T.min(by * 64 + (i * 128 + tx_1) // 128, 99), T.min((i * 128 + tx_1) % 128, 99)], T.int8(0))
                    B_shared[(i * 128 + tx_1) // 128 * 128 + ((i * 128 + tx_1) % 128 // 16 ^ (i * 128 + tx_1) // 128 % 8) * 16 + (i * 128 + tx_1) % 16] = T.if_then_else((i * 128 + tx_1) // 128 < 56 and (i * 128 + tx_1) % 128 < 100, B[T.min((i * 128 + tx_1) // 128, 55), T.min((i * 128 + tx_1) % 128, 99)], T.int8(0))
                T.evaluate(T.fence_proxy_async())
            T.evaluate(T.syncthreads())
            for tx_2 in T.thread_binding(128, thread="threadIdx.x"):
                T.evaluate(T.wgmma_fence())
                for ks in T.unroll(4):
                    T.evaluate(T.wgmma("m64n64k32", C_frag[tx_2, 0], A_shared[ks * 32], B_shared[ks * 32], tx_2, 128, 16, 1024))
                T.evaluate(T.wgmma_commit_group())
                T.evaluate(T.wgmma_wait_group(0))
            for tx_3 in T.thread_binding(128, thread="threadIdx.x"):
                for e_1 in T.unroll(32):
                    if by * 64 + tx_3 // 32 * 16 + tx_3 % 32 // 4 + e_1 // 2 % 2 * 8 < 100 and e_1 // 4 * 8 + tx_3 % 4 * 2 + e_1 % 2 < 56:
                        C[by * 64 + tx_3 // 32 * 16 + tx_3 % 32 // 4 + e_1 // 2 % 2 * 8, e_1 // 4 * 8 + tx_3 % 4 * 2 + e_1 % 2] = C_frag[tx_3, e_1]
