# 2x2 max pooling with stride 2 over NCHW.
@T.prim_func
def main(X: T.Buffer((1, 16, 32, 32), "float32"), Y: T.Buffer((1, 16, 16, 16), "float32")):
    for n, c, h, w, rh, rw in T.grid(1, 16, 16, 16, 2, 2):
        with T.block("pool_max"):
            v_n, v_c, v_h, v_w, v_rh, v_rw = T.axis.remap("SSSSRR", [n, c, h, w, rh, rw])
            T.reads(X[v_n, v_c, v_h * 2 + v_rh, v_w * 2 + v_rw])
            T.writes(Y[v_n, v_c, v_h, v_w])
            with T.init():
                Y[v_n, v_c, v_h, v_w] = T.float32(-3.4028234663852886e+38)
            Y[v_n, v_c, v_h, v_w] = T.max(Y[v_n, v_c, v_h, v_w], X[v_n, v_c, v_h * 2 + v_rh, v_w * 2 + v_rw])
