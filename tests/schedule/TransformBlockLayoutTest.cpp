//===- TransformBlockLayoutTest.cpp - transform_block_layout ---------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;

/// A 1-d convolution read through a reindexed, [x, w] laid-out window.
const char *kWindow = R"(
@T.prim_func
def main(A: T.Buffer((10,), "float32"), W: T.Buffer((3,), "float32"), C: T.Buffer((8,), "float32")):
    for x, s in T.grid(8, 3):
        with T.block("C"):
            vx, vs = T.axis.remap("SR", [x, s])
            with T.init():
                C[vx] = T.float32(0)
            C[vx] = C[vx] + A[vx + vs] * W[vs]
)";

/// A batched matmul whose batch and row iters fuse into one spatial iter.
const char *kBatched = R"(
@T.prim_func
def main(A: T.Buffer((2, 3, 4), "float32"), B: T.Buffer((4, 5), "float32"), C: T.Buffer((2, 3, 5), "float32")):
    for b, i, j, k in T.grid(2, 3, 5, 4):
        with T.block("C"):
            vb, vi, vj, vk = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[vb, vi, vj] = T.float32(0)
            C[vb, vi, vj] = C[vb, vi, vj] + A[vb, vi, vk] * B[vk, vj]
)";

TEST(TransformBlockLayout, FusedIterReadsAFusedLayoutPlainly) {
  // The elementwise B laid out flat, then its writer re-iterated flat: the
  // store becomes B[v], the read of A goes through the inverse.
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  IndexMap flat = IndexMap::parse("lambda i, j: (i * 16 + j,)");
  sch.transform_layout(sch.get_block("B"), 0, true, flat);
  sch.transform_block_layout(sch.get_block("B"), flat);
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"J({"op": "transform_block_layout", "block": "B", "index_map": "lambda i, j: (i * 16 + j,)"})J");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((256,))
    for i_j_fused in range(256):
        with T.block("B"):
            vi_vj = T.axis.spatial(256, i_j_fused)
            B[vi_vj] = A[vi_vj // 16, vi_vj % 16] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi * 16 + vj] * T.float32(2)
)");
}

TEST(TransformBlockLayout, ReductionKeepsItsKindsAndInit) {
  // (b, i) fuse into one spatial iter; j and k stay (their loops too), k
  // moves before j: the new loops follow the outputs.
  ir::PrimFunc f = parse(kBatched);
  Schedule sch = make_schedule(f);
  auto k_loop = sch.get_loops(sch.get_block("C"))[3];
  sch.transform_block_layout(sch.get_block("C"), IndexMap::parse("lambda b, i, j, k: (b * 3 + i, k, j)"));
  EXPECT_EQ(sch.get_loops(sch.get_block("C"))[1], k_loop) << "an output that is one iter keeps its loop";
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((2, 3, 4), "float32"), B: T.Buffer((4, 5), "float32"), C: T.Buffer((2, 3, 5), "float32")):
    for b_i_fused in range(6):
        for k in range(4):
            for j in range(5):
                with T.block("C"):
                    vb_vi = T.axis.spatial(6, b_i_fused)
                    vk = T.axis.reduce(4, k)
                    vj = T.axis.spatial(5, j)
                    with T.init():
                        C[vb_vi // 3, vb_vi % 3, vj] = T.float32(0)
                    C[vb_vi // 3, vb_vi % 3, vj] = C[vb_vi // 3, vb_vi % 3, vj] + A[vb_vi // 3, vb_vi % 3, vk] * B[vk, vj]
)");
}

TEST(TransformBlockLayout, Im2colWindow) {
  // The conv's window operand reindexed to [x, s], laid out flat and its copy
  // re-iterated flat, then inlined back: the same numbers.
  ir::PrimFunc f = parse(kWindow);
  Schedule sch = make_schedule(f);
  BlockRef copy = sch.reindex(sch.get_block("C"), 0, false);
  IndexMap flat = IndexMap::parse("lambda x, s: (x * 3 + s,)");
  sch.transform_layout(copy, 0, true, flat);
  sch.transform_block_layout(copy, flat);
  check_schedule(f, sch, nullptr);
  sch.compute_inline(copy);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((10,), "float32"), W: T.Buffer((3,), "float32"), C: T.Buffer((8,), "float32")):
    for x, s in T.grid(8, 3):
        with T.block("C"):
            vx, vs = T.axis.remap("SR", [x, s])
            with T.init():
                C[vx] = T.float32(0)
            C[vx] = C[vx] + A[(vx * 3 + vs) // 3 + (vx * 3 + vs) % 3] * W[vs]
)");
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(TransformBlockLayoutError, NotPlainLoopNest) {
  Schedule sch = make_schedule(parse(kBatched));
  BlockRef c = sch.get_block("C");
  auto loops = sch.get_loops(c);
  sch.bind(loops[0], "blockIdx.x");
  IndexMap same = IndexMap::parse("lambda b, i, j, k: (b, i, j, k)");
  expect_schedule_error<NotPlainLoopNestError>(
      sch, [&] { sch.transform_block_layout(c, same); },
      "block 'C' is not a plain loop nest: loop 'b' is not serial");
  Schedule split = make_schedule(parse(kBatched));
  BlockRef c2 = split.get_block("C");
  split.split(split.get_loops(c2)[0], {std::nullopt, 2});
  expect_schedule_error<NotPlainLoopNestError>(
      split, [&] { split.transform_block_layout(c2, same); }, "loop 'b_0' binds no iter var");
}

TEST(TransformBlockLayoutError, InvalidIndexMap) {
  Schedule sch = make_schedule(parse(kBatched));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<InvalidIndexMapError>(
      sch, [&] { sch.transform_block_layout(c, IndexMap::parse("lambda b, i: (b, i)")); },
      "it takes 2 indices but block 'C' has 4 iter vars");
}

TEST(TransformBlockLayoutError, NonBijective) {
  Schedule sch = make_schedule(parse(kBatched));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<NonBijectiveIndexMapError>(
      sch,
      [&] { sch.transform_block_layout(c, IndexMap::parse("lambda b, i, j, k: (b * 3 + i, j // 2, k)")); },
      "is not a bijection of the iteration space of block 'C'");
  expect_schedule_error<NonBijectiveIndexMapError>(
      sch, [&] { sch.transform_block_layout(c, IndexMap::parse("lambda b, i, j, k: (b, i, j, k + 1)")); },
      "is not a bijection of the iteration space of block 'C'");
}

TEST(TransformBlockLayoutError, MixedIterKinds) {
  Schedule sch = make_schedule(parse(kBatched));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<MixedIterKindError>(
      sch, [&] { sch.transform_block_layout(c, IndexMap::parse("lambda b, i, j, k: (b, i, j * 4 + k)")); },
      "output 'j * 4 + k' combines iter vars of different kinds (S and R)");
}

}  // namespace
}  // namespace tessera::test
