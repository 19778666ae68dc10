# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((37, 130), "float16"), B: T.Buffer((37, 130), "float16")):
    T.func_attr({"tir.noalias": True})
    row_max = T.alloc_buffer((37,), "float16", scope="local")
    row_sum = T.alloc_buffer((37,), scope="local")
    for i_3 in T.thread_binding(37, thread="blockIdx.x"):
        for row_max_k_t in T.thread_binding(128, thread="threadIdx.x"):
            for row_max_k_o in T.unroll(2):
                with T.block("row_max"):
                    v_i = T.axis.spatial(37, i_3)
                    v_k = T.axis.reduce(130, row_max_k_o * 128 + row_max_k_t)
                    T.where(row_max_k_o * 128 + row_max_k_t < 130)
                    T.reads(row_max[v_i], A[v_i, v_k])
                    T.writes(row_max[v_i])
                    with T.init():
                        row_max[v_i] = T.min_value("float16")
                    row_max[v_i] = T.max(row_max[v_i], A[v_i, v_k])
        for row_sum_k_t in T.thread_binding(128, thread="threadIdx.x"):
            for row_sum_k_o in T.unroll(2):
                with T.block("row_sum"):
                    v_i = T.axis.spatial(37, i_3)
                    v_k = T.axis.reduce(130, row_sum_k_o * 128 + row_sum_k_t)
                    T.where(row_sum_k_o * 128 + row_sum_k_t < 130)
                    T.reads(row_sum[v_i], A[v_i, v_k], row_max[v_i])
                    T.writes(row_sum[v_i])
                    with T.init():
                        row_sum[v_i] = T.float32(0.0)
                    row_sum[v_i] = row_sum[v_i] + T.exp(T.Cast("float32", A[v_i, v_k]) - T.Cast("float32", row_max[v_i]))
        for c_t in T.thread_binding(128, thread="threadIdx.x"):
            for c_o in T.unroll(2):
                with T.block("B"):
                    v_i = T.axis.spatial(37, i_3)
                    v_j = T.axis.spatial(130, c_o * 128 + c_t)
                    T.where(c_o * 128 + c_t < 130)
                    T.reads(A[v_i, v_j], row_max[v_i], row_sum[v_i])
                    T.writes(B[v_i, v_j])
                    B[v_i, v_j] = T.Cast("float16", T.exp(T.Cast("float32", A[v_i, v_j]) - T.Cast("float32", row_max[v_i])) / row_sum[v_i])
