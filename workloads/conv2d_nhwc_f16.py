# 2-d convolution, NHWC input, HWIO weights, 3x3 window, stride 1, padding 1
# (output NHWC, same height and width), as two blocks: zero padding into an
# intermediate buffer, then the convolution
#   out[b, h, w, o] = sum_{r, s, c} pad[b, h + r, w + s, c] * weight[r, s, c, o]
# dtypes: float16 input and weights cast to a float32 accumulator, then an
# epilogue block casts to the float16 output.
# Symbolic: n (batch), h, w, ci (input channels), co (output channels).
@T.prim_func
def main(inp: T.handle, weight_h: T.handle, out_h: T.handle):
    T.func_attr({"tir.noalias": True})
    n = T.int32()
    h = T.int32()
    w = T.int32()
    ci = T.int32()
    co = T.int32()
    inputs = T.match_buffer(inp, (n, h, w, ci), "float16")
    weight = T.match_buffer(weight_h, (3, 3, ci, co), "float16")
    out = T.match_buffer(out_h, (n, h, w, co), "float16")
    pad = T.alloc_buffer((n, h + 2, w + 2, ci), "float16")
    acc = T.alloc_buffer((n, h, w, co), "float32")
    for b, y, x, c in T.grid(n, h + 2, w + 2, ci):
        with T.block("pad"):
            v_b, v_y, v_x, v_c = T.axis.remap("SSSS", [b, y, x, c])
            pad[v_b, v_y, v_x, v_c] = T.if_then_else(1 <= v_y and v_y < h + 1 and 1 <= v_x and v_x < w + 1, inputs[v_b, v_y - 1, v_x - 1, v_c], T.float16(0))
    for b, y, x, o, r, s, c in T.grid(n, h, w, co, 3, 3, ci):
        with T.block("acc"):
            v_b, v_y, v_x, v_o, v_r, v_s, v_c = T.axis.remap("SSSSRRR", [b, y, x, o, r, s, c])
            with T.init():
                acc[v_b, v_y, v_x, v_o] = T.float32(0)
            acc[v_b, v_y, v_x, v_o] = acc[v_b, v_y, v_x, v_o] + T.Cast("float32", pad[v_b, v_y + v_r, v_x + v_s, v_c]) * T.Cast("float32", weight[v_r, v_s, v_c, v_o])
    for b, y, x, o in T.grid(n, h, w, co):
        with T.block("out"):
            v_b, v_y, v_x, v_o = T.axis.remap("SSSS", [b, y, x, o])
            out[v_b, v_y, v_x, v_o] = T.Cast("float16", acc[v_b, v_y, v_x, v_o])
