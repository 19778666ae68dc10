# A float32 matmul whose 128x64 and 64x128 tiles of A and B take 64 KB of
# shared memory, more than the 48 KB a kernel may declare statically: both
# tiles live in dynamic shared memory. 256 threads each compute an 8x8 register
# tile; the tiles are fetched with float4 loads and each row of the register
# tile is stored as two float4.
@T.prim_func
def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"), C: T.Buffer((256, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    for by in T.thread_binding(2, thread="blockIdx.y"):
        for bx in T.thread_binding(2, thread="blockIdx.x"):
            for tx in T.thread_binding(256, thread="threadIdx.x"):
                with T.block("tile"):
                    vby, vbx, vtx = T.axis.remap("SSS", [by, bx, tx])
                    A_shared = T.alloc_buffer((128, 64), "float32", scope="shared")
                    B_shared = T.alloc_buffer((64, 128), "float32", scope="shared")
                    C_local = T.alloc_buffer((8, 8), scope="local")
                    for i, j in T.grid(8, 8):
                        with T.block("C_init"):
                            vi, vj = T.axis.remap("SS", [i, j])
                            C_local[vi, vj] = T.float32(0)
                    for k_0 in range(4):
                        for f_0 in range(8):
                            for f_1 in T.thread_binding(256, thread="threadIdx.x"):
                                for f_2 in T.vectorized(4):
                                    with T.block("A_shared"):
                                        vk_0 = T.axis.spatial(4, k_0)
                                        v0 = T.axis.spatial(128, (f_0 * 1024 + f_1 * 4 + f_2) // 64)
                                        v1 = T.axis.spatial(64, (f_0 * 1024 + f_1 * 4 + f_2) % 64)
                                        A_shared[v0, v1] = A[vby * 128 + v0, vk_0 * 64 + v1]
                        for f_0 in range(8):
                            for f_1 in T.thread_binding(256, thread="threadIdx.x"):
                                for f_2 in T.vectorized(4):
                                    with T.block("B_shared"):
                                        vk_0 = T.axis.spatial(4, k_0)
                                        v0 = T.axis.spatial(64, (f_0 * 1024 + f_1 * 4 + f_2) // 128)
                                        v1 = T.axis.spatial(128, (f_0 * 1024 + f_1 * 4 + f_2) % 128)
                                        B_shared[v0, v1] = B[vk_0 * 64 + v0, vbx * 128 + v1]
                        for k_1 in range(64):
                            for i, j in T.grid(8, 8):
                                with T.block("C_update"):
                                    vk, vi, vj = T.axis.remap("RSS", [k_1, i, j])
                                    C_local[vi, vj] = C_local[vi, vj] + A_shared[vtx // 16 * 8 + vi, vk] * B_shared[vk, vtx % 16 * 8 + vj]
                    for i in range(8):
                        for j in T.vectorized(8):
                            with T.block("C_store"):
                                vi, vj = T.axis.remap("SS", [i, j])
                                C[vby * 128 + vtx // 16 * 8 + vi, vbx * 128 + vtx % 16 * 8 + vj] = C_local[vi, vj]
