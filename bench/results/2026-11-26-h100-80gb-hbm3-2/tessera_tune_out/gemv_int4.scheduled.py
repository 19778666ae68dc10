# from tvm.script import tir as T

@T.prim_func
def main(Wq: T.Buffer((37, 38), "uint32"), scale: T.Buffer((37, 3), "float16"), x: T.Buffer((300,), "float16"), y: T.Buffer((37,), "float16")):
    T.func_attr({"tir.noalias": True})
    acc = T.alloc_buffer((37,), scope="shared")
    for bx in T.thread_binding(19, thread="blockIdx.x"):
        for ty in T.thread_binding(2, thread="threadIdx.y"):
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for ko in range(1):
                    for rs in T.unroll(4):
                        for v in T.unroll(8):
                            with T.block("acc"):
                                v_i = T.axis.spatial(37, bx * 2 + ty)
                                v_r = T.axis.reduce(300, tx * 32 + rs * 8 + v)
                                T.where(bx * 2 + ty < 37 and tx * 32 + rs * 8 + v < 300)
                                T.reads(acc[v_i], Wq[v_i, v_r // 8], scale[v_i, v_r // 128], x[v_r])
                                T.writes(acc[v_i])
                                with T.init():
                                    acc[v_i] = T.float32(0.0)
                                acc[v_i] = acc[v_i] + T.Cast("float32", (T.Cast("float16", Wq[v_i, v_r // 8] >> T.Cast("uint32", v_r % 8 * 4) & T.uint32(15)) - T.float16(8.0)) * scale[v_i, v_r // 128]) * T.Cast("float32", x[v_r])
        for y_o in range(1):
            for y_ty in T.thread_binding(2, thread="threadIdx.y"):
                for y_tx in T.thread_binding(16, thread="threadIdx.x"):
                    with T.block("y"):
                        v_i = T.axis.spatial(37, y_ty * 16 + bx * 2 + y_tx)
                        T.where(y_ty * 16 + bx * 2 + y_tx < 37 and y_ty * 16 + y_tx < 2)
                        T.reads(acc[v_i])
                        T.writes(y[v_i])
                        y[v_i] = T.Cast("float16", acc[v_i])
