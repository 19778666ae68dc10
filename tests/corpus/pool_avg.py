# 3x3 average pooling with stride 1 and no padding.
@T.prim_func
def main(X: T.Buffer((8, 30, 30), "float32"), Y: T.Buffer((8, 28, 28), "float32")):
    S = T.alloc_buffer((8, 28, 28))
    for c, h, w, rh, rw in T.grid(8, 28, 28, 3, 3):
        with T.block("pool_sum"):
            vc, vh, vw, vrh, vrw = T.axis.remap("SSSRR", [c, h, w, rh, rw])
            with T.init():
                S[vc, vh, vw] = T.float32(0)
            S[vc, vh, vw] = S[vc, vh, vw] + X[vc, vh + vrh, vw + vrw]
    for c, h, w in T.grid(8, 28, 28):
        with T.block("pool_avg"):
            vc, vh, vw = T.axis.remap("SSS", [c, h, w])
            Y[vc, vh, vw] = S[vc, vh, vw] / T.float32(9)
