//===- ComputeInlineTest.cpp - compute_inline and reverse_compute_inline ---===//
#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

/// Builds a two-block program `B = <producer>; C = <consumer>` over 16x16
/// (B allocated unless `b_param`).
std::string two_blocks(const std::string &producer, const std::string &consumer, bool b_param = false) {
  std::string params = "A: T.Buffer((16, 16), \"float32\"), C: T.Buffer((16, 16), \"float32\")";
  std::string alloc = "    B = T.alloc_buffer((16, 16))\n";
  if (b_param) {
    params += ", B: T.Buffer((16, 16), \"float32\")";
    alloc = "";
  }
  return "@T.prim_func\ndef main(" + params + "):\n" + alloc +
         "    for i, j in T.grid(16, 16):\n        with T.block(\"B\"):\n"
         "            vi, vj = T.axis.remap(\"SS\", [i, j])\n            " + producer +
         "\n    for i, j in T.grid(16, 16):\n        with T.block(\"C\"):\n"
         "            vi, vj = T.axis.remap(\"SS\", [i, j])\n            " + consumer + "\n";
}

TEST(ComputeInline, ProducerIntoConsumer) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  sch.compute_inline(sch.get_block("B"));
  EXPECT_EQ(Trace::dump(sch.trace().instructions().back()), R"({"op": "compute_inline", "block": "B"})");
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = (A[vi, vj] + T.float32(1)) * T.float32(2)
)");
}

TEST(ComputeInline, TransposedLoadsAndAReductionConsumer) {
  ir::PrimFunc f = parse(R"(
@T.prim_func
def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((24,), "float32")):
    B = T.alloc_buffer((16, 24))
    for i, j in T.grid(16, 24):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * A[vi, vj]
    for j, k in T.grid(24, 16):
        with T.block("C"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                C[vj] = T.float32(0)
            C[vj] = C[vj] + B[vk, vj]
)");
  Schedule sch = make_schedule(f);
  sch.compute_inline(sch.get_block("B"));
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 24), "float32"), C: T.Buffer((24,), "float32")):
    for j, k in T.grid(24, 16):
        with T.block("C"):
            vj, vk = T.axis.remap("SR", [j, k])
            with T.init():
                C[vj] = T.float32(0)
            C[vj] = C[vj] + A[vk, vj] * A[vk, vj]
)");
}

TEST(ReverseComputeInline, ConsumerIntoProducer) {
  ir::PrimFunc f = parse(kTwoStage);
  Schedule sch = make_schedule(f);
  sch.reverse_compute_inline(sch.get_block("C"));
  check_schedule(f, sch, R"(
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = (A[vi, vj] + T.float32(1)) * T.float32(2)
)");
}

TEST(ReverseComputeInline, TransposingConsumerAfterTiledProducer) {
  ir::PrimFunc f = script::parse_func(two_blocks("B[vi, vj] = A[vi, vj] + T.float32(1)", "C[vj, vi] = B[vj, vi] * B[vj, vi]"));
  Schedule sch = make_schedule(f);
  sch.split(sch.get_loops(sch.get_block("B"))[0], {nullopt, 5});  // the producer's predicate stays its own
  sch.reverse_compute_inline(sch.get_block("C"));
  check_schedule(f, sch, nullptr);
}

// --- Negative: compute_inline -------------------------------------------------

TEST(ComputeInlineError, NotComplete) {
  Schedule sch = make_schedule(parse(kRowSum));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<BlockNotCompleteError>(sch, [&] { sch.compute_inline(b); }, "block 'B' is not a complete");
}

TEST(ComputeInlineError, NotInlineableBody) {
  Schedule sch = make_schedule(script::parse_func(two_blocks("B[vj, vi] = A[vi, vj]", "C[vi, vj] = B[vi, vj]")));
  BlockRef b = sch.get_block("B");
  // Stores at iter vars in another order are fine; a computed index is not.
  Schedule bad = make_schedule(script::parse_func(two_blocks("B[15 - vi, vj] = A[vi, vj]", "C[vi, vj] = B[vi, vj]")));
  BlockRef bb = bad.get_block("B");
  expect_schedule_error<NotInlineableBodyError>(bad, [&] { bad.compute_inline(bb); },
                                                "it does not store at its iter vars");
  sch.compute_inline(b);
}

