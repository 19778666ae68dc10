//===- tests/runtime/SampledCheckTest.cpp - Verifying on a sample of blocks ===//
//
// runtime/SampledCheck.h's three runs on a hand-written tiled matmul kernel
// (16 x 16 threads per block, partial tiles on the last block row and
// column): the coverage program finds an element no block writes even where
// no sampled block is; a wrong value in a sampled block fails the check; the
// narrowed reference holds the whole reference's bits where it is kept; and
// kernels whose blocks are not independent are refused with the reason.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstring>

#include <fmt/format.h>

#include "tessera/ir/AccessRegions.h"
#include "tessera/ir/Stmt.h"
#include "tessera/runtime/Oracle.h"
#include "tessera/runtime/SampledCheck.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/support/Error.h"

using namespace tessera;
using runtime::NDArray;

namespace {

const char *kMatmul = R"(
@T.prim_func
def main(A: T.Buffer((40, 24), "float32"), B: T.Buffer((24, 36), "float32"), C: T.Buffer((40, 36), "float32")):
    for i, j, k in T.grid(40, 36, 24):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
)";

/// The kernel of kMatmul: 3 x 3 blocks of 16 x 16 threads. `guard` decides
/// which threads store; `extra` is added to the stored value.
std::string tiled_kernel(const std::string &guard = "by * 16 + ty < 40 and bx * 16 + tx < 36",
                         const std::string &extra = "T.float32(0)") {
  return fmt::format(R"(
@T.prim_func
def main(A: T.Buffer((40, 24), "float32"), B: T.Buffer((24, 36), "float32"), C: T.Buffer((40, 36), "float32")):
    for by in T.thread_binding(3, thread="blockIdx.y"):
        for bx in T.thread_binding(3, thread="blockIdx.x"):
            with T.block("tile"):
                acc = T.alloc_buffer((16, 16), scope="local")
                for ty in T.thread_binding(16, thread="threadIdx.y"):
                    for tx in T.thread_binding(16, thread="threadIdx.x"):
                        acc[ty, tx] = T.float32(0)
                        for k in range(24):
                            acc[ty, tx] = acc[ty, tx] + A[T.min(by * 16 + ty, 39), k] * B[k, T.min(bx * 16 + tx, 35)]
                        if {}:
                            C[by * 16 + ty, bx * 16 + tx] = acc[ty, tx] + {}
)",
                     guard, extra);
}

/// Elements of C the coverage program leaves unwritten.
int64_t unwritten(const ir::PrimFunc &scheduled, const ir::PrimFunc &f) {
  return runtime::unwritten_elements(runtime::coverage_program(scheduled), f, runtime::make_random_args(f, {}, 1),
                                     runtime::Oracle::Interpreter)
      .at(2)
      .count;
}

/// The sampled check as `tessera schedule --verify` makes it: the sampled
/// blocks, the narrowed reference, and the check of what they wrote.
struct Sampled {
  std::vector<uint8_t> wrote;
  runtime::OutputCheck check;
};
Sampled sampled_check(const ir::PrimFunc &scheduled, const ir::PrimFunc &f, int per_axis, uint64_t seed) {
  runtime::BlockSample s = runtime::sample_blocks(scheduled, {}, per_axis, seed);
  const std::vector<NDArray> inputs = runtime::make_random_args(f, {}, seed);
  std::vector<NDArray> got = inputs;
  Sampled out;
  out.wrote = runtime::run_sampled_blocks(s, f, got, runtime::Oracle::Interpreter).at(2);
  std::vector<runtime::IndexRanges> keep(3);
  keep[2] = runtime::marked_ranges(out.wrote, got[2].shape(), 8);
  runtime::ReferenceProgram program = runtime::make_reference_program(f);
  runtime::ReferenceProgram narrowed = program;
  narrowed.func = runtime::restrict_reference(program, f, keep, {});
  std::vector<NDArray> ref_args = runtime::reference_args(program, f, inputs);
  runtime::execute(narrowed.func, ref_args, runtime::Oracle::Interpreter);
  runtime::Reference want = runtime::collect_reference(narrowed, f, std::move(ref_args));
  std::vector<std::vector<uint8_t>> only(3);
  only[2] = out.wrote;
  out.check = runtime::check_outputs(f, got, want, only).at(0);
  return out;
}

