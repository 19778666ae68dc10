# A float16 gemv that accumulates in float16 (what a naive TE definition
# gives): y[i] = sum_k W[i, k] * x[k] over K = 4096, in TVM's printed form.
# The gemv rule's schedule sums in another order; `tessera schedule --verify`
# must accept it (runtime/Verify.h) and a skipped K tile must fail
# (tests/rules/GemvTest.cpp).
# from tvm.script import tir as T

@T.prim_func
def main(W: T.Buffer((256, 4096), "float16"), x: T.Buffer((4096,), "float16"), y: T.Buffer((256,), "float16")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    for i, k in T.grid(256, 4096):
        with T.block("y"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(W[v_i, v_k], x[v_k])
            T.writes(y[v_i])
            with T.init():
                y[v_i] = T.float16(0.0)
            y[v_i] = y[v_i] + W[v_i, v_k] * x[v_k]
