# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1024, 1024), "float32"), B: T.Buffer((1024, 1024), "float32"), C: T.Buffer((1024, 1024), "float32")):
    T.func_attr({"tir.noalias": True})
    C_local = T.alloc_buffer((1024, 1024), scope="local")
    A_shared = T.alloc_buffer((1024, 1024), scope="shared")
    B_shared = T.alloc_buffer((1024, 1024), scope="shared")
    for i_0_j_0_fused in T.thread_binding(256, thread="blockIdx.x"):
        for i_1_j_1_fused in T.thread_binding(256, thread="threadIdx.x"):
            for i_2_init, j_2_init in T.grid(4, 4):
                with T.block("C_init"):
                    v_i = T.axis.spatial(1024, i_0_j_0_fused // 16 * 64 + i_1_j_1_fused // 16 * 4 + i_2_init)
                    v_j = T.axis.spatial(1024, i_0_j_0_fused % 16 * 64 + i_1_j_1_fused % 16 * 4 + j_2_init)
                    T.reads()
                    T.writes(C_local[v_i, v_j])
                    C_local[v_i, v_j] = T.float32(0.0)
            for k_0 in range(64):
                for ax0_ax1_fused_0 in range(4):
                    for ax0_ax1_fused_1 in T.thread_binding(256, thread="threadIdx.x"):
                        with T.block("A_shared"):
                            v0 = T.axis.spatial(1024, i_0_j_0_fused // 16 * 64 + (ax0_ax1_fused_0 * 256 + ax0_ax1_fused_1) // 16)
                            v1 = T.axis.spatial(1024, k_0 * 16 + (ax0_ax1_fused_0 * 256 + ax0_ax1_fused_1) % 16)
                            T.reads(A[v0, v1])
                            T.writes(A_shared[v0, v1])
                            A_shared[v0, v1] = A[v0, v1]
                for ax0_ax1_fused_0_1 in range(4):
                    for ax0_ax1_fused_1_1 in T.thread_binding(256, thread="threadIdx.x"):
                        with T.block("B_shared"):
                            v0_1 = T.axis.spatial(1024, k_0 * 16 + (ax0_ax1_fused_0_1 * 256 + ax0_ax1_fused_1_1) // 64)
                            v1_1 = T.axis.spatial(1024, i_0_j_0_fused % 16 * 64 + (ax0_ax1_fused_0_1 * 256 + ax0_ax1_fused_1_1) % 64)
                            T.reads(B[v0_1, v1_1])
                            T.writes(B_shared[v0_1, v1_1])
                            B_shared[v0_1, v1_1] = B[v0_1, v1_1]
                for k_1, i_2, j_2 in T.grid(16, 4, 4):
                    with T.block("C_update"):
                        v_i_1 = T.axis.spatial(1024, i_0_j_0_fused // 16 * 64 + i_1_j_1_fused // 16 * 4 + i_2)
                        v_j_1 = T.axis.spatial(1024, i_0_j_0_fused % 16 * 64 + i_1_j_1_fused % 16 * 4 + j_2)
                        v_k = T.axis.reduce(1024, k_0 * 16 + k_1)
                        T.reads(C_local[v_i_1, v_j_1], A_shared[v_i_1, v_k], B_shared[v_k, v_j_1])
                        T.writes(C_local[v_i_1, v_j_1])
                        C_local[v_i_1, v_j_1] = C_local[v_i_1, v_j_1] + A_shared[v_i_1, v_k] * B_shared[v_k, v_j_1]
            for ax0, ax1 in T.grid(4, 4):
                with T.block("C_local"):
                    v0_2 = T.axis.spatial(1024, i_0_j_0_fused // 16 * 64 + i_1_j_1_fused // 16 * 4 + ax0)
                    v1_2 = T.axis.spatial(1024, i_0_j_0_fused % 16 * 64 + i_1_j_1_fused % 16 * 4 + ax1)
                    T.reads(C_local[v0_2, v1_2])
                    T.writes(C[v0_2, v1_2])
                    C[v0_2, v1_2] = C_local[v0_2, v1_2]
