//===- CacheReadWriteTest.cpp - cache_read and cache_write -----------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

/// The matmul with its regions spelled out as TVM prints them (reads: A, B).
const char *kMatmulRW = R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

TEST(CacheRead, InputOfAMatmul) {
  ir::PrimFunc f = parse(kMatmulRW);
  Schedule sch = make_schedule(f);
  BlockRef as = sch.cache_read(sch.get_block("C"), 0, "shared");
  EXPECT_EQ(as.name, "A_shared");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "cache_read", "block": "C", "buffer_index": 0, "scope": "shared", "out": "A_shared"})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    A_shared = T.alloc_buffer((64, 48), scope="shared")
    for ax0, ax1 in T.grid(64, 48):
        with T.block("A_shared"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_shared[v0, v1] = A[v0, v1]
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A_shared[vi, vk], B[vk, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]
)");
}

TEST(CacheRead, IntermediateGoesAfterItsProducer) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  sch.cache_read(sch.get_block("C"), 0, "local", "BL");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    B_local = T.alloc_buffer((16, 16), scope="local")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for ax0, ax1 in T.grid(16, 16):
        with T.block("BL"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B_local[v0, v1] = B[v0, v1]
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B_local[vi, vj] * T.float32(2)
)");
}

TEST(CacheRead, PartialRegionIsOffset) {
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi + 4]
)");
  Schedule sch = make_schedule(f);
  sch.cache_read(sch.get_block("C"), 0, "shared.dyn");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):
    A_shared_dyn = T.alloc_buffer((16,), scope="shared.dyn")
    for ax0 in range(8):
        with T.block("A_shared_dyn"):
            v0 = T.axis.spatial(16, ax0 + 4)
            A_shared_dyn[v0] = A[v0]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A_shared_dyn[vi + 4]
)");
}

TEST(CacheRead, NonDividingSplitIsClampedToTheShape) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  sch.split(l[0], {nullopt, 48});  // 3 * 48 = 144 > 128
  sch.cache_read(sch.get_block("B"), 0, "shared");
  check_schedule(f, sch, nullptr);
  auto copy = sch.get_loops(sch.get_block("A_shared"));
  EXPECT_TRUE(ir::is_const_int(sch.get(copy[0]).as<ir::For>()->extent, 128));
}

TEST(CacheWrite, MatmulAccumulatesLocally) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  BlockRef wb = sch.cache_write(sch.get_block("C"), 0, "local");
  EXPECT_EQ(wb.name, "C_local");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    C_local = T.alloc_buffer((64, 80), scope="local")
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C_local[vi, vj] = T.float32(0)
            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
    for ax0, ax1 in T.grid(64, 80):
        with T.block("C_local"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_local[v0, v1]
)");
}

TEST(CacheWrite, TiledNonDividing) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  auto l = sch.get_loops(c);
  sch.split(l[1], {nullopt, 32});  // 80 = 3 * 32 - 16
  sch.cache_write(c, 0, "local");
  check_schedule(f, sch, nullptr);
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(CacheError, BufferIndexOutOfRange) {
  Schedule sch = make_schedule(parse(kMatmulRW));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<BufferIndexOutOfRangeError>(sch, [&] { sch.cache_read(c, 2, "shared"); },
                                                    "read buffer index 2 is out of range: block 'C' reads 2 buffers");
  expect_schedule_error<BufferIndexOutOfRangeError>(sch, [&] { sch.cache_write(c, -1, "local"); },
                                                    "write buffer index -1 is out of range");
}

TEST(CacheError, InvalidStorageScope) {
  Schedule sch = make_schedule(parse(kMatmulRW));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<InvalidStorageScopeError>(sch, [&] { sch.cache_read(c, 0, "texture"); },
                                                  "invalid storage scope 'texture'");
  expect_schedule_error<InvalidStorageScopeError>(sch, [&] { sch.cache_write(c, 0, "warp"); },
                                                  "invalid storage scope 'warp'");
}

TEST(CacheReadWrite, ACopyInTheBuffersOwnScopeAsTvmMakesIt) {
  // TVM's own tests cache a global parameter into "global" (A -> A_global):
  // a copy in a buffer of the function, e.g. to repack it for the CPU.
  ir::PrimFunc f = parse(kMatmulRW);
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  EXPECT_EQ(sch.cache_read(c, 1, "global").name, "B_global");
  EXPECT_EQ(sch.cache_write(c, 0, "global").name, "C_global");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    B_global = T.alloc_buffer((48, 80))
    C_global = T.alloc_buffer((64, 80))
    for ax0, ax1 in T.grid(48, 80):
        with T.block("B_global"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            B_global[v0, v1] = B[v0, v1]
    for i, j, k in T.grid(64, 80, 48):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B_global[vk, vj])
            T.writes(C_global[vi, vj])
            with T.init():
                C_global[vi, vj] = T.float32(0)
            C_global[vi, vj] = C_global[vi, vj] + A[vi, vk] * B_global[vk, vj]
    for ax0, ax1 in T.grid(64, 80):
        with T.block("C_global"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            C[v0, v1] = C_global[v0, v1]
)");
}

TEST(CacheError, CachedBufferWritten) {
  // Without its init (decomposed), the update block C reads C: read buffer 0
  // is C, which C writes.
  Schedule sch = make_schedule(parse(kMatmul));
  BlockRef c = sch.get_block("C");
  sch.decompose_reduction(c, sch.get_loops(c)[0]);
  expect_schedule_error<CachedBufferWrittenError>(sch, [&] { sch.cache_read(c, 0, "shared"); },
                                                  "block 'C' itself writes it");
}

TEST(CacheRead, TheTutorialCallCachesTheFirstInputOfAReduction) {
  // TVM's rule: a block with T.init() does not read what it writes, so read
  // buffer 0 of a matmul is A, as in every TensorIR tutorial.
  Schedule sch = make_schedule(parse(kMatmul));
  EXPECT_EQ(sch.cache_read(sch.get_block("C"), 0, "shared").name, "A_shared");
  EXPECT_EQ(sch.cache_read(sch.get_block("C"), 1, "shared").name, "B_shared");
}

TEST(CacheError, BufferHasOtherWriter) {
  Schedule sch = make_schedule(parse(kMatmul));
  BlockRef c = sch.get_block("C");
  sch.decompose_reduction(c, sch.get_loops(c)[0]);
  expect_schedule_error<BufferHasOtherWriterError>(sch, [&] { sch.cache_write(c, 0, "local"); },
                                                   "block 'C_init' writes it too, besides block 'C'");
}

}  // namespace
}  // namespace tessera::test
