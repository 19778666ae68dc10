# from tvm.script import tir as T

@T.prim_func
def main(inputs: T.Buffer((2, 9, 11, 6), "float16"), weight: T.Buffer((3, 3, 6, 10), "float16"), out: T.Buffer((2, 9, 11, 10), "float16")):
    T.func_attr({"tir.noalias": True})
    pad_shared = T.alloc_buffer((2, 11, 13, 6), "float16", scope="shared")
    weight_shared = T.alloc_buffer((3, 3, 6, 10), "float16", scope="shared")
    weight_shared_local = T.alloc_buffer((3, 3, 6, 10), "float16", scope="local")
    acc_local = T.alloc_buffer((2, 9, 11, 10), scope="local")
    for b_1_y_1_0_x_1_0_fused in T.thread_binding(12, thread="blockIdx.y"):
        for o_0 in T.thread_binding(1, thread="blockIdx.x"):
            for y_1_1_x_1_1_fused_init in T.thread_binding(32, thread="threadIdx.y"):
                for o_1_1_init in T.thread_binding(10, thread="threadIdx.x"):
                    with T.block("acc_init"):
                        v_b = T.axis.spatial(2, b_1_y_1_0_x_1_0_fused // 6)
                        v_y = T.axis.spatial(9, y_1_1_x_1_1_fused_init // 2)
                        v_x = T.axis.spatial(11, b_1_y_1_0_x_1_0_fused % 6 * 2 + y_1_1_x_1_1_fused_init % 2)
                        v_o = T.axis.spatial(10, o_1_1_init)
                        T.where(y_1_1_x_1_1_fused_init // 2 < 9 and b_1_y_1_0_x_1_0_fused % 6 * 2 + y_1_1_x_1_1_fused_init % 2 < 11)
                        T.reads()
                        T.writes(acc_local[v_b, v_y, v_x, v_o])
                        acc_local[v_b, v_y, v_x, v_o] = T.float32(0.0)
            for c_1_0 in range(1):
                for ax0_ax1_ax2_ax3_fused_0 in T.thread_binding(32, thread="threadIdx.y"):
                    for ax0_ax1_ax2_ax3_fused_1 in T.thread_binding(10, thread="threadIdx.x"):
                        for ax0_ax1_ax2_ax3_fused_2 in T.vectorized(2):
                            with T.block("weight_shared"):
                                v0 = T.axis.spatial(3, ax0_ax1_ax2_ax3_fused_0 // 9)
                                v1 = T.axis.spatial(3, ax0_ax1_ax2_ax3_fused_0 // 3 % 3)
                                v2 = T.axis.spatial(6, ax0_ax1_ax2_ax3_fused_0 % 3 * 2 + ax0_ax1_ax2_ax3_fused_1 // 5)
                                v3 = T.axis.spatial(10, ax0_ax1_ax2_ax3_fused_1 % 5 * 2 + ax0_ax1_ax2_ax3_fused_2)
                                T.where(ax0_ax1_ax2_ax3_fused_0 * 20 + ax0_ax1_ax2_ax3_fused_1 * 2 + ax0_ax1_ax2_ax3_fused_2 < 540)
                                T.reads(weight[v0, v1, v2, v3])
                                T.writes(weight_shared[v0, v1, v2, v3])
                                weight_shared[v0, v1, v2, v3] = weight[v0, v1, v2, v3]
                for ax0_ax1_ax2_fused_0 in T.unroll(2):
                    for ax0_ax1_ax2_fused_1 in T.thread_binding(32, thread="threadIdx.y"):
                        for ax0_ax1_ax2_fused_2 in T.thread_binding(10, thread="threadIdx.x"):
                            with T.block("pad_shared"):
                                v0 = T.axis.spatial(2, b_1_y_1_0_x_1_0_fused // 6)
                                v1 = T.axis.spatial(11, (ax0_ax1_ax2_fused_0 * 320 + ax0_ax1_ax2_fused_1 * 10 + ax0_ax1_ax2_fused_2) // 24)
                                v2 = T.axis.spatial(13, b_1_y_1_0_x_1_0_fused % 6 * 2 + (ax0_ax1_ax2_fused_0 * 320 + ax0_ax1_ax2_fused_1 * 10 + ax0_ax1_ax2_fused_2) // 6 % 4)
                                v3 = T.axis.spatial(6, (ax0_ax1_ax2_fused_0 * 320 + ax0_ax1_ax2_fused_1 * 10 + ax0_ax1_ax2_fused_2) % 6)
                                T.where((ax0_ax1_ax2_fused_0 * 320 + ax0_ax1_ax2_fused_1 * 10 + ax0_ax1_ax2_fused_2) // 24 < 11 and b_1_y_1_0_x_1_0_fused % 6 * 2 + (ax0_ax1_ax2_fused_0 * 320 + ax0_ax1_ax2_fused_1 * 10 + ax0_ax1_ax2_fused_2) // 6 % 4 < 13 and ax0_ax1_ax2_fused_0 * 320 + ax0_ax1_ax2_fused_1 * 10 + ax0_ax1_ax2_fused_2 < 432)
                                T.reads(inputs[v0, v1 - 1, v2 - 1, v3])
                                T.writes(pad_shared[v0, v1, v2, v3])
                                pad_shared[v0, v1, v2, v3] = T.if_then_else(1 <= v1 and v1 < 9 + 1 and 1 <= v2 and v2 < 11 + 1, inputs[v0, v1 - 1, v2 - 1, v3], T.float16(0.0))
                for y_1_1_x_1_1_fused in T.thread_binding(32, thread="threadIdx.y"):
                    for o_1_1 in T.thread_binding(10, thread="threadIdx.x"):
                        for r, s in T.grid(3, 3):
                            for c_1_1 in T.unroll(6):
                                with T.block("weight_shared_local"):
                                    v0, v1, v2, v3 = T.axis.remap("SSSS", [r, s, c_1_1, o_1_1])
                                    T.reads(weight_shared[v0, v1, v2, v3])
                                    T.writes(weight_shared_local[v0, v1, v2, v3])
                                    weight_shared_local[v0, v1, v2, v3] = weight_shared[v0, v1, v2, v3]
                                with T.block("acc"):
                                    v_b = T.axis.spatial(2, b_1_y_1_0_x_1_0_fused // 6)
                                    v_y = T.axis.spatial(9, y_1_1_x_1_1_fused // 2)
                                    v_x = T.axis.spatial(11, b_1_y_1_0_x_1_0_fused % 6 * 2 + y_1_1_x_1_1_fused % 2)
                                    v_o = T.axis.spatial(10, o_1_1)
                                    v_r = T.axis.reduce(3, r)
                                    v_s = T.axis.reduce(3, s)
                                    v_c = T.axis.reduce(6, c_1_1)
                                    T.where(y_1_1_x_1_1_fused // 2 < 9 and b_1_y_1_0_x_1_0_fused % 6 * 2 + y_1_1_x_1_1_fused % 2 < 11)
                                    T.reads(acc_local[v_b, v_y, v_x, v_o], pad_shared[v_b, v_y + v_r, v_x + v_s, v_c], weight_shared_local[v_r, v_s, v_c, v_o])
                                    T.writes(acc_local[v_b, v_y, v_x, v_o])
                                    acc_local[v_b, v_y, v_x, v_o] = acc_local[v_b, v_y, v_x, v_o] + T.Cast("float32", pad_shared[v_b, v_y + v_r, v_x + v_s, v_c]) * T.Cast("float32", weight_shared_local[v_r, v_s, v_c, v_o])
            for ax0 in range(1):
                for ax1_ax2_fused in T.thread_binding(32, thread="threadIdx.y"):
                    for ax3 in T.thread_binding(10, thread="threadIdx.x"):
                        with T.block("acc_local"):
                            v0 = T.axis.spatial(2, b_1_y_1_0_x_1_0_fused // 6 + ax0)
                            v1 = T.axis.spatial(9, ax1_ax2_fused // 2)
                            v2 = T.axis.spatial(11, b_1_y_1_0_x_1_0_fused % 6 * 2 + ax1_ax2_fused % 2)
                            v3 = T.axis.spatial(10, ax3)
                            T.where(ax1_ax2_fused // 2 < 9 and b_1_y_1_0_x_1_0_fused % 6 * 2 + ax1_ax2_fused % 2 < 11)
                            T.reads(acc_local[v0, v1, v2, v3])
                            T.writes(out[v0, v1, v2, v3])
                            out[v0, v1, v2, v3] = T.Cast("float16", acc_local[v0, v1, v2, v3])
