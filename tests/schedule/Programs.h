//===- Programs.h - TVMScript programs the schedule tests share ------------===//
#pragma once

#include <string>

#include "tessera/script/Parser.h"

namespace tessera::test {

/// B = A * 2 over 128x64.
inline const char *kElementwise = R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for i, j in T.grid(128, 64):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
)";

/// C = A @ B, 64x80x48 float32 (the issue's trace example).
inline const char *kMatmul = R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

/// B[i] = sum_k A[i, k], 32x96.
inline const char *kRowSum = R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), B: T.Buffer((32,), "float32")):
    for i, k in T.grid(32, 96):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
)";

/// B = A * alpha over a symbolic length n.
inline const char *kSymbolic = R"(
@T.prim_func
def main(var_A: T.handle, var_B: T.handle):
    n = T.int32()
    A = T.match_buffer(var_A, (n,))
    B = T.match_buffer(var_B, (n,))
    for i in range(n):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(3)
)";

/// Producer/consumer pair: B = A + 1, C = B * 2.
inline const char *kTwoStage = R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)
)";

/// C[i] = sum_k A[i, k] * B[k], 16x32.
inline const char *kGemv = R"(
@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 32):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * B[vk]
)";

/// Loop i holds two sibling loops j (so neither is i's only child), 8x8.
inline const char *kSiblingLoops = R"(
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i in range(8):
        for j in range(8):
            with T.block("A"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = T.float32(1)
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.float32(2)
)";

/// A reduction producer and its consumer: B[i] = sum_k A[i, k] (32x96), C = B * 2.
inline const char *kRowSumThenScale = R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), C: T.Buffer((32,), "float32")):
    B = T.alloc_buffer((32,))
    for i, k in T.grid(32, 96):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
    for i in range(32):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] * T.float32(2)
)";

/// One producer, two consumers: B = A, C = B, D = B over 16.
inline const char *kOneProducerTwoConsumers = R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32"), D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi]
    for i in range(16):
        with T.block("D"):
            vi = T.axis.remap("S", [i])
            D[vi] = B[vi]
)";

inline ir::PrimFunc parse(const char *text) { return script::parse_func(text); }

/// The corpus softmax (four blocks, loops named alike in every nest).
inline ir::PrimFunc softmax() {
  return script::parse_file(std::string(TESSERA_TEST_DATA_DIR) + "/corpus/softmax.py").funcs.at(0);
}

}  // namespace tessera::test
