"""What one call of a tuned kernel costs from Python: the 33 x 70 float16 add
of bench/FacadeCallBench.cpp (which times Kernel::run from C++), called on
NumPy arrays through DLPack. Prints the median of several timeit runs, in
microseconds per call.

    .venv/bin/python bench/python_call_overhead.py
"""
import statistics
import timeit

import numpy as np

import tessera

ADD = """
@T.prim_func
def add(A: T.Buffer((T.int64(33), T.int64(70)), "float16"), bias: T.Buffer((T.int64(70),), "float16"),
        C: T.Buffer((T.int64(33), T.int64(70)), "float16")) -> None:
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(T.int64(33), T.int64(70)):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            C[v_i, v_j] = A[v_i, v_j] + bias[v_j]
"""

k = tessera.tune(ADD, "cpu", progress=False)
a = np.ones((33, 70), np.float16)
bias = np.ones((70,), np.float16)
c = np.empty_like(a)
n = 20000
runs = [timeit.timeit(lambda: k(a, bias, c), number=n) / n * 1e6 for _ in range(7)]
print(f"python: {statistics.median(runs):.2f} us per call (median of 7 x {n}; min {min(runs):.2f})")
