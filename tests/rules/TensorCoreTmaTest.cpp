//===- tests/rules/TensorCoreTmaTest.cpp - The Hopper kernel fed by TMA ----===//
//
// matmul_tensor_core with `wgmma` and `tma`: both tiles of each K step
// arrive by TMA (T.tma_load, 128-byte swizzled boxes; an M- or N-major
// 16-bit tile in one box per 64-element span) completing on the stage's
// mbarrier, which the warpgroups wait on. "nt" float16, bfloat16 and int8,
// "nn", "tn" and "tt" 16-bit GEMMs (a symbolic M of 7, N = 56, K = 208 or 200: every box runs
// past an edge and the pipeline wraps its stages), plain and batched,
// scheduled, interpreted and emulated (a CPU thread per GPU thread) against
// the float64 reference; where TMA cannot copy a tile (an N-major tile
// narrower than a span, rows that are not a multiple of 16 bytes, a GPU
// without TMA, a config without wgmma) the config is refused with the reason. Warp
// specialised (a producer warpgroup copying, consumer warpgroups waiting on
// full barriers and releasing stages through empty ones), the kernel runs
// in the SIMT emulator and the serial interpreter says it cannot run it.
// Persistent (a block per slot walking tiles, the barriers' phases running
// on across them): emulated with several tiles per block, batches, panels
// and more blocks than tiles; the grid is the block count. The policy
// proposes each wgmma config's warp-specialised TMA twin exactly where it
// can run, and its persistent twin where the tiles outnumber the slots.
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"
#include "TensorCoreSimtUtil.h"
#include "TensorCoreTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/ir/Functor.h"
#include "tessera/policies/CostModel.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

rules::TensorCoreConfig tma_config(int64_t in_bytes, int64_t groups, int64_t n, int64_t stages = 3) {
  rules::TensorCoreConfig c = wgmma_config(in_bytes, groups, n, stages);
  c.tma = true;
  return c;
}

TEST(TensorCoreTma, KMajorGemmsMatchTheReferenceInTheInterpreterAndTheEmulator) {
  struct Case {
    const char *what;
    std::string text;
    int64_t in_bytes;
    runtime::DimBindings dims = {{"m", 7}};  ///< an M-major A is copied when M is constant
  };
  for (const Case &c : {Case{"float16 nt", matmul_text("float16", true, true, "m", 56, 200), 2},
                        Case{"bfloat16 nt", matmul_text("bfloat16", true, true, "m", 56, 200), 2},
                        Case{"int8 nt", int8_text(7, 56, 208), 1},
                        // B N-major (nn), A M-major (tn), both (tt): a box per 64-element span.
                        Case{"float16 nn", matmul_text("float16", true, false, "m", 56, 200), 2},
                        Case{"bfloat16 tn", matmul_text("bfloat16", false, true, "72", 56, 200), 2, {}},
                        Case{"float16 tt", matmul_text("float16", false, false, "72", 56, 200), 2, {}}}) {
    SCOPED_TRACE(c.what);
    ir::PrimFunc f = script::parse_func(c.text);
    const bool spans = std::string(c.what).find("nt") == std::string::npos;
    for (auto [groups, n, stages] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 3}, {2, 128, 2}, {1, 256, 4}}) {
      SCOPED_TRACE("block " + std::to_string(64 * groups) + " x " + std::to_string(n) + ", " +
                   std::to_string(stages) + " stages");
      rules::TensorCoreConfig config = tma_config(c.in_bytes, groups, n, stages);
      ir::PrimFunc scheduled;
      expect_ok(run_checked(f, c.dims, &config, &scheduled));
      // The tiles come by TMA only: no thread copies them.
      EXPECT_EQ(count_calls(scheduled, ir::Intrinsic::CpAsync), 0);
      if (!spans)
        EXPECT_EQ(count_calls(scheduled, ir::Intrinsic::TmaLoad), 2 * stages)
            << "two boxes for each of the prologue's stages - 1 fills, two in the loop";
      std::string error;
      std::vector<runtime::OutputCheck> checks = emulate(f, scheduled, c.dims, &error);
      EXPECT_EQ(error, "");
      if (error.empty()) expect_ok(checks);
    }
  }
}

