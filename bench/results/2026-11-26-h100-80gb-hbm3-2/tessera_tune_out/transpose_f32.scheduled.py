# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((45, 67), "float32"), B: T.Buffer((67, 45), "float32")):
    T.func_attr({"tir.noalias": True})
    A_shared = T.alloc_buffer((45, 67), scope="shared")
    for i_0_j_0_fused in T.thread_binding(6, thread="blockIdx.x"):
        for ax0_ax1_fused_0 in T.unroll(4):
            for ax0_ax1_fused_1 in T.thread_binding(8, thread="threadIdx.y"):
                for ax0_ax1_fused_2 in T.thread_binding(32, thread="threadIdx.x"):
                    with T.block("A_shared"):
                        v0 = T.axis.spatial(45, i_0_j_0_fused // 3 * 32 + ax0_ax1_fused_0 * 8 + ax0_ax1_fused_1)
                        v1 = T.axis.spatial(67, i_0_j_0_fused % 3 * 32 + ax0_ax1_fused_2)
                        T.where(i_0_j_0_fused // 3 * 32 + ax0_ax1_fused_0 * 8 + ax0_ax1_fused_1 < 45 and i_0_j_0_fused % 3 * 32 + ax0_ax1_fused_2 < 67)
                        T.reads(A[v0, v1])
                        T.writes(A_shared[v0, v1])
                        T.block_attr({"buffer_dim_align": [[0, 0, 33, 0]]})
                        A_shared[v0, v1] = A[v0, v1]
        for j_1_1 in T.thread_binding(8, thread="threadIdx.y"):
            for i_1 in T.thread_binding(32, thread="threadIdx.x"):
                for j_1_0 in T.unroll(4):
                    with T.block("B"):
                        v_i = T.axis.spatial(45, i_0_j_0_fused // 3 * 32 + i_1)
                        v_j = T.axis.spatial(67, i_0_j_0_fused % 3 * 32 + j_1_0 * 8 + j_1_1)
                        T.where(i_0_j_0_fused // 3 * 32 + i_1 < 45 and i_0_j_0_fused % 3 * 32 + j_1_0 * 8 + j_1_1 < 67)
                        T.reads(A_shared[v_i, v_j])
                        T.writes(B[v_j, v_i])
                        B[v_j, v_i] = A_shared[v_i, v_j]
