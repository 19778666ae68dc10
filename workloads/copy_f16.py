# Copy: B[i] = A[i] over a 1-d float16 array (a pure bandwidth test).
# dtypes: float16 in, float16 out. Symbolic: n (elements).
@T.prim_func
def main(a: T.handle, b: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    A = T.match_buffer(a, (n,), "float16")
    B = T.match_buffer(b, (n,), "float16")
    for i in range(n):
        with T.block("B"):
            v_i = T.axis.remap("S", [i])
            B[v_i] = A[v_i]
