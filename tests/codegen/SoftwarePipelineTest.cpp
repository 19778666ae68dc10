//===- tests/codegen/SoftwarePipelineTest.cpp - inject_software_pipeline ---===//
//
// Loops annotated "software_pipeline_stage" (TVM's keys) run as pipelines
// after lowering. The lowered kernels run on the SIMT emulator (one CPU
// thread per GPU thread: real barriers, cp.async landing only when its group
// is waited for, race checks) and must match the float64 reference of the
// unannotated loop, which the interpreter runs serially, at every tile count
// from none to many, including counts below the pipeline depth. What the
// pipeline would break is a LowerError naming the loop and the buffer.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <optional>

#include "SimtEmulator.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/ir/Functor.h"
#include "tessera/lower/Lower.h"
#include "tessera/lower/Passes.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"

namespace tessera::lower {
namespace {

/// One block of 32 threads: per tile of 8 rows of A, the threads copy the
/// tile into shared S (`copy`), then each thread sums its neighbour's column
/// of the tile, weighted by the row (`use`, reading what another thread
/// copied). `annotations` goes on the tile loop.
std::string tile_sum(const std::string &annotations, const std::string &dtype = "float32") {
  return R"(@T.prim_func
def main(a: T.handle, b: T.handle) -> None:
    n = T.int32()
    A = T.match_buffer(a, (n, 32), ")" + dtype + R"(")
    B = T.match_buffer(b, (32,), "float32")
    S = T.alloc_buffer((8, 32), ")" + dtype + R"(", scope="shared")
    acc = T.alloc_buffer((32,), scope="local")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            acc[tx] = T.float32(0)
        for k0 in T.serial((n + 7) // 8, annotations={)" + annotations + R"(}):
            for i in range(8):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    if k0 * 8 + i < n:
                        S[i, tx] = A[k0 * 8 + i, tx]
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for i in range(8):
                    if k0 * 8 + i < n:
                        acc[tx] = acc[tx] + T.Cast("float32", S[i, (tx + 1) % 32]) * T.Cast("float32", k0 * 8 + i + 1)
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            B[tx] = acc[tx]
)";
}

/// Two operands staged at different depths: A's tile at stage 0, B's at 1,
/// their product summed at stage 2 (A read 2 steps after its copy, B 1).
std::string two_tiles(const std::string &annotations) {
  return R"(@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle) -> None:
    n = T.int32()
    A = T.match_buffer(a, (n, 32), "float32")
    B = T.match_buffer(b, (n, 32), "float32")
    C = T.match_buffer(c, (32,), "float32")
    SA = T.alloc_buffer((4, 32), scope="shared")
    SB = T.alloc_buffer((4, 32), scope="shared")
    acc = T.alloc_buffer((32,), scope="local")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            acc[tx] = T.float32(0)
        for k0 in T.serial((n + 3) // 4, annotations={)" + annotations + R"(}):
            for i in range(4):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    if k0 * 4 + i < n:
                        SA[i, tx] = A[k0 * 4 + i, tx]
            for i in range(4):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    if k0 * 4 + i < n:
                        SB[i, tx] = B[k0 * 4 + i, tx]
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for i in range(4):
                    if k0 * 4 + i < n:
                        acc[tx] = acc[tx] + SA[i, 31 - tx] * SB[i, (tx + 5) % 32]
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            C[tx] = acc[tx]
)";
}

/// Emulates the lowered kernel of `text` at n = `n`; the outputs must be
/// within the float64 reference's bound. Returns the kernel.
LoweredFunc expect_emulation_matches(const std::string &text, int64_t n) {
  SCOPED_TRACE("n = " + std::to_string(n));
  ir::PrimFunc f = script::parse_func(text);
  LoweredFunc kernel = lower(f);
  std::string error;
  std::vector<runtime::OutputCheck> checks = simt::emulate_and_check(f, kernel, {{"n", n}}, 11, &error);
  EXPECT_EQ(error, "") << print(kernel);
  for (const runtime::OutputCheck &c : checks) EXPECT_TRUE(c.ok) << c.str() << "\n" << print(kernel);
  return kernel;
}

/// The calls of `op` in the kernel, and the elements of allocation `name`
/// (flattened: versions x tile).
int count_calls(const LoweredFunc &k, ir::Intrinsic op) {
  int n = 0;
  ir::pre_order_visit(k.body, [&](const ir::Expr &e) {
    if (const auto *c = e.as<ir::Call>(); c && c->op == op) ++n;
  }, nullptr);
  return n;
}
int64_t elements_of(const LoweredFunc &k, const std::string &name) {
  for (const ir::Buffer &b : k.allocs)
    if (b.name() == name) {
      int64_t n = 1;
      for (const ir::Expr &e : b.shape()) n *= ir::as_const_int(e).value_or(-1);
      return n;
    }
  return 0;
}
/// The wait counts of the kernel's cp.async waits, in program order.
std::vector<int64_t> waits(const LoweredFunc &k) {
  std::vector<int64_t> out;
  ir::pre_order_visit(k.body, [&](const ir::Expr &e) {
    if (const auto *c = e.as<ir::Call>(); c && c->op == ir::Intrinsic::CpAsyncWait)
      out.push_back(ir::as_const_int(c->args[0]).value_or(-1));
  }, nullptr);
  return out;
}

const std::vector<int64_t> kTileCounts = {0, 1, 5, 8, 9, 16, 17, 40};

TEST(SoftwarePipeline, DoubleBufferedSynchronousCopies) {
  for (int64_t n : kTileCounts) {
    LoweredFunc k = expect_emulation_matches(tile_sum(R"("software_pipeline_stage": [0, 1])"), n);
    EXPECT_EQ(elements_of(k, "S"), 2 * 8 * 32);
    EXPECT_EQ(count_calls(k, ir::Intrinsic::CpAsync), 0);
  }
}

TEST(SoftwarePipeline, AsyncCopiesWaitForTheirGroup) {
  for (int64_t n : kTileCounts) {
    LoweredFunc k = expect_emulation_matches(
        tile_sum(R"("software_pipeline_stage": [0, 1], "software_pipeline_async_stages": [0])"), n);
    // The prologue's copy and the loop's: one cp.async each, a commit per step.
    EXPECT_EQ(count_calls(k, ir::Intrinsic::CpAsync), 2);
    EXPECT_EQ(count_calls(k, ir::Intrinsic::CpAsyncCommit), 2);
    EXPECT_EQ(waits(k), (std::vector<int64_t>{0, 0}));  // the step's, and the drain after the loop
  }
}

TEST(SoftwarePipeline, ThreeStagesKeepTwoGroupsInFlight) {
  for (int64_t n : kTileCounts) {
    LoweredFunc k = expect_emulation_matches(
        tile_sum(R"("software_pipeline_stage": [0, 2], "software_pipeline_async_stages": [0])"), n);
    EXPECT_EQ(elements_of(k, "S"), 3 * 8 * 32);
    // Steps 0 and 1 copy (the prologue), then each step waits for the copy of two steps ago.
    EXPECT_EQ(waits(k), (std::vector<int64_t>{1, 0}));
  }
}

TEST(SoftwarePipeline, ComputeOrderedBeforeTheNextCopy) {
  for (int64_t n : kTileCounts)
    expect_emulation_matches(tile_sum(R"("software_pipeline_stage": [0, 1], "software_pipeline_order": [1, 0],
                                         "software_pipeline_async_stages": [0])"),
                             n);
}

TEST(SoftwarePipeline, OperandsAtDifferentDepths) {
  for (int64_t n : kTileCounts) {
    LoweredFunc k = expect_emulation_matches(two_tiles(R"("software_pipeline_stage": [0, 1, 2],
                                                             "software_pipeline_async_stages": [0, 1])"),
                                             n);
    EXPECT_EQ(elements_of(k, "SA"), 3 * 4 * 32);
    EXPECT_EQ(elements_of(k, "SB"), 2 * 4 * 32);
    for (int64_t w : waits(k)) EXPECT_EQ(w, 0);  // SB's copy is read one step later
    expect_emulation_matches(two_tiles(R"("software_pipeline_stage": [0, 1, 2])"), n);
  }
}

TEST(SoftwarePipeline, SmallElementsStaySynchronous) {
  // A float16 element is 2 bytes, which cp.async cannot copy alone: the
  // pipeline is still double-buffered, its copies ordinary stores.
  for (int64_t n : {0, 3, 17}) {
    LoweredFunc k = expect_emulation_matches(
        tile_sum(R"("software_pipeline_stage": [0, 1], "software_pipeline_async_stages": [0])", "float16"), n);
    EXPECT_EQ(count_calls(k, ir::Intrinsic::CpAsync), 0);
    EXPECT_EQ(elements_of(k, "S"), 2 * 8 * 32);
  }
}

TEST(SoftwarePipeline, TheEmulatorCatchesAMissingBarrier) {
  // The check above can fail: without the barrier after the wait, a thread
  // reads its neighbour's column before the neighbour's copy has landed.
  ir::PrimFunc f = script::parse_func(
      tile_sum(R"("software_pipeline_stage": [0, 1], "software_pipeline_async_stages": [0])"));
  LoweredFunc k = lower(f);
  struct DropBarriers : ir::IRMutator {
    ir::Stmt visit_(const ir::Evaluate *op, const ir::Stmt &self) override {
      const auto *c = op->value.as<ir::Call>();
      if (c && c->op == ir::Intrinsic::SyncThreads) return ir::Evaluate::make(ir::i32(0));
      return self;
    }
  } drop;
  k.body = drop.mutate(k.body);
  std::string error;
  simt::emulate_and_check(f, k, {{"n", 24}}, 3, &error);
  EXPECT_NE(error.find("race"), std::string::npos) << error;
}

TEST(SoftwarePipeline, TheEmulatorCatchesAWaitThatIsTooShort) {
  // Waiting for one group fewer leaves the tile being read in flight: it
  // reads as poison (NaN), so the outputs are wrong.
  ir::PrimFunc f = script::parse_func(
      tile_sum(R"("software_pipeline_stage": [0, 2], "software_pipeline_async_stages": [0])"));
  LoweredFunc k = lower(f);
  struct LooserWaits : ir::IRMutator {
    ir::Stmt visit_(const ir::Evaluate *op, const ir::Stmt &self) override {
      const auto *c = op->value.as<ir::Call>();
      if (!c || c->op != ir::Intrinsic::CpAsyncWait || ir::is_const_int(c->args[0], 0)) return self;
      return ir::Evaluate::make(ir::Call::make(ir::DataType::int32(), ir::Intrinsic::CpAsyncWait, {ir::i32(2)}));
    }
  } looser;
  k.body = looser.mutate(k.body);
  std::string error;
  std::vector<runtime::OutputCheck> checks = simt::emulate_and_check(f, k, {{"n", 40}}, 3, &error);
  EXPECT_TRUE(!error.empty() || !runtime::all_ok(checks));
}

TEST(SoftwarePipeline, CudaHasTheAsyncCopies) {
  ir::PrimFunc f = script::parse_func(
      tile_sum(R"("software_pipeline_stage": [0, 2], "software_pipeline_async_stages": [0])"));
  std::string cuda = codegen::codegen_cuda(lower(f));
  EXPECT_NE(cuda.find("cp.async.ca.shared.global"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("cp.async.wait_group 1"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("cp.async.commit_group"), std::string::npos) << cuda;
}

void expect_lower_error(const std::string &text, const std::string &expected) {
  ir::PrimFunc f = script::parse_func(text);
  try {
    lower(f);
    ADD_FAILURE() << "no LowerError; expected one saying: " << expected;
  } catch (const LowerError &e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

TEST(SoftwarePipeline, RefusesAMalformedAnnotation) {
  expect_lower_error(tile_sum(R"("software_pipeline_stage": [0, 1, 1])"),
                     "loop 'k0': \"software_pipeline_stage\" lists 3 stages but the loop body has 2 statements");
  expect_lower_error(tile_sum(R"("software_pipeline_stage": [0, 1], "software_pipeline_order": [0, 0])"),
                     "\"software_pipeline_order\" must list each of 0..1 once");
  expect_lower_error(tile_sum(R"("software_pipeline_stage": [0, "x"])"),
                     "annotation \"software_pipeline_stage\" must be a list of integers");
}

/// Lowers `text`: its loop must run as written (no cp.async, no versions of
/// S), annotated with `why`; when `n` is given, emulated there too (serial
/// semantics: still right).
void expect_fallback(const std::string &text, const std::string &why, std::optional<int64_t> n = std::nullopt) {
  SCOPED_TRACE(why);
  LoweredFunc k = lower(script::parse_func(text));
  std::string found;
  ir::pre_order_visit(k.body, nullptr, [&](const ir::Stmt &s) {
    const auto *f = s.as<ir::For>();
    auto it = f ? f->annotations.find("software_pipeline_fallback") : ir::Annotations::const_iterator();
    if (f && it != f->annotations.end() && it->second.is_string()) found = it->second.as_string();
  });
  EXPECT_NE(found.find(why), std::string::npos) << "annotated: '" << found << "'\n" << print(k);
  EXPECT_EQ(count_calls(k, ir::Intrinsic::CpAsync), 0);
  if (n) expect_emulation_matches(text, *n);
}

TEST(SoftwarePipeline, WhatThePipelineWouldBreakRunsAsWritten) {
  // The reader of S at stage 0, its writer at stage 1.
  expect_fallback(tile_sum(R"("software_pipeline_stage": [1, 0])"),
                  "statement 1 (stage 0) reads 'S', written by statement 0 (stage 1), before the writer runs", 17);
  // Same stage, but the order puts the reader first.
  expect_fallback(tile_sum(R"("software_pipeline_stage": [0, 0], "software_pipeline_order": [1, 0])"),
                  "runs statement 1 (stage 0) before statement 0 (stage 0), but both access 'S'", 9);
  // S read after the loop.
  std::string after = tile_sum(R"("software_pipeline_stage": [0, 1], "software_pipeline_async_stages": [0])");
  after.replace(after.find("B[tx] = acc[tx]"), 15, "B[tx] = acc[tx] + S[0, tx]");
  expect_fallback(after, "'S' is used outside the loop", 17);
  // A parameter written at one stage and read at the next.
  std::string param = two_tiles(R"("software_pipeline_stage": [0, 1, 2])");
  param.replace(param.find("SB[i, tx] = B[k0 * 4 + i, tx]"), 29, "C[tx] = B[k0 * 4 + i, tx]");
  param.replace(param.find("SB[i, (tx + 5) % 32]"), 20, "C[(tx + 5) % 32]");
  expect_fallback(param, "'C' is written by statement 1 (stage 1) and accessed by statements of other stages; "
                         "only a shared or local allocation");
}

TEST(SoftwarePipeline, NestedPipelinesInTvmsCount) {
  // MetaSchedule's GEMMs pipeline a K tile loop around an unrolled one and
  // count, for the outer loop, the inner loop's prologue, body and epilogue
  // (5 stages for 4 statements here). The inner loop pipelines; the outer
  // runs as written, saying why; the result is right.
  const std::string text = R"(@T.prim_func
def main(a: T.handle, b: T.handle) -> None:
    n = T.int32()
    A = T.match_buffer(a, (n, 32), "float32")
    B = T.match_buffer(b, (32,), "float32")
    S = T.alloc_buffer((8, 32), scope="shared")
    S2 = T.alloc_buffer((8, 32), scope="shared")
    L = T.alloc_buffer((32,), scope="local")
    acc = T.alloc_buffer((32,), scope="local")
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            acc[tx] = T.float32(0)
        for k0 in T.serial((n + 7) // 8, annotations={"software_pipeline_async_stages": [0], "software_pipeline_order": [0, 1, 3, 2, 4], "software_pipeline_stage": [0, 0, 2, 3, 3]}):
            for i in range(8):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    if k0 * 8 + i < n:
                        S[i, tx] = A[k0 * 8 + i, tx]
            for i in range(8):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    if k0 * 8 + i < n:
                        S2[i, tx] = A[k0 * 8 + i, (tx + 3) % 32]
            for i in T.unroll(8, annotations={"software_pipeline_order": [0, 1], "software_pipeline_stage": [0, 1]}):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    if k0 * 8 + i < n:
                        L[tx] = S[i, (tx + 1) % 32]
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    if k0 * 8 + i < n:
                        acc[tx] = acc[tx] + L[tx] * S2[i, tx]
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            B[tx] = acc[tx]
)";
  expect_fallback(text, "(after its inner pipeline)");
  for (int64_t n : {0, 3, 8, 19}) {
    LoweredFunc k = expect_emulation_matches(text, n);
    EXPECT_EQ(elements_of(k, "L"), 2) << "the inner pipeline's two versions of each thread's register";
  }
}

TEST(SoftwarePipeline, AnUnrolledLoopPipelinesToo) {
  // TVM's dlight annotates T.unroll loops (a K step's shared-to-local copies).
  std::string unrolled = tile_sum(R"("software_pipeline_stage": [0, 1], "software_pipeline_async_stages": [0])");
  unrolled.replace(unrolled.find("T.serial("), 9, "T.unroll(");
  for (int64_t n : {0, 5, 17}) {
    LoweredFunc k = expect_emulation_matches(unrolled, n);
    EXPECT_EQ(elements_of(k, "S"), 2 * 8 * 32);
    EXPECT_GT(count_calls(k, ir::Intrinsic::CpAsync), 0);
  }
}

}  // namespace
}  // namespace tessera::lower