TEST(TensorCoreTma, WarpSpecialisedKernelsMatchTheReferenceInTheEmulator) {
  // A producer warpgroup and one or two consumer warpgroups, running
  // concurrently: K = 200 makes four K tiles, so with two or three stages
  // the producer waits for the consumers to release each stage.
  for (const char *what : {"float16", "int8"}) {
    SCOPED_TRACE(what);
    const bool int8 = std::string(what) == "int8";
    ir::PrimFunc f = script::parse_func(int8 ? int8_text(7, 56, 208) : matmul_text("float16", true, true, "m", 56, 200));
    for (auto [groups, n, stages] : {std::tuple<int64_t, int64_t, int64_t>{1, 64, 2}, {2, 32, 3}}) {
      SCOPED_TRACE("block " + std::to_string(64 * groups) + " x " + std::to_string(n) + ", " +
                   std::to_string(stages) + " stages");
      rules::TensorCoreConfig config = tma_config(int8 ? 1 : 2, groups, n, stages);
      config.warp_specialized = true;
      config.validate(test_arch());
      EXPECT_EQ(config.threads(), 128 * (groups + 1));
      const rules::Rule &rule = rules::matmul_tensor_core_rule();
      auto m = rule.match(f, test_arch());
      ASSERT_TRUE(m) << m.reason();
      ir::PrimFunc scheduled = rule.apply(f, **m, config).func();
      EXPECT_EQ(count_calls(scheduled, ir::Intrinsic::SetMaxNReg), 2);
      std::string error;
      std::vector<runtime::OutputCheck> checks = emulate(f, scheduled, {{"m", 7}}, &error);
      EXPECT_EQ(error, "");
      if (error.empty()) expect_ok(checks);
      // The serial interpreter runs the consumers before the producer: it
      // says so instead of answering.
      std::vector<runtime::NDArray> args = runtime::make_random_args(f, {{"m", 7}}, 3);
      try {
        runtime::interpret(scheduled, args);
        ADD_FAILURE() << "the interpreter ran a warp-specialised kernel serially";
      } catch (const runtime::InterpretError &e) {
        EXPECT_NE(std::string(e.what()).find("waits forever"), std::string::npos) << e.what();
      }
    }
  }
  rules::TensorCoreConfig no_tma = wgmma_config(2, 1, 64);
  no_tma.warp_specialized = true;
  EXPECT_THROW(no_tma.validate(test_arch()), rules::ConfigError);
}

/// The warp-specialised config of TmaTest's shapes made persistent: `blocks` blocks.
rules::TensorCoreConfig persistent_config(int64_t groups, int64_t n, int64_t stages, int64_t blocks,
                                          int64_t raster = 0) {
  rules::TensorCoreConfig c = tma_config(2, groups, n, stages);
  c.warp_specialized = true;
  c.persistent = blocks;
  c.raster = raster;
  c.validate(test_arch());
  return c;
}

TEST(TensorCoreTma, PersistentBlocksWalkTheirTilesInTheEmulator) {
  // M = 200 (symbolic), N = 56, K = 200: four 64-row tiles of four K tiles
  // each. Three blocks: block 0 takes tiles 0 and 3, its stages' phases
  // running on from the first tile into the second (2 and 3 stages, so the
  // producer waits for releases across the tile boundary).
  ir::PrimFunc f = script::parse_func(matmul_text("float16", true, true, "m", 56, 200));
  for (auto [groups, n, stages, blocks, raster] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>{1, 64, 2, 3, 0}, {1, 32, 3, 3, 0},
        {2, 64, 2, 1, 0},  // one block does every tile
        {1, 64, 3, 8, 0},  // more blocks than tiles: one tile each
        {1, 32, 2, 3, 2}}) {
    SCOPED_TRACE("block " + std::to_string(64 * groups) + " x " + std::to_string(n) + ", " + std::to_string(stages) +
                 " stages, " + std::to_string(blocks) + " blocks, raster " + std::to_string(raster));
    expect_emulated(f, persistent_config(groups, n, stages, blocks, raster), {{"m", 200}});
  }
  // N = 96 with block_n 32 and panels of 2 rows: three tile columns.
  expect_emulated(script::parse_func(matmul_text("float16", true, true, "m", 96, 128)),
                  persistent_config(1, 32, 2, 5, 2), {{"m", 130}});
}

