//===- tests/codegen/CompactBuffersTest.cpp - lower::compact_buffers ---------===//
//
// Function-level "shared"/"local" buffers (what cache_read/cache_write
// allocate, at the shape of the cached buffer) shrink to the box their
// accesses touch: per thread block for shared, per thread for local, with an
// origin that may move with a serial loop above the accesses when the boxes
// of its iterations are disjoint; a sliding window keeps its full size;
// storage_align pads the strides.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Passes.h"
#include "tessera/script/Parser.h"

using namespace tessera;

namespace {

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

/// Row sums of A, 16 rows per block of 16 threads, A staged 16 x 8 per step
/// of k0 through a function-level (64, 64) shared copy; `align` is the
/// fetch block's annotation.
std::string row_sums(const std::string &align) {
  return R"(
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64,), "float32")):
    A_shared = T.alloc_buffer((64, 64), scope="shared")
    acc = T.alloc_buffer((64,), scope="local")
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("init"):
                v = T.axis.spatial(64, bx * 16 + tx)
                acc[v] = T.float32(0)
        for k0 in range(8):
            for ax1 in range(8):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    with T.block("fetch"):
                        v0 = T.axis.spatial(64, bx * 16 + tx)
                        v1 = T.axis.spatial(64, k0 * 8 + ax1)
                        )" +
         align + R"(
                        A_shared[v0, v1] = A[v0, v1]
            for tx in T.thread_binding(16, thread="threadIdx.x"):
                for k1 in range(8):
                    with T.block("sum"):
                        v = T.axis.spatial(64, bx * 16 + tx)
                        vk = T.axis.reduce(64, k0 * 8 + k1)
                        acc[v] = acc[v] + A_shared[v, vk]
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            with T.block("store"):
                v = T.axis.spatial(64, bx * 16 + tx)
                B[v] = acc[v]
)";
}

TEST(CompactBuffers, SharedPerBlockLocalPerThreadOriginMovesWithTheKStep) {
  lower::LoweredFunc f = lower::lower(script::parse_func(row_sums("T.reads(A[v0, v1])")));
  std::string text = lower::print(f);
  EXPECT_TRUE(contains(text, "A_shared = T.alloc_buffer((128,), scope=\"shared\")")) << text;
  EXPECT_TRUE(contains(text, "acc = T.alloc_buffer((1,), scope=\"local\")")) << text;
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "A_shared[tx * 8 + ax1] = A[")) << cuda;
  EXPECT_TRUE(contains(cuda, "acc[0] = acc[0] + A_shared[tx * 8 + k1];")) << cuda;
}

TEST(CompactBuffers, StorageAlignPadsTheRowPitch) {
  std::string text = codegen::codegen_cuda(
      lower::lower(script::parse_func(row_sums("T.block_attr({\"buffer_dim_align\": [[0, 0, 32, 4]]})"))));
  // Rows of 8 floats padded to a pitch of 36 (36 % 32 == 4): 15 * 36 + 8.
  EXPECT_TRUE(contains(text, "float A_shared[548];")) << text;
  EXPECT_TRUE(contains(text, "A_shared[tx * 36 + ax1] = A[")) << text;
}

TEST(CompactBuffers, OverlappingBoxesKeepTheWholeBuffer) {
  // Step k reads S[4k .. 4k + 8), half of it written by step k - 1: moving
  // the origin with k (by 4, less than the box's 8) would lose those values,
  // so S keeps its 64 elements.
  lower::LoweredFunc f = lower::lower(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((15,), "float32")):
    S = T.alloc_buffer((64,), scope="shared")
    for tx in T.thread_binding(1, thread="threadIdx.x"):
        for k in range(15):
            for i in range(8):
                with T.block("fill"):
                    vk, vi = T.axis.remap("SS", [k, i])
                    T.where(k < 1 or 4 <= i)
                    S[vk * 4 + vi] = A[vk * 4 + vi]
            for j in range(8):
                with T.block("win"):
                    vk, vj = T.axis.remap("SR", [k, j])
                    with T.init():
                        B[vk] = T.float32(0)
                    B[vk] = B[vk] + S[vk * 4 + vj]
)"));
  std::string text = lower::print(f);
  EXPECT_TRUE(contains(text, "S = T.alloc_buffer((64,), scope=\"shared\")")) << text;
}

TEST(CompactBuffers, OriginMayUseTheKernelsSymbolicShapes) {
  // Tiles of a fused (row tile, column tile) block loop over an n x n
  // matrix: the tile's origin divides blockIdx.x by the symbolic tile count,
  // a kernel parameter every access sees, so the copy still shrinks to its
  // 4 x 4 tile (it could not keep the symbolic n x n shape).
  lower::LoweredFunc f = lower::lower(script::parse_func(R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, n))
    B = T.match_buffer(b, (n, n))
    S = T.alloc_buffer((n, n), scope="shared")
    for bx in T.thread_binding((n + 3) // 4 * ((n + 3) // 4), thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                with T.block("fetch"):
                    v0 = T.axis.spatial(n, bx // ((n + 3) // 4) * 4 + ty)
                    v1 = T.axis.spatial(n, bx % ((n + 3) // 4) * 4 + tx)
                    T.where(bx // ((n + 3) // 4) * 4 + ty < n and bx % ((n + 3) // 4) * 4 + tx < n)
                    S[v0, v1] = A[v0, v1]
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for tx in T.thread_binding(4, thread="threadIdx.x"):
                with T.block("store"):
                    v0 = T.axis.spatial(n, bx // ((n + 3) // 4) * 4 + tx)
                    v1 = T.axis.spatial(n, bx % ((n + 3) // 4) * 4 + ty)
                    T.where(bx // ((n + 3) // 4) * 4 + tx < n and bx % ((n + 3) // 4) * 4 + ty < n)
                    B[v1, v0] = S[v0, v1]
)"));
  std::string text = lower::print(f);
  EXPECT_TRUE(contains(text, "S = T.alloc_buffer((16,), scope=\"shared\")")) << text;
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_TRUE(contains(cuda, "S[ty * 4 + tx] = A[")) << cuda;
  EXPECT_TRUE(contains(cuda, "= S[tx * 4 + ty];")) << cuda;
}

}  // namespace
