# C = A B^T in float16 -> float32 (100 x 56, K = 200) on Hopper's TMA and
# wgmma (sm_90a): one 64-row tile per thread block of one warpgroup; the
# 64 x 64 float16 tiles of A and B arrive by TMA (tiled copies of a 64 x 64
# box, 128-byte swizzle, zeros past the edges: rows 100.. of A, rows 56.. of
# B, K 200..255) into two stages, each with an mbarrier that expects the
# 16384 bytes of its two boxes. Thread 0 refills a stage once every wgmma
# reading it has retired; the others wait on the stage's barrier for the
# phase the refill completes (parity ko // 2 % 2).
# from tvm.script import tir as T


@T.prim_func
def main(
    A: T.Buffer((100, 200), "float16"),
    B: T.Buffer((56, 200), "float16"),
    C: T.Buffer((100, 56), "float32"),
) -> None:
    for by in T.thread_binding(2, thread="blockIdx.x"):
        with T.block("tma_tile"):
            T.reads()
            T.writes()
            A_shared = T.alloc_buffer((2, 4096), "float16", scope="shared")
            B_shared = T.alloc_buffer((2, 4096), "float16", scope="shared")
            full = T.alloc_buffer((2,), "uint64", scope="shared")
            C_frag = T.alloc_buffer((128, 32), scope="warp")
            for tx in T.thread_binding(128, thread="threadIdx.x"):
                for e in T.unroll(32):
                    C_frag[tx, e] = T.float32(0.0)
                if tx == 0:
                    for s in range(2):
                        T.evaluate(T.mbarrier_init(full[s], 1))
            T.evaluate(T.syncthreads())
            for tx_1 in T.thread_binding(128, thread="threadIdx.x"):
                if tx_1 == 0:
                    for s_1 in range(2):
                        T.evaluate(T.mbarrier_arrive_expect_tx(full[s_1], 16384))
                        T.evaluate(T.tma_load(A_shared[s_1, 0], full[s_1], A.data, 128, 64, 64, by * 64, s_1 * 64))
                        T.evaluate(T.tma_load(B_shared[s_1, 0], full[s_1], B.data, 128, 64, 64, 0, s_1 * 64))
            for ko in range(4):
                for tx_2 in T.thread_binding(128, thread="threadIdx.x"):
                    T.evaluate(T.mbarrier_wait(full[ko % 2], ko // 2 % 2))
                    T.evaluate(T.wgmma_fence())
                    for ks in T.unroll(4):
                        T.evaluate(T.wgmma("m64n64k16", C_frag[tx_2, 0], A_shared[ko % 2, ks * 16], B_shared[ko % 2, ks * 16], tx_2, 128, 16, 1024))
                    T.evaluate(T.wgmma_commit_group())
                    T.evaluate(T.wgmma_wait_group(0))
                T.evaluate(T.syncthreads())
                for tx_3 in T.thread_binding(128, thread="threadIdx.x"):
                    if tx_3 == 0 and ko < 2:
                        T.evaluate(T.mbarrier_arrive_expect_tx(full[ko % 2], 16384))
                        T.evaluate(T.tma_load(A_shared[ko % 2, 0], full[ko % 2], A.data, 128, 64, 64, by * 64, ko * 64 + 128))
                        T.evaluate(T.tma_load(B_shared[ko % 2, 0], full[ko % 2], B.data, 128, 64, 64, 0, ko * 64 + 128))
            for tx_4 in T.thread_binding(128, thread="threadIdx.x"):
                for e_1 in T.unroll(32):
                    if by * 64 + tx_4 // 32 * 16 + tx_4 % 32 // 4 + e_1 // 2 % 2 * 8 < 100 and e_1 // 4 * 8 + tx_4 % 4 * 2 + e_1 % 2 < 56:
                        C[by * 64 + tx_4 // 32 * 16 + tx_4 % 32 // 4 + e_1 // 2 % 2 * 8, e_1 // 4 * 8 + tx_4 % 4 * 2 + e_1 % 2] = C_frag[tx_4, e_1]