TEST(TensorCoreTma, PersistentBlocksCrossBatchesAndTheGridIsTheirCount) {
  // Two tile rows per batch element, six tiles over four blocks.
  ir::PrimFunc batched = script::parse_func(batched_product_text());
  rules::TensorCoreConfig config = persistent_config(1, 64, 2, 4);
  expect_emulated(batched, config, {{"m", 70}});
  // One blockIdx loop, of min(blocks, tiles); no blockIdx.y or z.
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  ir::PrimFunc f = analysis::specialize(script::parse_func(matmul_text("float16", true, true, "m", 256, 256)),
                                        {{"m", 1024}});
  auto m = rule.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  std::vector<std::pair<std::string, int64_t>> grid;
  ir::pre_order_visit(rule.apply(f, **m, persistent_config(2, 128, 3, 5)).func().body(), nullptr,
                      [&](const ir::Stmt &s) {
                        const auto *loop = s.as<ir::For>();
                        if (loop && loop->thread_tag.rfind("blockIdx", 0) == 0)
                          grid.emplace_back(loop->thread_tag, ir::as_const_int(loop->extent).value_or(-1));
                      });
  EXPECT_EQ(grid, (std::vector<std::pair<std::string, int64_t>>{{"blockIdx.x", 5}}));
  // The JSON keeps the count; the config without a producer warpgroup is refused.
  EXPECT_EQ(rules::TensorCoreConfig::from_json(config.to_json()).persistent, 4);
  EXPECT_FALSE(tma_config(2, 1, 64).to_json().contains("persistent"));
  rules::TensorCoreConfig not_specialised = tma_config(2, 1, 64);
  not_specialised.persistent = 132;
  try {
    not_specialised.validate(test_arch());
    ADD_FAILURE() << "a persistent kernel without warp specialisation was accepted";
  } catch (const rules::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("persistent"), std::string::npos) << e.what();
  }
}

TEST(TensorCoreTma, FewerKTilesThanStagesAndABatch) {
  // K = 64: one K tile, four stages (the prologue's other fills are skipped).
  ir::PrimFunc one_tile = script::parse_func(matmul_text("float16", true, true, "m", 56, 64));
  rules::TensorCoreConfig config = tma_config(2, 1, 64, 4);
  expect_ok(run_checked(one_tile, {{"m", 70}}, &config));
  // A batched product: a box of one batch element per copy.
  ir::PrimFunc batched = script::parse_func(batched_product_text());
  ir::PrimFunc scheduled;
  expect_ok(run_checked(batched, {{"m", 70}}, &config, &scheduled));
  std::string error;
  std::vector<runtime::OutputCheck> checks = emulate(batched, scheduled, {{"m", 70}}, &error);
  EXPECT_EQ(error, "");
  if (error.empty()) expect_ok(checks);
}

TEST(TensorCoreTma, ConfigsTmaCannotFeedAreRefusedWithTheReason) {
  // nn with block_n 32: B's tile would be transposed on its way in.
  EXPECT_NE(config_refusal(matmul_text("float16", true, false, "m", 56, 200), tma_config(2, 1, 32))
                .find("multiple of 64"),
            std::string::npos);
  // int8 is matched K-major only; an int8 "nn" has no tensor-core match to refuse.
  // int8 rows of 200 bytes: not a multiple of 16.
  EXPECT_NE(config_refusal(int8_text(7, 56, 200), tma_config(1, 1, 64)).find("multiples of 16 bytes"),
            std::string::npos);
  rules::TensorCoreConfig no_wgmma = tma_config(2, 1, 64);
  no_wgmma.wgmma = false;
  EXPECT_THROW(no_wgmma.validate(test_arch()), rules::ConfigError);
  EXPECT_THROW(tma_config(2, 1, 64).validate(Arch::by_name("a100")), rules::ConfigError);
  // The JSON keeps the flag; a config without it has none.
  EXPECT_TRUE(rules::TensorCoreConfig::from_json(tma_config(2, 1, 64).to_json()).tma);
  EXPECT_FALSE(wgmma_config(2, 1, 64).to_json().contains("tma"));
}