TEST(BlockSample, KeepsTheFirstAndLastBlockOfEachAxisAndRunsOnlyThem) {
  ir::PrimFunc f = script::parse_func(kMatmul), kernel = script::parse_func(tiled_kernel());
  EXPECT_EQ(runtime::block_sample_refusal(kernel), "");
  runtime::BlockSample s = runtime::sample_blocks(kernel, {}, 2, 0);
  ASSERT_EQ(s.axes.size(), 2u);
  EXPECT_EQ(s.axes[0].tag, "blockIdx.y");
  EXPECT_EQ(s.axes[0].kept, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(s.axes[1].kept, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(s.str(), "4 of 9 thread blocks (blockIdx.y 0, 2; blockIdx.x 0, 2)");
  // One axis index: only block (0, 0).
  EXPECT_EQ(runtime::sample_blocks(kernel, {}, 1, 0).kept_blocks(), 1);
  // Three: every block, whatever the seed.
  EXPECT_EQ(runtime::sample_blocks(kernel, {}, 3, 7).kept_blocks(), 9);

  Sampled r = sampled_check(kernel, f, 2, 0);
  // Rows 0-15 and 32-39, columns 0-15 and 32-35: the corner tiles, partial ones included.
  int64_t wrote = 0;
  for (int64_t row = 0; row < 40; ++row)
    for (int64_t col = 0; col < 36; ++col) {
      const bool sampled = (row < 16 || row >= 32) && (col < 16 || col >= 32);
      EXPECT_EQ(r.wrote[size_t(row * 36 + col)], sampled) << row << ", " << col;
      wrote += sampled;
    }
  EXPECT_EQ(wrote, (16 + 8) * (16 + 4));
  EXPECT_TRUE(r.check.ok) << r.check.str();
  EXPECT_EQ(r.check.elements, wrote) << "every element the sampled blocks wrote is checked";
}

TEST(BlockSample, CoverageFindsWhatNoBlockWritesEvenOutsideTheSample) {
  ir::PrimFunc f = script::parse_func(kMatmul);
  EXPECT_EQ(unwritten(script::parse_func(tiled_kernel()), f), 0);
  // The last column (35) is skipped by a guard off by one: only the blocks
  // of the last block column store there, and a sample of one block per
  // axis never runs them.
  ir::PrimFunc skips = script::parse_func(tiled_kernel("by * 16 + ty < 40 and bx * 16 + tx < 35"));
  EXPECT_EQ(unwritten(skips, f), 40);
  Sampled r = sampled_check(skips, f, 1, 0);
  EXPECT_TRUE(r.check.ok) << "the value check alone cannot see it: " << r.check.str();
}

TEST(BlockSample, CoverageDropsALetOnlyTheStoredValueUses) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((40,), "float32"), C: T.Buffer((40,), "float32")):
    for i in range(40):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] * T.float32(2)
)");
  // v loads memory, but only the stored value uses it: the coverage
  // program stores 1 and needs no v.
  ir::PrimFunc kernel = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((40,), "float32"), C: T.Buffer((40,), "float32")):
    for bx in T.thread_binding(3, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            v: T.float32 = A[T.min(bx * 16 + tx, 39)] * T.float32(2)
            if bx * 16 + tx < 40:
                C[bx * 16 + tx] = v
)");
  std::vector<NDArray> args = runtime::make_random_args(f, {}, 3);
  EXPECT_EQ(runtime::unwritten_elements(runtime::coverage_program(kernel), f, args, runtime::Oracle::Interpreter)
                .at(1)
                .count,
            0);
}

TEST(BlockSample, AWrongValueInASampledBlockFails) {
  ir::PrimFunc f = script::parse_func(kMatmul);
  // Thread (0, 0) of block (0, 0) adds 2^-10: within what float32 rounding
  // of a 24-term sum could never explain.
  ir::PrimFunc wrong = script::parse_func(
      tiled_kernel("by * 16 + ty < 40 and bx * 16 + tx < 36",
                   "T.if_then_else(by + bx + ty + tx == 0, T.float32(0.0009765625), T.float32(0))"));
  Sampled r = sampled_check(wrong, f, 1, 0);
  EXPECT_FALSE(r.check.ok);
  EXPECT_EQ(r.check.failures, 1);
  EXPECT_EQ(r.check.worst_index, (std::vector<int64_t>{0, 0}));
}

