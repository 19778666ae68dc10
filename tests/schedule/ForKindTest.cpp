//===- ForKindTest.cpp - bind, parallel, vectorize, unroll -----------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

TEST(ForKind, ElementwiseFusedSplitBoundVectorized) {
  ir::PrimFunc f = parse(kElementwise);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  LoopRef fused = sch.fuse(l);
  auto s = sch.split(fused, {nullopt, 128, 4}, {"bx", "tx", "vec"});
  sch.bind(s[0], "blockIdx.x");
  sch.bind(s[1], "threadIdx.x");
  sch.vectorize(s[2]);
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((128, 64), "float32"), B: T.Buffer((128, 64), "float32")):
    for bx in T.thread_binding(16, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            for vec in T.vectorized(4):
                with T.block("B"):
                    vi = T.axis.spatial(128, bx * 8 + tx // 16)
                    vj = T.axis.spatial(64, tx % 16 * 4 + vec)
                    B[vi, vj] = A[vi, vj] * T.float32(2)
)");
  EXPECT_EQ(Trace::dump(sch.trace().instructions()[sch.trace().size() - 2]),
            R"({"op": "bind", "loop": "tx", "thread": "threadIdx.x"})");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()), R"({"op": "vectorize", "loop": "vec"})");
}

TEST(ForKind, ParallelAndUnroll) {
  ir::PrimFunc f = parse(kRowSum);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  sch.parallel(l[0]);
  sch.unroll(l[1]);  // unroll takes a reduction loop
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((32, 96), "float32"), B: T.Buffer((32,), "float32")):
    for i in T.parallel(32):
        for k in T.unroll(96):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
)");
}

TEST(ForKind, ReductionLoopMayBeBoundToThreadIdx) {
  ir::PrimFunc f = parse(kRowSum);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("B"));
  sch.bind(l[0], "blockIdx.x");
  sch.bind(l[1], "threadIdx.x");
  check_schedule(f, sch, nullptr);
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(BindError, InvalidThreadTag) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<InvalidThreadTagError>(sch, [&] { sch.bind(l[0], "threadIdx.w"); },
                                               "cannot bind loop 'i' to 'threadIdx.w'");
}

TEST(BindError, AlreadyBound) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  sch.bind(l[0], "blockIdx.x");
  expect_schedule_error<LoopNotSerialError>(sch, [&] { sch.bind(l[0], "blockIdx.y"); },
                                            "loop 'i' is bound to blockIdx.x, not serial");
}

TEST(BindError, NestedOnTheSameAxisWithADifferentMeaning) {
  // Both loops on blockIdx.x would be one block on the GPU (j = i): only the
  // diagonal written, where serially every element is.
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  sch.bind(l[0], "blockIdx.x");
  expect_schedule_error<NestedThreadBindingError>(
      sch, [&] { sch.bind(l[1], "blockIdx.x"); },
      "cannot bind loop 'j' to 'blockIdx.x': loop 'j' is bound to blockIdx.x inside loop 'i', which is bound to it "
      "too: on the GPU they are one block ('j' = 'i'), but it uses 'i', which differs between blocks");
  // On an axis of its own it is fine.
  sch.bind(l[1], "threadIdx.x");
}

TEST(BindError, ReductionLoopToBlockIdx) {
  Schedule sch = make_schedule(parse(kRowSum));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<LoopNotDataParallelError>(
      sch, [&] { sch.bind(l[1], "blockIdx.x"); },
      "loop 'k' is bound to reduction iter var 'vk' of block 'B' (it cannot be bound to blockIdx.x)");
}

TEST(ParallelError, NotSerialAndNotDataParallel) {
  Schedule sch = make_schedule(parse(kRowSum));
  auto l = sch.get_loops(sch.get_block("B"));
  expect_schedule_error<LoopNotDataParallelError>(sch, [&] { sch.parallel(l[1]); },
                                                  "loop 'k' is bound to reduction iter var 'vk'");
  sch.unroll(l[0]);
  expect_schedule_error<LoopNotSerialError>(sch, [&] { sch.parallel(l[0]); }, "loop 'i' is unrolled, not serial");
}

TEST(VectorizeError, NotSerialAndNotDataParallel) {
  Schedule sch = make_schedule(parse(kMatmul));
  auto l = sch.get_loops(sch.get_block("C"));
  expect_schedule_error<LoopNotDataParallelError>(sch, [&] { sch.vectorize(l[2]); },
                                                  "loop 'k' is bound to reduction iter var 'vk'");
  sch.parallel(l[1]);
  expect_schedule_error<LoopNotSerialError>(sch, [&] { sch.vectorize(l[1]); }, "loop 'j' is parallel");
}

TEST(UnrollError, NotSerial) {
  Schedule sch = make_schedule(parse(kElementwise));
  auto l = sch.get_loops(sch.get_block("B"));
  sch.vectorize(l[1]);
  expect_schedule_error<LoopNotSerialError>(sch, [&] { sch.unroll(l[1]); }, "loop 'j' is vectorized");
}

}  // namespace
}  // namespace tessera::test
