# Row softmax of a (rows, 256) float32 matrix, with a symbolic row count:
# tessera run examples/softmax.py --dim rows=8
# from tvm.script import tir as T

@T.prim_func
def softmax(var_A: T.handle, var_B: T.handle):
    T.func_attr({"tir.noalias": True})
    rows = T.int64()
    A = T.match_buffer(var_A, (rows, T.int64(256)), "float32")
    B = T.match_buffer(var_B, (rows, T.int64(256)), "float32")
    A_max = T.alloc_buffer((rows,), "float32")
    A_exp = T.alloc_buffer((rows, T.int64(256)), "float32")
    A_sum = T.alloc_buffer((rows,), "float32")
    for i, k in T.grid(rows, T.int64(256)):
        with T.block("max"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                A_max[v_i] = T.min_value("float32")
            A_max[v_i] = T.max(A_max[v_i], A[v_i, v_k])
    for i, j in T.grid(rows, T.int64(256)):
        with T.block("exp"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            A_exp[v_i, v_j] = T.exp(A[v_i, v_j] - A_max[v_i])
    for i, k in T.grid(rows, T.int64(256)):
        with T.block("sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                A_sum[v_i] = T.float32(0)
            A_sum[v_i] = A_sum[v_i] + A_exp[v_i, v_k]
    for i, j in T.grid(rows, T.int64(256)):
        with T.block("normalize"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = A_exp[v_i, v_j] / A_sum[v_i]
