//===- tests/rules/Conv2dPrograms.h - Convolutions the rule tests share -----===//
//
// Programs the conv2d rule's tests (the interpreter's, the SIMT emulator's)
// both run.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tessera::test {

/// Stride 2 x 2, dilation 2 x 3, a 3 x 2 window, no padding, float32.
inline const char *kStridedConv2d = R"(
@T.prim_func
def main(I: T.Buffer((2, 13, 15, 4), "float32"), W: T.Buffer((3, 2, 4, 6), "float32"), O: T.Buffer((2, 5, 6, 6), "float32")):
    T.func_attr({"tir.noalias": True})
    for b, y, x, o, r, s, c in T.grid(2, 5, 6, 6, 3, 2, 4):
        with T.block("O"):
            vb, vy, vx, vo, vr, vs, vc = T.axis.remap("SSSSRRR", [b, y, x, o, r, s, c])
            with T.init():
                O[vb, vy, vx, vo] = T.float32(0)
            O[vb, vy, vx, vo] = O[vb, vy, vx, vo] + I[vb, vy * 2 + vr * 2, vx * 2 + vs * 3, vc] * W[vr, vs, vc, vo]
)";

}  // namespace tessera::test
