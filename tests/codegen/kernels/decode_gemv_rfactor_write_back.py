# A 4-bit decode gemv as dlight's decode-gemv rule schedules it: 64 threads
# per block each fold their slice of k into 8 outputs held in a local rfactor
# buffer; the write-back reduces that buffer across the threads with a spatial
# loop over the 8 outputs inside the threadIdx reduce loop (one all-reduce per
# output).
# from tvm.script import tir as T


@T.prim_func
def main(
    W: T.Buffer((64, 512), "uint32"),
    S: T.Buffer((16, 512), "float16"),
    V: T.Buffer((1, 1, 512), "float16"),
    C: T.Buffer((1, 1, 512), "float16"),
):
    T.func_attr({"tir.is_scheduled": 1, "tir.noalias": T.bool(True)})
    # with T.block("root"):
    C_rf_local = T.alloc_buffer((64, 1, 1, 512), "float16", scope="local")
    for i2_0_i0_i1_fused in T.thread_binding(64, thread="blockIdx.x"):
        for k_fused_1 in T.thread_binding(64, thread="threadIdx.x"):
            for i2_1_init in range(8):
                with T.block("matmul_rf_init"):
                    vk_fused_1 = T.axis.spatial(64, k_fused_1)
                    v_i2 = T.axis.spatial(512, i2_0_i0_i1_fused * 8 + i2_1_init)
                    T.reads()
                    T.writes(C_rf_local[vk_fused_1, 0, 0, v_i2])
                    C_rf_local[vk_fused_1, 0, 0, v_i2] = T.float16(0)
            for k_fused_0, i2_1 in T.grid(8, 8):
                with T.block("matmul_rf_update"):
                    vk_fused_1 = T.axis.spatial(64, k_fused_1)
                    v_i2 = T.axis.spatial(512, i2_0_i0_i1_fused * 8 + i2_1)
                    vk_fused_0 = T.axis.reduce(8, k_fused_0)
                    T.reads(C_rf_local[vk_fused_1, 0, 0, v_i2], V[0, 0, vk_fused_0 * 64 + vk_fused_1], W[v_i2 // 8, vk_fused_0 * 64 + vk_fused_1], S[v_i2 // 32, vk_fused_0 * 64 + vk_fused_1])
                    T.writes(C_rf_local[vk_fused_1, 0, 0, v_i2])
                    C_rf_local[vk_fused_1, 0, 0, v_i2] = C_rf_local[vk_fused_1, 0, 0, v_i2] + V[0, 0, vk_fused_0 * 64 + vk_fused_1] * ((T.Cast("float16", T.bitwise_and(T.shift_right(W[v_i2 // 8, vk_fused_0 * 64 + vk_fused_1], T.Cast("uint32", v_i2 % 8) * T.uint32(4)), T.uint32(15))) - T.float16(7)) * S[v_i2 // 32, vk_fused_0 * 64 + vk_fused_1])
        for ax1_ax2_ax3_fused_0 in range(1):
            for ax0_fused in T.thread_binding(64, thread="threadIdx.x"):
                for ax1_ax2_ax3_fused_1 in range(8):
                    with T.block("matmul"):
                        vk_fused_1 = T.axis.reduce(64, ax0_fused)
                        v_i2 = T.axis.spatial(512, i2_0_i0_i1_fused * 8 + ax1_ax2_ax3_fused_0 * 8 + ax1_ax2_ax3_fused_1)
                        T.reads(C_rf_local[vk_fused_1, 0, 0, v_i2])
                        T.writes(C[0, 0, v_i2])
                        with T.init():
                            C[0, 0, v_i2] = T.float16(0)
                        C[0, 0, v_i2] = C[0, 0, v_i2] + C_rf_local[vk_fused_1, 0, 0, v_i2]
