//===- ScheduleTest.cpp - Lookups, handles, errors, rollback ---------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"
#include "tessera/ir/StructuralEqual.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

std::vector<std::string> names(const std::vector<LoopRef> &loops) {
  std::vector<std::string> out;
  for (const LoopRef &l : loops) out.push_back(l.name());
  return out;
}
std::vector<std::string> names(const std::vector<BlockRef> &blocks) {
  std::vector<std::string> out;
  for (const BlockRef &b : blocks) out.push_back(b.name);
  return out;
}
using Names = std::vector<std::string>;

TEST(Schedule, GetBlockAndLoops) {
  Schedule sch = make_schedule(parse(kMatmul));
  BlockRef c = sch.get_block("C");
  EXPECT_EQ(c.name, "C");
  EXPECT_EQ(names(sch.get_loops(c)), (Names{"i", "j", "k"}));
  EXPECT_TRUE(sch.get(c).is<ir::Block>());
  EXPECT_EQ(sch.trace().to_json(), R"([
  {"op": "get_block", "name": "C", "out": "C"},
  {"op": "get_loops", "block": "C", "out": ["i", "j", "k"]}
]
)");
}

TEST(Schedule, UnknownBlockListsTheNames) {
  Schedule sch = make_schedule(parse(kTwoStage));
  expect_schedule_error<BlockNotFoundError>(sch, [&] { sch.get_block("D"); },
                                            "no block named 'D' in function 'main'; the blocks are 'root', 'B', 'C'");
}

TEST(Schedule, RepeatedLoopNamesAreMadeUnique) {
  ir::PrimFunc f = softmax();
  Schedule sch = make_schedule(f);
  EXPECT_TRUE(structurally_equal_with_diff(sch.func(), f, "renamed", "original"));
  EXPECT_EQ(names(sch.get_loops(sch.get_block("T_softmax_maxelem"))), (Names{"i0", "k"}));
  EXPECT_EQ(names(sch.get_loops(sch.get_block("T_softmax_exp"))), (Names{"i0_1", "i1"}));
  EXPECT_EQ(names(sch.get_loops(sch.get_block("T_softmax_expsum"))), (Names{"i0_2", "k_1"}));
  EXPECT_EQ(names(sch.get_loops(sch.get_block("T_softmax_norm"))), (Names{"i0_3", "i1_1"}));
}

// TVM allows repeated block names; blocks are looked up by name here, so the
// schedule gives them distinct ones (the first keeps its name) and a lookup
// of the shared name says what they are called now.
TEST(Schedule, RepeatedAndEmptyBlockNamesGetDistinctOnes) {
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            A[vi] = T.float32(1)
    for i in range(4):
        with T.block("A"):
            vi = T.axis.remap("S", [i])
            A[vi] = T.float32(2)
    for i in range(4):
        with T.block():
            vi = T.axis.remap("S", [i])
            A[vi] = A[vi] + T.float32(3)
)");
  Schedule sch = make_schedule(f);
  EXPECT_EQ(names(sch.get_child_blocks(sch.get_block("root"))), (Names{"A", "A_1", "block"}));
  try {
    sch.get_block("A");
    FAIL() << "an ambiguous name was looked up";
  } catch (const ScheduleError &e) {
    EXPECT_NE(std::string(e.what()).find("several blocks are named 'A'; the schedule calls them 'A', 'A_1'"),
              std::string::npos)
        << e.what();
  }
  BlockRef second = sch.get_block("A_1");
  sch.split(sch.get_loops(second)[0], {std::nullopt, 2});
  // The trace names the new names, and replays on the original function.
  Schedule again = make_schedule(f);
  again.replay(sch.trace().to_json());
  EXPECT_TRUE(ir::structural_equal(again.func(), sch.func()));
  // The rules see distinct names too: the default schedule verifies.
  EXPECT_EQ(names(Schedule(unique_block_names(f)).get_child_blocks(Schedule(unique_block_names(f)).get_block("root"))),
            (Names{"A", "A_1", "block"}));
}

