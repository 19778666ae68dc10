"""What one call of a tuned kernel costs from Python: the 33 x 70 float16 add
(bench/programs/add_33x70_f16.py) that bench/FacadeCallBench.cpp times
through Kernel::run from C++, called on NumPy arrays through DLPack. Prints
the median of several timeit runs, in microseconds per call.

    .venv/bin/python bench/python_call_overhead.py
"""
import pathlib
import statistics
import timeit

import numpy as np

import tessera

# The same program as the C++ bench's.
ADD = (pathlib.Path(__file__).resolve().parent / "programs" / "add_33x70_f16.py").read_text()

k = tessera.tune(ADD, "cpu", progress=False)
a = np.ones((33, 70), np.float16)
bias = np.ones((70,), np.float16)
c = np.empty_like(a)
n = 20000
runs = [timeit.timeit(lambda: k(a, bias, c), number=n) / n * 1e6 for _ in range(7)]
print(f"python: {statistics.median(runs):.2f} us per call (median of 7 x {n}; min {min(runs):.2f})")
