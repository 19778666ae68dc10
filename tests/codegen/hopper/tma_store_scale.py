# B = 2 A in float32 (40 x 72) written by TMA stores (sm_90): a thread block
# of one warp per 16-row tile. Each 16 x 32 box of the tile goes into one of
# two 128-byte-swizzled shared slots (16-byte chunk c of row r at chunk
# c ^ (r % 8)), and lane 0 stores it with T.tma_store, which clips rows 40..
# and columns 72..; before a slot is rewritten lane 0 waits until the store
# that used it two boxes ago has read it (T.tma_store_wait(1)), the block
# waiting for lane 0 (a barrier written out: the barriers lowering inserts
# order shared accesses, not a TMA store's asynchronous read), and before
# the kernel ends until every store has (T.tma_store_wait(0)).
# from tvm.script import tir as T


@T.prim_func
def main(A: T.Buffer((40, 72), "float32"), B: T.Buffer((40, 72), "float32")) -> None:
    for by in T.thread_binding(3, thread="blockIdx.x"):
        with T.block("tma_store_tile"):
            T.reads()
            T.writes()
            slots = T.alloc_buffer((2, 16, 32), scope="shared")
            for j in range(3):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    if tx == 0:
                        T.evaluate(T.tma_store_wait(1))
                T.evaluate(T.syncthreads())
                for tx_1 in T.thread_binding(32, thread="threadIdx.x"):
                    for r in range(16):
                        if by * 16 + r < 40 and j * 32 + tx_1 < 72:
                            slots[j % 2, r, T.bitwise_xor(tx_1 // 4, r % 8) * 4 + tx_1 % 4] = A[by * 16 + r, j * 32 + tx_1] * T.float32(2.0)
                    T.evaluate(T.fence_proxy_async())
                for tx_2 in T.thread_binding(32, thread="threadIdx.x"):
                    if tx_2 == 0:
                        T.evaluate(T.tma_store(slots[j % 2, 0, 0], B.data, 128, 16, 32, by * 16, j * 32))
            for tx_3 in T.thread_binding(32, thread="threadIdx.x"):
                if tx_3 == 0:
                    T.evaluate(T.tma_store_wait(0))
