# Argmax along rows: an index buffer and a value buffer updated together.
@T.prim_func
def main(A: T.Buffer((32, 1000), "float32"), idx: T.Buffer((32,), "int32"), val: T.Buffer((32,), "float32")):
    for i, k in T.grid(32, 1000):
        with T.block("argmax"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk], idx[vi], val[vi])
            T.writes(idx[vi], val[vi])
            with T.init():
                idx[vi] = -1
                val[vi] = T.min_value("float32")
            idx[vi] = T.Select(val[vi] < A[vi, vk], vk, idx[vi])
            val[vi] = T.Select(val[vi] < A[vi, vk], A[vi, vk], val[vi])
