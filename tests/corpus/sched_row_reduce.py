# Scheduled row sum: one block per row, the reduction split across threadIdx.x.
@T.prim_func
def main(A: T.Buffer((256, 4096), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"tir.noalias": True})
    B_rf_local = T.alloc_buffer((128, 256), scope="local")
    for i in T.thread_binding(256, thread="blockIdx.x"):
        for k_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B_rf_init"):
                vk_1, vi = T.axis.remap("SS", [k_1, i])
                T.reads()
                T.writes(B_rf_local[vk_1, vi])
                B_rf_local[vk_1, vi] = T.float32(0)
            for k_0 in range(32):
                with T.block("B_rf_update"):
                    vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                    T.reads(B_rf_local[vk_1, vi], A[vi, vk_0 * 128 + vk_1])
                    T.writes(B_rf_local[vk_1, vi])
                    B_rf_local[vk_1, vi] = B_rf_local[vk_1, vi] + A[vi, vk_0 * 128 + vk_1]
        for k_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vk_1, vi = T.axis.remap("RS", [k_1, i])
                T.reads(B_rf_local[vk_1, vi])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + B_rf_local[vk_1, vi]
