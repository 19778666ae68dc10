//===- SetScopeTest.cpp - set_scope and storage_align ----------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;

TEST(SetScope, IntermediateToShared) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  sch.set_scope(sch.get_block("B"), 0, "shared");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "set_scope", "block": "B", "buffer_index": 0, "scope": "shared"})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), scope="shared")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)
)");
}

TEST(StorageAlign, RecordsABlockAnnotation) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  BlockRef b = sch.get_block("B");
  sch.storage_align(b, 0, 0, 32, 8);
  sch.storage_align(b, 0, 1, 32, 1);
  sch.storage_align(b, 0, 0, 16, 1);  // replaces the axis-0 entry
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "storage_align", "block": "B", "buffer_index": 0, "axis": 0, "factor": 16, "offset": 1})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.block_attr({"buffer_dim_align": [[0, 1, 32, 1], [0, 0, 16, 1]]})
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] * T.float32(2)
)");
}

TEST(SetScopeError, BufferIndexOutOfRange) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<BufferIndexOutOfRangeError>(sch, [&] { sch.set_scope(b, 1, "shared"); },
                                                    "write buffer index 1 is out of range: block 'B' writes 1 buffer");
  expect_schedule_error<BufferIndexOutOfRangeError>(sch, [&] { sch.storage_align(b, 3, 0, 32, 1); },
                                                    "write buffer index 3 is out of range");
}

TEST(SetScopeError, InvalidStorageScope) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<InvalidStorageScopeError>(sch, [&] { sch.set_scope(b, 0, "shred"); },
                                                  "invalid storage scope 'shred'");
}

TEST(SetScopeError, ParameterBuffer) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<OutputBlockError>(sch, [&] { sch.set_scope(c, 0, "shared"); },
                                          "cannot change the scope of 'C': it is a parameter of function 'main'");
}

TEST(StorageAlignError, InvalidAlign) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<InvalidStorageAlignError>(sch, [&] { sch.storage_align(b, 0, 2, 32, 1); },
                                                  "axis 2 is out of range for the 2-dimensional buffer 'B'");
  expect_schedule_error<InvalidStorageAlignError>(sch, [&] { sch.storage_align(b, 0, 0, 0, 0); },
                                                  "factor 0 is not positive");
  expect_schedule_error<InvalidStorageAlignError>(sch, [&] { sch.storage_align(b, 0, 0, 32, 32); },
                                                  "offset 32 is not in [0, 32)");
}

}  // namespace
}  // namespace tessera::test
