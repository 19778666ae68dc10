# Mean over the last axis: sum then scale.
@T.prim_func
def main(A: T.Buffer((16, 4, 256), "float32"), M: T.Buffer((16, 4), "float32")):
    S = T.alloc_buffer((16, 4))
    for b, c, k in T.grid(16, 4, 256):
        with T.block("sum"):
            vb, vc, vk = T.axis.remap("SSR", [b, c, k])
            T.reads(A[vb, vc, vk])
            T.writes(S[vb, vc])
            with T.init():
                S[vb, vc] = T.float32(0)
            S[vb, vc] = S[vb, vc] + A[vb, vc, vk]
    for b, c in T.grid(16, 4):
        with T.block("mean"):
            vb, vc = T.axis.remap("SS", [b, c])
            T.reads(S[vb, vc])
            T.writes(M[vb, vc])
            M[vb, vc] = S[vb, vc] * T.float32(0.00390625)
