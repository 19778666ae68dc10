# Gemv with int4 weights packed two per uint8 byte, dequantised with shifts,
# masks and a per-row float16 scale; float32 accumulation.
@T.prim_func
def main(W: T.Buffer((4096, 2048), "uint8"), S: T.Buffer((4096,), "float16"), x: T.Buffer((4096,), "float16"), y: T.Buffer((4096,), "float16")):
    T.func_attr({"tir.noalias": True})
    for i_0 in T.thread_binding(32, thread="blockIdx.x"):
        for i_1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("row"):
                vi = T.axis.spatial(4096, i_0 * 128 + i_1)
                acc = T.alloc_buffer((1,), scope="local")
                for k in range(4096):
                    with T.block("dot"):
                        vk = T.axis.reduce(4096, k)
                        with T.init():
                            acc[0] = T.float32(0)
                        acc[0] = acc[0] + T.Cast("float32", T.Cast("float16", T.Cast("int32", T.shift_right(W[vi, vk // 2], T.Cast("uint8", vk % 2 * 4)) & T.uint8(15)) - 8) * S[vi] * x[vk])
                with T.block("store"):
                    y[vi] = T.Cast("float16", acc[0])
