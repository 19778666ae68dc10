# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((67, 40), "float16"), B: T.Buffer((40, 45), "float16"), C: T.Buffer((67, 45), "float16")):
    T.func_attr({"tir.noalias": True})
    A_shared = T.alloc_buffer((67, 40), "float16", scope="shared")
    B_shared = T.alloc_buffer((40, 45), "float16", scope="shared")
    B_shared_local = T.alloc_buffer((40, 45), "float16", scope="local")
    acc_local = T.alloc_buffer((67, 45), scope="local")
    for i_0 in T.thread_binding(5, thread="blockIdx.y"):
        for j_0 in T.thread_binding(3, thread="blockIdx.x"):
            for i_1_1_init in T.thread_binding(16, thread="threadIdx.y"):
                for j_1_1_init in T.thread_binding(16, thread="threadIdx.x"):
                    with T.block("acc_init"):
                        v_i = T.axis.spatial(67, i_0 * 16 + i_1_1_init)
                        v_j = T.axis.spatial(45, j_0 * 16 + j_1_1_init)
                        T.where(i_0 * 16 + i_1_1_init < 67 and j_0 * 16 + j_1_1_init < 45)
                        T.reads()
                        T.writes(acc_local[v_i, v_j])
                        acc_local[v_i, v_j] = T.float32(0.0)
            for r_0 in range(1):
                for ax0_ax1_fused_0_1 in T.unroll(3):
                    for ax0_ax1_fused_1_1 in T.thread_binding(16, thread="threadIdx.y"):
                        for ax0_ax1_fused_2_1 in T.thread_binding(16, thread="threadIdx.x"):
                            with T.block("B_shared"):
                                v0 = T.axis.spatial(40, ax0_ax1_fused_0_1 * 16 + ax0_ax1_fused_1_1)
                                v1 = T.axis.spatial(45, j_0 * 16 + ax0_ax1_fused_2_1)
                                T.where(j_0 * 16 + ax0_ax1_fused_2_1 < 45 and ax0_ax1_fused_0_1 * 256 + ax0_ax1_fused_1_1 * 16 + ax0_ax1_fused_2_1 < 640)
                                T.reads(B[v0, v1])
                                T.writes(B_shared[v0, v1])
                                B_shared[v0, v1] = B[v0, v1]
                for ax0_ax1_fused_0 in T.thread_binding(16, thread="threadIdx.y"):
                    for ax0_ax1_fused_1 in T.thread_binding(16, thread="threadIdx.x"):
                        for ax0_ax1_fused_2 in T.vectorized(8):
                            with T.block("A_shared"):
                                v0 = T.axis.spatial(67, i_0 * 16 + (ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1) // 5)
                                v1 = T.axis.spatial(40, (ax0_ax1_fused_0 + ax0_ax1_fused_1) % 5 * 8 + ax0_ax1_fused_2)
                                T.where(i_0 * 16 + (ax0_ax1_fused_0 * 16 + ax0_ax1_fused_1) // 5 < 67 and ax0_ax1_fused_0 * 128 + ax0_ax1_fused_1 * 8 + ax0_ax1_fused_2 < 640)
                                T.reads(A[v0, v1])
                                T.writes(A_shared[v0, v1])
                                A_shared[v0, v1] = A[v0, v1]
                for i_1_1 in T.thread_binding(16, thread="threadIdx.y"):
                    for j_1_1 in T.thread_binding(16, thread="threadIdx.x"):
                        for r_1 in T.unroll(40):
                            with T.block("B_shared_local"):
                                v0 = T.axis.spatial(40, r_1)
                                v1 = T.axis.spatial(45, j_0 * 16 + j_1_1)
                                T.where(j_0 * 16 + j_1_1 < 45)
                                T.reads(B_shared[v0, v1])
                                T.writes(B_shared_local[v0, v1])
                                B_shared_local[v0, v1] = B_shared[v0, v1]
                            with T.block("acc"):
                                v_i = T.axis.spatial(67, i_0 * 16 + i_1_1)
                                v_j = T.axis.spatial(45, j_0 * 16 + j_1_1)
                                v_r = T.axis.reduce(40, r_1)
                                T.where(i_0 * 16 + i_1_1 < 67 and j_0 * 16 + j_1_1 < 45)
                                T.reads(acc_local[v_i, v_j], A_shared[v_i, v_r], B_shared_local[v_r, v_j])
                                T.writes(acc_local[v_i, v_j])
                                acc_local[v_i, v_j] = acc_local[v_i, v_j] + T.Cast("float32", A_shared[v_i, v_r]) * T.Cast("float32", B_shared_local[v_r, v_j])
            for ax0 in T.thread_binding(16, thread="threadIdx.y"):
                for ax1 in T.thread_binding(16, thread="threadIdx.x"):
                    with T.block("acc_local"):
                        v0 = T.axis.spatial(67, i_0 * 16 + ax0)
                        v1 = T.axis.spatial(45, j_0 * 16 + ax1)
                        T.where(i_0 * 16 + ax0 < 67 and j_0 * 16 + ax1 < 45)
                        T.reads(acc_local[v0, v1])
                        T.writes(C[v0, v1])
                        C[v0, v1] = T.Cast("float16", acc_local[v0, v1])
