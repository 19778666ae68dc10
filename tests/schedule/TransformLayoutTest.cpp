//===- TransformLayoutTest.cpp - transform_layout --------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;

IndexMap tile4() { return IndexMap::parse("lambda i, j: (i // 4, j // 4, i % 4, j % 4)"); }

TEST(TransformLayout, IntermediateIsTiled) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  sch.transform_layout(sch.get_block("B"), 0, true, tile4());
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "transform_layout", "block": "B", "buffer_index": 0, "write": true, )"
            R"J("index_map": "lambda i, j: (i // 4, j // 4, i % 4, j % 4)"})J");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((4, 4, 4, 4))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi // 4, vj // 4, vi % 4, vj % 4] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi // 4, vj // 4, vi % 4, vj % 4] * T.float32(2)
)");
}

TEST(TransformLayout, TransposeFromTheReader) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  sch.transform_layout(sch.get_block("C"), 0, false, IndexMap::parse("lambda a, b: (b, a)"));
  check_schedule(f, sch, nullptr);
}

TEST(TransformLayout, IndexMapText) {
  IndexMap m = tile4();
  ASSERT_EQ(m.src.size(), 2u);
  ASSERT_EQ(m.dst.size(), 4u);
  EXPECT_EQ(m.str(), "lambda i, j: (i // 4, j // 4, i % 4, j % 4)");
  EXPECT_EQ(IndexMap::parse("lambda i: (i // 4, i % 4)").str(), "lambda i: (i // 4, i % 4)");
  EXPECT_EQ(IndexMap::parse("lambda i: i").str(), "lambda i: (i,)");
  EXPECT_THROW(IndexMap::parse("i: (i,)"), UserError);
  EXPECT_THROW(IndexMap::parse("lambda i: (i +,)"), UserError);
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(TransformLayoutError, BufferIndexOutOfRange) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<BufferIndexOutOfRangeError>(sch, [&] { sch.transform_layout(b, 1, true, tile4()); },
                                                    "write buffer index 1 is out of range");
}

TEST(TransformLayoutError, ParamBuffer) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<ParamBufferLayoutError>(sch, [&] { sch.transform_layout(c, 0, true, tile4()); },
                                                "cannot change the layout of 'C': it is a parameter of function 'main'");
}

TEST(TransformLayoutError, InvalidIndexMap) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<InvalidIndexMapError>(
      sch, [&] { sch.transform_layout(b, 0, true, IndexMap::parse("lambda i: (i,)")); },
      "it takes 1 indices but 'B' has 2 dimensions");
}

TEST(TransformLayoutError, NonBijective) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<NonBijectiveIndexMapError>(
      sch, [&] { sch.transform_layout(b, 0, true, IndexMap::parse("lambda i, j: (i, j // 2)")); },
      "index map 'lambda i, j: (i, j // 2)' is not a bijection of the shape of 'B'");
  expect_schedule_error<NonBijectiveIndexMapError>(
      sch, [&] { sch.transform_layout(b, 0, true, IndexMap::parse("lambda i, j: (i + 1, j)")); },
      "is not a bijection of the shape of 'B'");
}

}  // namespace
}  // namespace tessera::test
