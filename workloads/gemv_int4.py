# Int4-weight matrix-vector product (weight-only quantisation):
#   W[i, j] = (((Wq[i, j // 8] >> (4 * (j % 8))) & 15) - 8) * scale[i, j // 128]
#   y[i]    = sum_k W[i, k] * x[k]
# Packing: eight unsigned 4-bit values per uint32, element j of a row in bits
# 4*(j%8) .. 4*(j%8)+3 of word j // 8 (the lowest nibble first); the stored
# value q in [0, 16) means q - 8. One float16 scale per row and group of 128
# consecutive k. Word and group counts round up, so k need not be a multiple
# of 8 or 128 (the small size is not).
# The dequantised weight W is an intermediate buffer (block "decode") that a
# rule can inline into the gemv.
# dtypes: uint32 weights, float16 scales, x and y; float32 accumulator, then an
# epilogue block casts to float16. Symbolic: m (rows), k.
@T.prim_func
def main(wq: T.handle, scale_h: T.handle, x_h: T.handle, y_h: T.handle):
    T.func_attr({"tir.noalias": True})
    m = T.int32()
    k = T.int32()
    Wq = T.match_buffer(wq, (m, (k + 7) // 8), "uint32")
    scale = T.match_buffer(scale_h, (m, (k + 127) // 128), "float16")
    x = T.match_buffer(x_h, (k,), "float16")
    y = T.match_buffer(y_h, (m,), "float16")
    W = T.alloc_buffer((m, k), "float16")
    acc = T.alloc_buffer((m,), "float32")
    for i, j in T.grid(m, k):
        with T.block("decode"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            W[v_i, v_j] = (T.Cast("float16", T.bitwise_and(T.shift_right(Wq[v_i, v_j // 8], T.Cast("uint32", v_j % 8 * 4)), T.uint32(15))) - T.float16(8)) * scale[v_i, v_j // 128]
    for i, r in T.grid(m, k):
        with T.block("acc"):
            v_i, v_r = T.axis.remap("SR", [i, r])
            with T.init():
                acc[v_i] = T.float32(0)
            acc[v_i] = acc[v_i] + T.Cast("float32", W[v_i, v_r]) * T.Cast("float32", x[v_r])
    for i in range(m):
        with T.block("y"):
            v_i = T.axis.remap("S", [i])
            y[v_i] = T.Cast("float16", acc[v_i])