TEST(Schedule, ChildBlocksProducersConsumers) {
  Schedule sch = make_schedule(parse(kTwoStage));
  EXPECT_EQ(names(sch.get_child_blocks(sch.get_block("root"))), (Names{"B", "C"}));
  auto c_loops = sch.get_loops(sch.get_block("C"));
  EXPECT_EQ(names(sch.get_child_blocks(c_loops[1])), (Names{"C"}));
  EXPECT_EQ(names(sch.get_producers(sch.get_block("C"))), (Names{"B"}));
  EXPECT_EQ(names(sch.get_consumers(sch.get_block("B"))), (Names{"C"}));
  EXPECT_TRUE(sch.get_producers(sch.get_block("B")).empty());
  EXPECT_TRUE(sch.get_consumers(sch.get_block("C")).empty());

  Schedule sm = make_schedule(softmax());
  EXPECT_EQ(names(sm.get_producers(sm.get_block("T_softmax_norm"))), (Names{"T_softmax_exp", "T_softmax_expsum"}));
  EXPECT_EQ(names(sm.get_consumers(sm.get_block("T_softmax_maxelem"))), (Names{"T_softmax_exp"}));
}

TEST(Schedule, StaleLoopHandle) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  sch.split(l[0], {nullopt, 32});
  expect_schedule_error<StaleHandleError>(sch, [&] { sch.split(l[0], {nullopt, 4}); },
                                          "loop 'i' no longer exists in function 'main'");
  expect_schedule_error<StaleHandleError>(sch, [&] { sch.bind(l[0], "threadIdx.x"); }, "loop 'i' no longer exists");
  EXPECT_THROW(sch.get(l[0]), StaleHandleError);
  // The other loop's handle survived (only the body under it was rebuilt).
  sch.vectorize(l[1]);
  expect_schedule_error<StaleHandleError>(sch, [&] { sch.get_loops(BlockRef{"Z"}); }, "block 'Z' no longer exists");
}

TEST(Schedule, FailedPrimitiveLeavesScheduleUntouched) {
  Schedule sch = make_schedule(parse(kMatmul));
  auto l = sch.get_loops(sch.get_block("C"));
  sch.split(l[0], {nullopt, 16});
  ir::PrimFunc before = sch.func();
  size_t trace = sch.trace().size();
  EXPECT_THROW(sch.fuse({l[1], l[2], l[1]}), InvalidLoopListError);
  EXPECT_THROW(sch.vectorize(l[2]), LoopNotDataParallelError);
  EXPECT_THROW(sch.tile({l[1], l[2]}, {{nullopt, 16}, {0}}), InvalidSplitFactorsError);
  EXPECT_TRUE(sch.func().same_as(before));
  EXPECT_EQ(sch.trace().size(), trace);
}

TEST(Schedule, ErrorRenderLevels) {
  Schedule sch = make_schedule(parse(kSiblingLoops));
  auto l = sch.get_loops(sch.get_block("A"));
  try {
    sch.fuse(l);
    FAIL() << "fuse should fail";
  } catch (const ScheduleError &e) {
    EXPECT_EQ(e.primitive(), "fuse");
    EXPECT_EQ(e.brief(), "loop 'j' is not the only child of loop 'i'");
    EXPECT_EQ(e.detail(), "loop {1} is not the only child of loop {0}; fuse needs a perfect nest, outermost first");
    ASSERT_EQ(e.locations().size(), 2u);
    EXPECT_EQ(e.render(ErrorRenderLevel::None), "schedule primitive 'fuse' failed");
    EXPECT_EQ(e.render(ErrorRenderLevel::Brief),
              "schedule primitive 'fuse' failed: loop 'j' is not the only child of loop 'i'");
    std::string detail = e.what();
    EXPECT_NE(detail.find("\n    for i in range(8):  # {0}\n        for j in range(8):  # {1}\n"), std::string::npos)
        << detail;
    EXPECT_NE(detail.find("\n        for j_1 in range(8):\n"), std::string::npos) << detail;
  }
  Schedule brief(parse(kSiblingLoops), ScheduleOptions{.verify = true, .error_render_level = ErrorRenderLevel::Brief});
  auto bl = brief.get_loops(brief.get_block("A"));
  try {
    brief.fuse(bl);
    FAIL() << "fuse should fail";
  } catch (const ScheduleError &e) {
    EXPECT_STREQ(e.what(), "schedule primitive 'fuse' failed: loop 'j' is not the only child of loop 'i'");
  }
}

TEST(Schedule, CopiesAreIndependent) {
  Schedule a = make_schedule(parse(kElementwise));
  auto l = a.get_loops(a.get_block("B"));
  Schedule b = a;
  b.split(l[0], {nullopt, 8});
  EXPECT_EQ(a.trace().size(), 2u);
  EXPECT_EQ(b.trace().size(), 3u);
  EXPECT_NO_THROW(a.split(l[0], {nullopt, 4}));
}

}  // namespace
}  // namespace tessera::test
