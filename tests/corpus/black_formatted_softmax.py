# A softmax as a user reformats TVM's output with black: the signature and
# calls split over lines inside brackets, closing brackets dedented below
# their opening line, trailing commas, comments and blank lines inside
# brackets, a backslash continuation.
# from tvm.script import tir as T


@T.prim_func
def main(
    A: T.Buffer((16, 256), "float32"),
    B: T.Buffer(
        (16, 256),
        "float32",
    ),
) -> None:
    T.func_attr(
        {
            "global_symbol": "main",  # the name TVM gives
            "tir.noalias": True,
        }
    )
    A_max = T.alloc_buffer(
        (16,),
    )
    A_sum = T.alloc_buffer((16,))
    for i, k in T.grid(
        16,

        256,
    ):
        with T.block("A_max"):
            v_i, v_k = T.axis.remap(
                "SR",
                [i, k],
            )
            with T.init():
                A_max[v_i] = T.float32(
                    -3.4028234663852886e38
                )
            A_max[v_i] = T.max(A_max[v_i], A[v_i, v_k])
    for i, k in T.grid(16, 256):
        with T.block("A_sum"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                A_sum[v_i] = T.float32(0)
            A_sum[v_i] = A_sum[v_i] + \
                T.exp(A[v_i, v_k] - A_max[v_i])
    for i, j in T.grid(16, 256):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = (
                T.exp(A[v_i, v_j] - A_max[v_i])
                / A_sum[v_i]
            )
