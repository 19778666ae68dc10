//===- TensorizeTest.cpp - tensorize and the intrinsic registry --------------===//
#include "Programs.h"
#include "ScheduleTestUtil.h"
#include "tessera/schedule/Intrinsic.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

/// C[i, j] = sum_k A[i, k] * B[j, k] (B transposed: both operands contiguous in k).
const char *kMatmulNT = R"(
@T.prim_func
def main(A: T.Buffer((16, 24), "float32"), B: T.Buffer((8, 24), "float32"), C: T.Buffer((16, 8), "float32")):
    for i, j, k in T.grid(16, 8, 24):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
)";

/// The dot4 description again, with an implementation that loops.
const char *kDot4LoopImpl = R"(
@T.prim_func
def impl(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((1,), "float32")):
    for k in range(4):
        C[0] = C[0] + A[k] * B[k]
)";

void register_dot4_loop() {
  register_intrinsic("test.dot4_loop", lookup_intrinsic("tessera.dot4_f32")->desc, parse(kDot4LoopImpl));
}

TEST(Tensorize, GemvDot4FromLoop) {
  ir::PrimFunc f = parse(kGemv);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[1], {nullopt, 4});
  BlockRef o = sch.tensorize(k[1], "tessera.dot4_f32");
  EXPECT_EQ(o.name, "C_o");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((16,), "float32")):
    for i, k_0 in T.grid(16, 8):
        with T.block("C_o"):
            vi, vk_o = T.axis.remap("SR", [i, k_0])
            T.reads(A[vi, vk_o * 4:vk_o * 4 + 4], B[vk_o * 4:vk_o * 4 + 4])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + A[vi, vk_o * 4] * B[vk_o * 4] + A[vi, vk_o * 4 + 1] * B[vk_o * 4 + 1] + A[vi, vk_o * 4 + 2] * B[vk_o * 4 + 2] + A[vi, vk_o * 4 + 3] * B[vk_o * 4 + 3]
)");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "tensorize", "loop": "k_1", "intrin": "tessera.dot4_f32", "out": "C_o"})");
}

TEST(Tensorize, BlockizeThenTensorizeBlock) {
  ir::PrimFunc f = parse(kMatmulNT);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[2], {nullopt, 4});
  BlockRef o = sch.blockize(k[1]);
  sch.tensorize(o, "tessera.dot4_f32");
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()),
            R"({"op": "tensorize", "block": "C_o", "intrin": "tessera.dot4_f32"})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 24), "float32"), B: T.Buffer((8, 24), "float32"), C: T.Buffer((16, 8), "float32")):
    for i, j, k_0 in T.grid(16, 8, 6):
        with T.block("C_o"):
            vi, vj, vk_o = T.axis.remap("SSR", [i, j, k_0])
            T.reads(A[vi, vk_o * 4:vk_o * 4 + 4], B[vj, vk_o * 4:vk_o * 4 + 4])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0.0)
            C[vi, vj] = C[vi, vj] + A[vi, vk_o * 4] * B[vj, vk_o * 4] + A[vi, vk_o * 4 + 1] * B[vj, vk_o * 4 + 1] + A[vi, vk_o * 4 + 2] * B[vj, vk_o * 4 + 2] + A[vi, vk_o * 4 + 3] * B[vj, vk_o * 4 + 3]
)");
}

TEST(Tensorize, ImplWithLoopGetsFreshLoopNames) {
  register_dot4_loop();
  ir::PrimFunc f = parse(kGemv);
  Schedule sch = make_schedule(f);
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[1], {nullopt, 4}, {"k", "k_in"});  // the impl's loop `k` is taken
  sch.tensorize(k[1], "test.dot4_loop");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 8):
        with T.block("C_o"):
            vi, vk_o = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk_o * 4:vk_o * 4 + 4], B[vk_o * 4:vk_o * 4 + 4])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0.0)
            for k_1 in range(4):
                C[vi] = C[vi] + A[vi, vk_o * 4 + k_1] * B[vk_o * 4 + k_1]
)");
  EXPECT_EQ(sch.get_loops(sch.get_block("C_o")).back().name(), "k");
}

