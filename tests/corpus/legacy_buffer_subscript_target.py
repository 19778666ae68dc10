# Forms older and newer TVM releases print: T.Buffer[(shape), dtype]
# parameters, a target in the function attributes (T.target with a string or
# a dictionary), T.if_then_else with dtype=, a scalar parameter, and an int32
# value stored into a float32 buffer.
# from tvm.script import tir as T

@T.prim_func
def main(X: T.Buffer[(10, 10), "float32"], Z: T.Buffer[(10,), "float32"], n: T.int32):
    T.func_attr({"global_symbol": "main", "target": T.target({"kind": "cuda", "arch": "sm_80", "keys": ["cuda", "gpu"], "max_num_threads": 1024}), "tir.noalias": True})
    for i in range(10):
        with T.block("Z"):
            vi = T.axis.spatial(10, i)
            Z[vi] = T.if_then_else(vi >= 1, X[vi, vi - 1] + 1.0, 0.0, dtype="float32") + vi * n
