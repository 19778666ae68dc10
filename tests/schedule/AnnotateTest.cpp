//===- AnnotateTest.cpp - annotate and unannotate --------------------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;

TEST(Annotate, LoopAndBlock) {
  ir::PrimFunc f = parse(kMatmul);
  Schedule sch = make_schedule(f);
  BlockRef c = sch.get_block("C");
  auto l = sch.get_loops(c);
  sch.annotate(l[2], "software_pipeline_stage", ir::AnnValue::List{0, 0, 1});
  sch.annotate(l[0], "pragma_auto_unroll_max_step", 16);
  sch.annotate(c, "meta_schedule.tiling_structure", "SSRSRS");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((64, 48), "float32"), B: T.Buffer((48, 80), "float32"), C: T.Buffer((64, 80), "float32")):
    for i in T.serial(64, annotations={"pragma_auto_unroll_max_step": 16}):
        for j in range(80):
            for k in T.serial(48, annotations={"software_pipeline_stage": [0, 0, 1]}):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)");
  EXPECT_EQ(Trace::dump(sch.trace().instructions()[2]),
            R"({"op": "annotate", "loop": "k", "key": "software_pipeline_stage", "value": [0, 0, 1]})");
  EXPECT_EQ(Trace::dump(sch.trace().instructions()[4]),
            R"({"op": "annotate", "block": "C", "key": "meta_schedule.tiling_structure", "value": "SSRSRS"})");
}

TEST(Annotate, UnannotateRestores) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  sch.annotate(l[0], "x", true);
  sch.annotate(l[0], "x", 2.5);  // replaces
  EXPECT_EQ(sch.get(l[0]).as<ir::For>()->annotations.at("x"), ir::AnnValue(2.5));
  sch.unannotate(l[0], "x");
  check_schedule(f, sch, kElementwise);
}

TEST(AnnotateError, EmptyKey) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<InvalidAnnotationKeyError>(sch, [&] { sch.annotate(l[0], "", 1); },
                                                   "cannot annotate loop 'i' with an empty key");
}

TEST(UnannotateError, NotFound) {
  Schedule sch = make_schedule(parse(kElementwise));
  BlockRef b = sch.get_block("B");
  sch.annotate(b, "a", 1);
  expect_schedule_error<AnnotationNotFoundError>(sch, [&] { sch.unannotate(b, "b"); },
                                                 "block 'B' has no annotation 'b' (it has 'a')");
}

}  // namespace
}  // namespace tessera::test
