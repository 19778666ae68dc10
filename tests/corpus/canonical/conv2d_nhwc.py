# from tvm.script import tir as T

@T.prim_func
def main(inputs: T.Buffer((1, 56, 56, 64), "float16"), weight: T.Buffer((3, 3, 64, 64), "float16"), conv2d_nhwc: T.Buffer((1, 56, 56, 64), "float32")):
    T.func_attr({"tir.noalias": True})
    PadInput = T.alloc_buffer((1, 58, 58, 64), "float16")
    for i0, i1, i2, i3 in T.grid(1, 58, 58, 64):
        with T.block("PadInput"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            T.reads(inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3])
            T.writes(PadInput[v_i0, v_i1, v_i2, v_i3])
            PadInput[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(1 <= v_i1 and v_i1 < 57 and 1 <= v_i2 and v_i2 < 57, inputs[v_i0, v_i1 - 1, v_i2 - 1, v_i3], T.float16(0.0))
    for n, h, w, co, rh, rw, rc in T.grid(1, 56, 56, 64, 3, 3, 64):
        with T.block("conv2d_nhwc"):
            v_n, v_h, v_w, v_co, v_rh, v_rw, v_rc = T.axis.remap("SSSSRRR", [n, h, w, co, rh, rw, rc])
            T.reads(PadInput[v_n, v_h + v_rh, v_w + v_rw, v_rc], weight[v_rh, v_rw, v_rc, v_co])
            T.writes(conv2d_nhwc[v_n, v_h, v_w, v_co])
            with T.init():
                conv2d_nhwc[v_n, v_h, v_w, v_co] = T.float32(0.0)
            conv2d_nhwc[v_n, v_h, v_w, v_co] = conv2d_nhwc[v_n, v_h, v_w, v_co] + T.Cast("float32", PadInput[v_n, v_h + v_rh, v_w + v_rw, v_rc]) * T.Cast("float32", weight[v_rh, v_rw, v_rc, v_co])
