# A boolean mask selects between two inputs.
@T.prim_func
def main(mask: T.Buffer((128,), "bool"), A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32"), any_set: T.Buffer((128,), "bool")):
    for i in range(128):
        with T.block("select"):
            vi = T.axis.remap("S", [i])
            C[vi] = T.if_then_else(mask[vi], A[vi], B[vi])
            any_set[vi] = mask[vi] or A[vi] > B[vi] and not mask[vi]