TEST(BlockSample, IntegerOutputsAreSampledAndCoveredToo) {
  ir::PrimFunc f = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((40,), "int32"), C: T.Buffer((40,), "int32")):
    for i in range(40):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] * 3
)");
  ir::PrimFunc kernel = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((40,), "int32"), C: T.Buffer((40,), "int32")):
    for bx in T.thread_binding(3, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            if bx * 16 + tx < 40:
                C[bx * 16 + tx] = A[bx * 16 + tx] * 3
)");
  std::vector<NDArray> args = runtime::make_random_args(f, {}, 2);
  EXPECT_EQ(runtime::unwritten_elements(runtime::coverage_program(kernel), f, args, runtime::Oracle::Interpreter)
                .at(1)
                .count,
            0);
  // The first and the last block: elements 0-15 and 32-39.
  std::vector<std::vector<uint8_t>> wrote =
      runtime::run_sampled_blocks(runtime::sample_blocks(kernel, {}, 2, 0), f, args, runtime::Oracle::Interpreter);
  EXPECT_TRUE(wrote.at(0).empty()) << "A is not an output";
  for (int64_t e = 0; e < 40; ++e) {
    EXPECT_EQ(wrote.at(1)[size_t(e)], e < 16 || e >= 32) << e;
    if (e < 16 || e >= 32) EXPECT_EQ(args[1].get_int(e), args[0].get_int(e) * 3);
    else EXPECT_EQ(uint32_t(args[1].get_int(e)), 0xA5A5A5A5u) << "the sentinel where no sampled block wrote";
  }
}

TEST(BlockSample, RefusesKernelsWhoseBlocksDependOnEachOther) {
  // Accumulating into C: a block reads what it (or another) wrote.
  ir::PrimFunc reads = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            C[bx * 16 + tx] = C[bx * 16 + tx] + A[bx * 16 + tx]
)");
  EXPECT_NE(runtime::block_sample_refusal(reads).find("'C' is read as well as written"), std::string::npos)
      << runtime::block_sample_refusal(reads);
  // Two kernels: the second reads what the first wrote.
  ir::PrimFunc two = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    T_1 = T.alloc_buffer((64,))
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            T_1[bx * 16 + tx] = A[bx * 16 + tx] * T.float32(2)
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            C[bx * 16 + tx] = T_1[63 - bx * 16 - tx]
)");
  EXPECT_NE(runtime::block_sample_refusal(two).find("it launches 2 kernels"), std::string::npos)
      << runtime::block_sample_refusal(two);
  // No thread blocks at all (a program as written).
  EXPECT_EQ(runtime::block_sample_refusal(script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    for i in range(64):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] * T.float32(2)
)")),
            "it has no blockIdx loops");
  EXPECT_THROW(runtime::sample_blocks(reads, {}, 2, 0), UserError);
  // Outputs narrower than a byte: no sentinel can tell what a sampled run wrote.
  ir::PrimFunc nibbles = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((64,), "int8"), C: T.Buffer((64,), "bool")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            C[bx * 16 + tx] = A[bx * 16 + tx] > T.int8(0)
)");
  EXPECT_EQ(runtime::block_sample_refusal(nibbles), "'C' holds bool elements, narrower than a byte");
  // A store whose place depends on data has no coverage program.
  ir::PrimFunc scatter = script::parse_func(R"(
@T.prim_func
def main(I: T.Buffer((64,), "int32"), A: T.Buffer((64,), "float32"), C: T.Buffer((64,), "float32")):
    for bx in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(16, thread="threadIdx.x"):
            C[I[bx * 16 + tx] % 64] = A[bx * 16 + tx]
)");
  try {
    runtime::coverage_program(scatter);
    ADD_FAILURE() << "a data-dependent store has no coverage program";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("reads memory: where the kernel stores depends on data"), std::string::npos)
        << e.what();
  }
}

/// How many times the stores of `s` run (constant loop extents).
int64_t store_executions(const ir::Stmt &s, int64_t times = 1) {
  if (const auto *f = s.as<ir::For>()) return store_executions(f->body, times * f->extent.as<ir::IntImm>()->value);
  if (s.as<ir::Store>()) return times;
  int64_t n = 0;
  if (const auto *q = s.as<ir::Seq>())
    for (const ir::Stmt &x : q->stmts) n += store_executions(x, times);
  if (const auto *b = s.as<ir::Block>()) n += store_executions(b->body, times) + (b->init ? store_executions(*b->init, times) : 0);
  if (const auto *i = s.as<ir::IfThenElse>()) n += store_executions(i->then_case, times);
  if (const auto *l = s.as<ir::LetStmt>()) n += store_executions(l->body, times);
  return n;
}

