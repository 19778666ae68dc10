# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((64, 1280), "float32"), T_softmax_norm: T.Buffer((64, 1280), "float32")):
    T.func_attr({"tir.noalias": True})
    T_softmax_maxelem = T.alloc_buffer((64,))
    T_softmax_exp = T.alloc_buffer((64, 1280))
    T_softmax_expsum = T.alloc_buffer((64,))
    for i0, k in T.grid(64, 1280):
        with T.block("T_softmax_maxelem"):
            v_i0, v_k = T.axis.remap("SR", [i0, k])
            T.reads(A[v_i0, v_k])
            T.writes(T_softmax_maxelem[v_i0])
            with T.init():
                T_softmax_maxelem[v_i0] = T.float32(-3.4028235e+38)
            T_softmax_maxelem[v_i0] = T.max(T_softmax_maxelem[v_i0], A[v_i0, v_k])
    for i0_1, i1 in T.grid(64, 1280):
        with T.block("T_softmax_exp"):
            v_i0_1, v_i1 = T.axis.remap("SS", [i0_1, i1])
            T.reads(A[v_i0_1, v_i1], T_softmax_maxelem[v_i0_1])
            T.writes(T_softmax_exp[v_i0_1, v_i1])
            T_softmax_exp[v_i0_1, v_i1] = T.exp(A[v_i0_1, v_i1] - T_softmax_maxelem[v_i0_1])
    for i0_2, k_1 in T.grid(64, 1280):
        with T.block("T_softmax_expsum"):
            v_i0_2, v_k_1 = T.axis.remap("SR", [i0_2, k_1])
            T.reads(T_softmax_exp[v_i0_2, v_k_1])
            T.writes(T_softmax_expsum[v_i0_2])
            with T.init():
                T_softmax_expsum[v_i0_2] = T.float32(0.0)
            T_softmax_expsum[v_i0_2] = T_softmax_expsum[v_i0_2] + T_softmax_exp[v_i0_2, v_k_1]
    for i0_3, i1_1 in T.grid(64, 1280):
        with T.block("T_softmax_norm"):
            v_i0_3, v_i1_1 = T.axis.remap("SS", [i0_3, i1_1])
            T.reads(T_softmax_exp[v_i0_3, v_i1_1], T_softmax_expsum[v_i0_3])
            T.writes(T_softmax_norm[v_i0_3, v_i1_1])
            T.block_attr({"axis": 1})
            T_softmax_norm[v_i0_3, v_i1_1] = T_softmax_exp[v_i0_3, v_i1_1] / T_softmax_expsum[v_i0_3]
