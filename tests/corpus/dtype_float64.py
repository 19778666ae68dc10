# Double-precision axpy.
@T.prim_func
def main(x: T.Buffer((1000,), "float64"), y: T.Buffer((1000,), "float64"), z: T.Buffer((1000,), "float64")):
    for i in range(1000):
        with T.block("axpy"):
            vi = T.axis.spatial(1000, i)
            z[vi] = T.float64(2.5) * x[vi] + y[vi] + T.float64(0.1)