TEST(TensorCoreTma, ThePolicyProposesATmaTwinWhereTmaCanCopyTheTiles) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  auto count = [&](const std::string &text) {
    ir::PrimFunc f = analysis::specialize(script::parse_func(text), {{"m", 4096}});
    auto m = rule.match(f, test_arch());
    EXPECT_TRUE(m) << m.reason();
    int tma = 0, wgmma = 0;
    for (const policies::Candidate &c : policies::propose(f, rule, **m, test_arch(), {.topk = 20}).candidates) {
      const auto &tc = dynamic_cast<const rules::TensorCoreConfig &>(*c.config);
      EXPECT_NO_THROW(tc.validate(test_arch())) << tc.str();
      EXPECT_EQ(tc.tma, tc.warp_specialized) << "the twin is the warp-specialised kernel";
      tma += tc.tma, wgmma += tc.wgmma;
    }
    return std::pair{tma, wgmma};
  };
  // nt: wgmma tiles in both forms, each twin (and its persistent one) right
  // after its cp.async form with the same estimate: both kinds are measured.
  const auto [tma, wgmma] = count(matmul_text("float16", true, true, "m", 4096, 4096));
  EXPECT_GE(tma, 3);
  EXPECT_GE(wgmma - tma, 3) << "cp.async-fed wgmma kernels too";
  EXPECT_EQ(wgmma, 10);
  // nn: B N-major, copied in 64-element spans: twins too.
  EXPECT_GE(count(matmul_text("float16", true, false, "m", 4096, 4096)).first, 3);
  // A tensor whose rows are not a multiple of 16 bytes (K = 4100): none.
  EXPECT_EQ(count(matmul_text("float16", true, true, "m", 4096, 4100)).first, 0);
}

TEST(TensorCoreTma, ThePolicyMakesTwinsPersistentWhereTilesOutnumberTheSlots) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  const Arch &arch = test_arch();
  // The persistent twins of a problem of M = m, and whether each has a block per slot.
  auto persistent = [&](int64_t m_size) {
    ir::PrimFunc f =
        analysis::specialize(script::parse_func(matmul_text("float16", true, true, "m", 4096, 4096)), {{"m", m_size}});
    auto m = rule.match(f, arch);
    EXPECT_TRUE(m) << m.reason();
    int count = 0;
    for (const policies::Candidate &c : policies::propose(f, rule, **m, arch, {.topk = 40}).candidates) {
      const auto &tc = dynamic_cast<const rules::TensorCoreConfig &>(*c.config);
      if (tc.persistent == 0) continue;
      ++count;
      EXPECT_TRUE(tc.warp_specialized);
      policies::Occupancy occ = policies::occupancy(arch, {tc.threads(), tc.launch_registers(), tc.shared_bytes()});
      EXPECT_EQ(tc.persistent, occ.blocks_per_sm * arch.compute.sm_count) << tc.str();
      const int64_t tiles = (m_size + tc.block_m - 1) / tc.block_m * ((4096 + tc.block_n - 1) / tc.block_n);
      EXPECT_GT(tiles, tc.persistent) << tc.str();
    }
    return count;
  };
  EXPECT_GE(persistent(4096), 2);
  // 128 rows: at most 64 tiles, fewer than the SMs: every tile is in the first wave.
  EXPECT_EQ(persistent(128), 0);
}

}  // namespace
}  // namespace tessera::test
