# The shared-memory tiled matmul of matmul_shared_f32.py with its k step as a
# software pipeline (TVM's annotations): the tiles of step k + 1 are copied by
# cp.async into a second buffer while step k computes (inject_software_pipeline).
@T.prim_func
def main(A: T.Buffer((256, 256), "float32"), B: T.Buffer((256, 256), "float32"), C: T.Buffer((256, 256), "float32")):
    T.func_attr({"tir.noalias": True})
    for by in T.thread_binding(4, thread="blockIdx.y"):
        for bx in T.thread_binding(4, thread="blockIdx.x"):
            for tx in T.thread_binding(256, thread="threadIdx.x"):
                with T.block("tile"):
                    vby, vbx, vtx = T.axis.remap("SSS", [by, bx, tx])
                    A_shared = T.alloc_buffer((64, 16), "float32", scope="shared")
                    B_shared = T.alloc_buffer((16, 64), "float32", scope="shared")
                    C_local = T.alloc_buffer((4, 4), scope="local")
                    for i, j in T.grid(4, 4):
                        with T.block("C_init"):
                            vi, vj = T.axis.remap("SS", [i, j])
                            C_local[vi, vj] = T.float32(0)
                    for k_0 in T.serial(16, annotations={"software_pipeline_async_stages": [0], "software_pipeline_order": [0, 1, 2], "software_pipeline_stage": [0, 0, 1]}):
                        for f_0 in range(4):
                            for f_1 in T.thread_binding(256, thread="threadIdx.x"):
                                with T.block("A_shared"):
                                    vk_0 = T.axis.spatial(16, k_0)
                                    v0 = T.axis.spatial(64, (f_0 * 256 + f_1) // 16)
                                    v1 = T.axis.spatial(16, (f_0 * 256 + f_1) % 16)
                                    A_shared[v0, v1] = A[vby * 64 + v0, vk_0 * 16 + v1]
                        for f_0 in range(4):
                            for f_1 in T.thread_binding(256, thread="threadIdx.x"):
                                with T.block("B_shared"):
                                    vk_0 = T.axis.spatial(16, k_0)
                                    v0 = T.axis.spatial(16, (f_0 * 256 + f_1) // 64)
                                    v1 = T.axis.spatial(64, (f_0 * 256 + f_1) % 64)
                                    B_shared[v0, v1] = B[vk_0 * 16 + v0, vbx * 64 + v1]
                        for k_1 in range(16):
                            for i, j in T.grid(4, 4):
                                with T.block("C_update"):
                                    vk, vi, vj = T.axis.remap("RSS", [k_1, i, j])
                                    C_local[vi, vj] = C_local[vi, vj] + A_shared[vtx // 16 * 4 + vi, vk] * B_shared[vk, vtx % 16 * 4 + vj]
                    for i, j in T.grid(4, 4):
                        with T.block("C_store"):
                            vi, vj = T.axis.remap("SS", [i, j])
                            C[vby * 64 + vtx // 16 * 4 + vi, vbx * 64 + vtx % 16 * 4 + vj] = C_local[vi, vj]