TEST(ComputeInlineError, BlockHasPredicate) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef b = sch.get_block("B");
  sch.split(sch.get_loops(b)[0], {nullopt, 5});
  expect_schedule_error<BlockHasPredicateError>(sch, [&] { sch.compute_inline(b); }, "block 'B' has the predicate");
}

TEST(ComputeInlineError, OutputBlock) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<OutputBlockError>(sch, [&] { sch.compute_inline(c); }, "writes the function's output 'C'");
}

TEST(ComputeInlineError, BufferHasOtherWriter) {
  Schedule sch = make_schedule(parse(R"(
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi]
    for i in range(8):
        with T.block("B2"):
            vi = T.axis.remap("S", [i])
            B[vi] = T.float32(0)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi]
)"));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<BufferHasOtherWriterError>(sch, [&] { sch.compute_inline(b); }, "block 'B2' also writes 'B'");
}

// --- Negative: reverse_compute_inline ----------------------------------------

TEST(ReverseComputeInlineError, NotComplete) {
  Schedule sch = make_schedule(parse(kRowSum));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<BlockNotCompleteError>(sch, [&] { sch.reverse_compute_inline(b); },
                                               "block 'B' is not a complete");
}

TEST(ReverseComputeInlineError, NotInlineableBody) {
  Schedule sch = make_schedule(script::parse_func(two_blocks("B[15 - vi, vj] = A[vi, vj]", "C[vi, vj] = B[vi, vj]")));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<NotInlineableBodyError>(sch, [&] { sch.reverse_compute_inline(c); },
                                                "block 'B' cannot be inlined");
}

TEST(ReverseComputeInlineError, BlockHasPredicate) {
  Schedule sch = make_schedule(parse(kTwoStage));
  BlockRef c = sch.get_block("C");
  sch.split(sch.get_loops(c)[1], {nullopt, 5});
  expect_schedule_error<BlockHasPredicateError>(sch, [&] { sch.reverse_compute_inline(c); },
                                                "block 'C' has the predicate");
}

TEST(ReverseComputeInlineError, ProducerNotUnique) {
  Schedule sch = make_schedule(parse(kElementwise));
  BlockRef b = sch.get_block("B");
  expect_schedule_error<ProducerNotUniqueError>(sch, [&] { sch.reverse_compute_inline(b); },
                                                "no buffer it reads is written in its scope");
}

TEST(ReverseComputeInlineError, NonIterVarIndex) {
  Schedule sch = make_schedule(script::parse_func(two_blocks("B[vi, vj] = A[vi, vj]", "C[vi, vj] = B[15 - vi, vj]")));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<NonIterVarIndexError>(sch, [&] { sch.reverse_compute_inline(c); },
                                              "block 'C' does not load 'B' once per iteration at its own iter vars");
}

TEST(ReverseComputeInlineError, OutputBlock) {
  Schedule sch = make_schedule(script::parse_func(two_blocks("B[vi, vj] = A[vi, vj]", "C[vi, vj] = B[vi, vj]", true)));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<OutputBlockError>(sch, [&] { sch.reverse_compute_inline(c); },
                                          "block 'B' writes the function's output 'B'");
}

TEST(ReverseComputeInlineError, BufferHasOtherReader) {
  Schedule sch = make_schedule(parse(kOneProducerTwoConsumers));
  BlockRef c = sch.get_block("C");
  expect_schedule_error<BufferHasOtherReaderError>(sch, [&] { sch.reverse_compute_inline(c); },
                                                   "block 'D' also reads 'B'");
}

}  // namespace
}  // namespace tessera::test
