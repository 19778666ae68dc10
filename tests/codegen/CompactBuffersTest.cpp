//===- tests/codegen/CompactBuffersTest.cpp - lower::compact_buffers --------===//
//
// Local and shared allocations shrink to the box their accesses touch: per
// thread (local), per thread block (shared), per iteration of the innermost
// loop around every access when iterations cannot share values; dimensions
// indexed from 0 keep the extent their author chose; a buffer whose
// iterations overlap (a value carried to the next iteration) is not shrunk
// per iteration.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/script/Parser.h"

using namespace tessera;

namespace {

/// The constant shape of allocation `name` after lowering (flattened, so one extent).
int64_t lowered_size(const lower::LoweredFunc &f, const std::string &name) {
  for (const ir::Buffer &b : f.allocs)
    if (b.name() == name) return *ir::as_const_int(b.shape()[0]);
  ADD_FAILURE() << "no allocation " << name;
  return -1;
}

// A cached row tile per step (what cache_read + compute_at leave): the
// local buffer has the whole matrix's shape, one step touches 8 elements.
const char *kStagedRows = R"(
@T.prim_func
def main(A: T.Buffer((64, 256), "float32"), B: T.Buffer((64,), "float32")):
    A_local = T.alloc_buffer((64, 256), scope="local")
    B_shared = T.alloc_buffer((64,), scope="shared")
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            for ko in range(32):
                for ax in range(8):
                    with T.block("A_local"):
                        v0 = T.axis.spatial(64, bx * 4 + ty)
                        v1 = T.axis.spatial(256, ko * 8 + ax)
                        A_local[v0, v1] = A[v0, v1]
                for v in range(8):
                    with T.block("B"):
                        vi = T.axis.spatial(64, bx * 4 + ty)
                        vk = T.axis.reduce(256, ko * 8 + v)
                        with T.init():
                            B_shared[vi] = T.float32(0)
                        B_shared[vi] = B_shared[vi] + A_local[vi, vk]
        for ty in T.thread_binding(4, thread="threadIdx.y"):
            with T.block("out"):
                vi = T.axis.spatial(64, bx * 4 + ty)
                B[vi] = B_shared[vi] * T.float32(2)
)";

TEST(CompactBuffers, LocalTilesPerStepSharedTilesPerBlock) {
  lower::LoweredFunc f = lower::lower(script::parse_func(kStagedRows));
  EXPECT_EQ(lowered_size(f, "A_local"), 8);   // one step of one thread
  EXPECT_EQ(lowered_size(f, "B_shared"), 4);  // the block's 4 rows
  std::string cuda = codegen::codegen_cuda(f);
  EXPECT_NE(cuda.find("A_local[ax] = A[bx * 1024 + ty * 256 + ko * 8 + ax];"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("B_shared[ty] = B_shared[ty] + A_local[v];"), std::string::npos) << cuda;
}

// Every access of s lies in loop i, but s[vi] reads what iteration i - 1
// wrote: one box per iteration of i would lose it.
const char *kCarried = R"(
@T.prim_func
def main(A: T.Buffer((32, 8), "float32"), B: T.Buffer((32, 8), "float32")):
    s = T.alloc_buffer((32, 9), scope="local")
    for tx in T.thread_binding(32, thread="threadIdx.x"):
        for i in range(8):
            with T.block("scan"):
                vt, vi = T.axis.remap("SS", [tx, i])
                s[vt, vi + 1] = T.if_then_else(vi == 0, T.float32(0), s[vt, vi]) + A[vt, vi]
            with T.block("out"):
                vt, vi = T.axis.remap("SS", [tx, i])
                B[vt, vi] = s[vt, vi + 1]
)";

TEST(CompactBuffers, ValuesCarriedAcrossIterationsKeepTheirStorage) {
  lower::LoweredFunc f = lower::lower(script::parse_func(kCarried));
  EXPECT_EQ(lowered_size(f, "s"), 9);  // one row per thread, all 9 elements
}

// A dimension indexed from 0 keeps its (padded) extent.
const char *kPadded = R"(
@T.prim_func
def main(A: T.Buffer((32, 32), "float32"), B: T.Buffer((32, 32), "float32")):
    tile = T.alloc_buffer((32, 33), scope="shared")
    for ty in T.thread_binding(32, thread="threadIdx.y"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("load"):
                vy, vx = T.axis.remap("SS", [ty, tx])
                tile[vy, vx] = A[vy, vx]
    for ty in T.thread_binding(32, thread="threadIdx.y"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            with T.block("store"):
                vy, vx = T.axis.remap("SS", [ty, tx])
                B[vy, vx] = tile[vx, vy]
)";

TEST(CompactBuffers, PaddingFromZeroIsKept) {
  lower::LoweredFunc f = lower::lower(script::parse_func(kPadded));
  EXPECT_EQ(lowered_size(f, "tile"), 32 * 33);
}

// A cache of a symbolic-size buffer becomes a constant tile (flatten_buffers
// would reject the symbolic local shape).
const char *kSymbolic = R"(
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    A_local = T.alloc_buffer((n,), scope="local")
    for bx in T.thread_binding((n + 127) // 128, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            for ax in range(4):
                with T.block("A_local"):
                    v = T.axis.spatial(n, bx * 128 + tx * 4 + ax)
                    T.where(bx * 128 + tx * 4 + ax < n)
                    A_local[v] = A[v]
            for ax in range(4):
                with T.block("B"):
                    v = T.axis.spatial(n, bx * 128 + tx * 4 + ax)
                    T.where(bx * 128 + tx * 4 + ax < n)
                    B[v] = A_local[v] + T.float32(1)
)";

TEST(CompactBuffers, SymbolicCachesBecomeConstantTiles) {
  lower::LoweredFunc f = lower::lower(script::parse_func(kSymbolic));
  EXPECT_EQ(lowered_size(f, "A_local"), 4);
}

}  // namespace