/// The whole reference of `f` and the one narrowed to `keep`: equal bits
/// wherever both rows and columns are kept.
void expect_narrowed_reference_matches(const std::string &text, const runtime::IndexRanges &rows_cols,
                                       size_t out_param) {
  ir::PrimFunc f = script::parse_func(text);
  const std::vector<NDArray> inputs = runtime::make_random_args(f, {}, 5);
  runtime::Reference whole = runtime::compute_reference(f, inputs, runtime::Oracle::Interpreter);
  std::vector<runtime::IndexRanges> keep(f.params().size());
  keep[out_param] = rows_cols;
  runtime::ReferenceProgram program = runtime::make_reference_program(f);
  runtime::ReferenceProgram narrowed = program;
  narrowed.func = runtime::restrict_reference(program, f, keep, {});
  std::vector<NDArray> args = runtime::reference_args(program, f, inputs);
  runtime::execute(narrowed.func, args, runtime::Oracle::Interpreter);
  runtime::Reference part = runtime::collect_reference(narrowed, f, std::move(args));
  const NDArray &w = whole.values[out_param], &p = part.values[out_param];
  std::vector<uint8_t> in(size_t(w.numel()), 1);
  runtime::keep_within(in, w.shape(), rows_cols);
  int64_t kept = 0;
  for (int64_t e = 0; e < w.numel(); ++e) {
    if (!in[size_t(e)]) continue;
    ++kept;
    EXPECT_EQ(w.get(e), p.get(e)) << "element " << e;
    EXPECT_EQ(whole.variance[out_param].get(e), part.variance[out_param].get(e)) << "element " << e;
  }
  EXPECT_GT(kept, 0);
}

TEST(RestrictReference, NarrowsTheOutputAndWhatItIsComputedFrom) {
  // A float16 matmul accumulating in float32: the reference sums into an
  // intermediate, then casts; both are narrowed together.
  const char *f16 = R"(
@T.prim_func
def main(A: T.Buffer((48, 32), "float16"), B: T.Buffer((32, 40), "float16"), C: T.Buffer((48, 40), "float16")):
    acc = T.alloc_buffer((48, 40))
    for i, j, k in T.grid(48, 40, 32):
        with T.block("acc"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                acc[vi, vj] = T.float32(0)
            acc[vi, vj] = acc[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
    for i, j in T.grid(48, 40):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.Cast("float16", acc[vi, vj])
)";
  const runtime::IndexRanges corners{{{0, 8}, {40, 48}}, {{0, 4}, {36, 40}}};
  expect_narrowed_reference_matches(f16, corners, 2);
  ir::PrimFunc f = script::parse_func(f16);
  std::vector<runtime::IndexRanges> keep(3);
  keep[2] = corners;
  ir::PrimFunc narrowed = runtime::restrict_reference(runtime::make_reference_program(f), f, keep, {});
  // Three stores (value, variance, squares) for each of the 16 x 8 kept
  // elements' init, 32 terms and cast; the whole program has 48 x 40.
  EXPECT_EQ(store_executions(narrowed.body()), 3 * 16 * 8 * (1 + 32 + 1));
  EXPECT_EQ(store_executions(runtime::make_reference_program(f).func.body()), 3 * 48 * 40 * (1 + 32 + 1));

  // A shifted read (each output reads the next row of an intermediate): the
  // intermediate is computed whole, the output only where kept.
  expect_narrowed_reference_matches(R"(
@T.prim_func
def main(A: T.Buffer((33, 16), "float32"), C: T.Buffer((32, 16), "float32")):
    T_1 = T.alloc_buffer((33, 16))
    for i, j in T.grid(33, 16):
        with T.block("T_1"):
            vi, vj = T.axis.remap("SS", [i, j])
            T_1[vi, vj] = A[vi, vj] * T.float32(3)
    for i, j in T.grid(32, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T_1[vi + 1, vj] - T_1[vi, vj]
)",
                                    {{{30, 32}}, {{0, 16}}}, 1);
}

}  // namespace