TEST(Tensorize, Registry) {
  EXPECT_NE(lookup_intrinsic("tessera.dot4_f32"), nullptr);
  EXPECT_EQ(lookup_intrinsic("nope"), nullptr);
  register_dot4_loop();
  register_dot4_loop();  // the same functions again: nothing happens
  const TensorIntrin *dot4 = lookup_intrinsic("tessera.dot4_f32");
  EXPECT_THROW(register_intrinsic("test.dot4_loop", dot4->desc, dot4->impl), UserError);  // other functions
  ir::PrimFunc other = parse(R"(
@T.prim_func
def impl(A: T.Buffer((8,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((1,), "float32")):
    C[0] = A[0]
)");
  try {
    register_intrinsic("test.bad", dot4->desc, other);
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("buffer parameter 0 is A: (4,), float32 in the description but A: (8,), "
                                         "float32 in the implementation"),
              std::string::npos)
        << e.what();
  }
}

// --- Negative: one per "Requires:" line ------------------------------------

TEST(TensorizeError, UnknownIntrinsic) {
  Schedule sch = make_schedule(parse(kGemv));
  auto l = sch.get_loops(sch.get_block("C"));
  expect_schedule_error<UnknownIntrinsicError>(
      sch, [&] { sch.tensorize(l[1], "dot8"); }, "no tensor intrinsic named 'dot8' is registered; the intrinsics are ");
}

TEST(TensorizeError, LoopNotBlockizable) {
  Schedule sch = make_schedule(parse(kGemv));
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[1], {nullopt, 5});
  expect_schedule_error<BlockHasPredicateError>(
      sch, [&] { sch.tensorize(k[1], "tessera.dot4_f32"); }, "uses loops both above and below loop 'k_1'");
}

TEST(TensorizeError, BlockHasPredicate) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((30, 32), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((30,), "float32")):
    for i, k in T.grid(30, 32):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] * B[vk]
)"));
  auto l = sch.get_loops(sch.get_block("C"));
  sch.split(l[0], {nullopt, 8});  // i_0 * 8 + i_1 < 30: above the tensorized loop
  auto k = sch.split(l[1], {nullopt, 4});
  BlockRef o = sch.blockize(k[1]);
  expect_schedule_error<BlockHasPredicateError>(
      sch, [&] { sch.tensorize(o, "tessera.dot4_f32"); }, "block 'C_o' has the predicate");
}

TEST(TensorizeError, BodyDoesNotMatch) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), B: T.Buffer((32,), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 32):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk] + B[vk]
)"));
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[1], {nullopt, 4});
  expect_schedule_error<TensorizeMismatchError>(
      sch, [&] { sch.tensorize(k[1], "tessera.dot4_f32"); },
      "the body of block 'C_o' does not match the description of intrinsic 'tessera.dot4_f32': first difference");
  // Too few buffers.
  Schedule rowmax = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16, 32), "float32"), C: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 32):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + A[vi, vk]
)"));
  auto rl = rowmax.get_loops(rowmax.get_block("C"));
  auto rk = rowmax.split(rl[1], {nullopt, 4});
  expect_schedule_error<TensorizeMismatchError>(
      rowmax, [&] { rowmax.tensorize(rk[1], "tessera.dot4_f32"); },
      "the body accesses 2 buffers but the description accesses 3");
}

TEST(TensorizeError, RegionShape) {
  Schedule sch = make_schedule(parse(kGemv));
  auto l = sch.get_loops(sch.get_block("C"));
  auto k = sch.split(l[1], {nullopt, 8});
  expect_schedule_error<TensorizeRegionMismatchError>(
      sch, [&] { sch.tensorize(k[1], "tessera.dot4_f32"); },
      "block 'C_o' accesses the region A[vi, vk_o * 8:vk_o * 8 + 8] of extents (1, 8) but the description's buffer "
      "'A' of intrinsic 'tessera.dot4_f32' has shape (4)");
}

}  // namespace
}  // namespace tessera::test
