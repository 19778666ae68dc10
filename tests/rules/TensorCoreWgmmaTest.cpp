//===- tests/rules/TensorCoreWgmmaTest.cpp - The rule's Hopper kernel -------===//
//
// matmul_tensor_core with `wgmma` (Hopper): float16, bfloat16 and int8 GEMMs
// in every layout (nt read K-major; 16-bit nn, tn and tt read MN-major where
// the tile's M or N fills 128-byte spans, else transposed on the way in) at
// shapes no tile divides (a symbolic M of 7, N = 56, K = 200: the pipeline
// wraps its stages) scheduled, interpreted and emulated (a CPU thread per
// GPU thread) against the float64 reference, as is every wgmma config the
// policy proposes for nt and nn (rasterised panels, 2 to 6 stages); the configs wgmma cannot run
// (K steps that are not 128 bytes, a GPU without wgmma) refused with the
// reason. (The cubins: TensorCoreWgmmaSassTest.cpp.)
//
//===----------------------------------------------------------------------===//
#include <cstdio>
#include <map>

#include "RuleTestUtil.h"
#include "TensorCoreSimtUtil.h"
#include "TensorCoreTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/ir/Functor.h"
#include "tessera/policies/Policy.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/script/Parser.h"

namespace tessera::test {
namespace {

struct Case {
  const char *what;
  std::string text;
  int64_t in_bytes;
};

std::vector<Case> cases() {
  return {{"float16 nt", matmul_text("float16", true, true, "m", 56, 200), 2},
          {"bfloat16 nt", matmul_text("bfloat16", true, true, "m", 56, 200), 2},
          {"int8 nt", int8_text(7, 56, 200), 1},
          // Transposed on the way in: B (nn), A (tn), both (tt).
          {"float16 nn", matmul_text("float16", true, false, "m", 56, 200), 2},
          {"float16 tn", matmul_text("float16", false, true, "m", 56, 200), 2},
          {"bfloat16 tt", matmul_text("bfloat16", false, false, "m", 56, 200), 2}};
}

/// The T.wgmma calls of `f` (pointers into it: `f` must outlive them).
std::vector<const ir::Call *> wgmma_calls(const ir::PrimFunc &f) {
  std::vector<const ir::Call *> out;
  ir::pre_order_visit(
      f.body(),
      [&](const ir::Expr &e) {
        if (const auto *c = e.as<ir::Call>(); c && c->op == ir::Intrinsic::Wgmma) out.push_back(c);
      },
      {});
  return out;
}

TEST(TensorCoreWgmma, EveryLayoutMatchesTheReferenceInTheInterpreterAndTheEmulator) {
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.what);
    ir::PrimFunc f = script::parse_func(c.text);
    for (auto [groups, n] : {std::pair<int64_t, int64_t>{1, 64}, {2, 32}}) {
      SCOPED_TRACE("block " + std::to_string(64 * groups) + " x " + std::to_string(n));
      rules::TensorCoreConfig config = wgmma_config(c.in_bytes, groups, n);
      ir::PrimFunc scheduled;
      expect_ok(run_checked(f, {{"m", 7}}, &config, &scheduled));
      // The emulator: threads concurrently, barriers, cp.async and wgmma
      // landing at their waits, races checked.
      std::string error;
      std::vector<runtime::OutputCheck> checks = emulate(f, scheduled, {{"m", 7}}, &error);
      EXPECT_EQ(error, "");
      if (error.empty()) expect_ok(checks);
    }
  }
}

TEST(TensorCoreWgmma, SixteenBitMnMajorOperandsAreReadAsTheyArrive) {
  // nn float16, block_n 64: B's tile is N-major (trans_b), filled by
  // cp.async like the K-major A; LBO is the span stride (block_k rows of
  // 128 bytes). With block_n 32 (half a span) B is transposed on its way in.
  ir::PrimFunc f = script::parse_func(matmul_text("float16", true, false, "m", 56, 200));
  auto m = rules::matmul_tensor_core_rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  std::map<int64_t, int> cp_async;  // by block_n
  for (auto [n, want_trans_b] : {std::pair<int64_t, int64_t>{64, 1}, {32, 0}}) {
    SCOPED_TRACE("block_n " + std::to_string(n));
    rules::TensorCoreConfig config = wgmma_config(2, 1, n);
    ir::PrimFunc scheduled = rules::matmul_tensor_core_rule().apply(f, **m, config).func();
    std::vector<const ir::Call *> calls = wgmma_calls(scheduled);
    ASSERT_EQ(calls.size(), 1u);
    auto flag = [&](int i) { return ir::as_const_int(calls[0]->args[i]).value_or(-1); };
    EXPECT_EQ(flag(8), 0) << "A is K-major";
    EXPECT_EQ(flag(9), want_trans_b);
    EXPECT_EQ(flag(6), want_trans_b ? 64 * 128 : 16) << "LBO";
    ir::pre_order_visit(
        scheduled.body(),
        [&, n = n](const ir::Expr &e) {
          if (const auto *c = e.as<ir::Call>(); c && c->op == ir::Intrinsic::CpAsync) ++cp_async[n];
        },
        {});
  }
  // The same tile copies (prologue and main loop) for A and, MN-major, for B.
  EXPECT_GT(cp_async[32], 0);
  EXPECT_EQ(cp_async[64], 2 * cp_async[32]) << "B arrives by cp.async only when it is not transposed";
  // tn: A M-major (each warpgroup's 64 rows are one span), B K-major.
  ir::PrimFunc tn = script::parse_func(matmul_text("bfloat16", false, true, "128", 56, 200));  // M rows aligned
  auto mt = rules::matmul_tensor_core_rule().match(tn, test_arch());
  ASSERT_TRUE(mt) << mt.reason();
  // The calls point into the scheduled function: it is held while they are read.
  const ir::PrimFunc tn_scheduled = rules::matmul_tensor_core_rule().apply(tn, **mt, wgmma_config(2, 2, 32)).func();
  std::vector<const ir::Call *> calls = wgmma_calls(tn_scheduled);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(ir::as_const_int(calls[0]->args[8]).value_or(-1), 1) << "trans_a";
  EXPECT_EQ(ir::as_const_int(calls[0]->args[9]).value_or(-1), 0) << "trans_b";
}

TEST(TensorCoreWgmma, WarpgroupsOfTwoM64SubtilesMatchTheReferenceInTheEmulator) {
  // 256 rows over two consumer warpgroups and 128 over one, each taking two
  // m64 subtiles: fed by cp.async, by TMA and warp specialised, persistent
  // with the TMA-store epilogue. M = 300 ends inside a subtile's second
  // warp; N = 56 inside the block's columns; K = 200 in four K tiles.
  ir::PrimFunc f = script::parse_func(matmul_text("float16", true, true, "m", 56, 200));
  for (auto [block_m, warps_m] : {std::pair<int64_t, int64_t>{256, 8}, {128, 4}})
    for (const char *form : {"cp.async", "warp specialised", "persistent, TMA store"}) {
      SCOPED_TRACE(std::to_string(block_m) + " rows, " + std::to_string(warps_m) + " warps, " + form);
      rules::TensorCoreConfig c = wgmma_config(2, 1, 64, 2);
      c.block_m = block_m, c.warps_m = warps_m;
      const std::string w = form;
      c.tma = c.warp_specialized = w != "cp.async";
      if (w == "persistent, TMA store") c.persistent = 1, c.tma_store = true;
      c.validate(test_arch());
      EXPECT_EQ(c.m64_per_group(), 2);
      ir::PrimFunc s = expect_emulated(f, c, {{"m", 300}});
      // Per K step of 16, one wgmma per subtile: a loop of 2 around the call.
      int subtile_loops = 0;
      ir::pre_order_visit(s.body(), nullptr, [&](const ir::Stmt &x) {
        const auto *loop = x.as<ir::For>();
        if (!loop || loop->loop_var.name() != "mi" || ir::as_const_int(loop->extent).value_or(0) != 2) return;
        int calls = 0;
        ir::pre_order_visit(loop->body, [&](const ir::Expr &e) {
          calls += e.as<ir::Call>() && e.as<ir::Call>()->op == ir::Intrinsic::Wgmma;
        }, nullptr);
        subtile_loops += calls == 1;
      });
      EXPECT_EQ(subtile_loops, 1);
    }
  // A warpgroup's accumulators of two subtiles: 128 x 256 on one warpgroup
  // would need 256 of them per thread.
  rules::TensorCoreConfig too_many = wgmma_config(2, 1, 256);
  too_many.block_m = 128;
  EXPECT_THROW(too_many.validate(test_arch()), rules::ConfigError);
}

TEST(TensorCoreWgmma, ConfigsWgmmaCannotRunAreRefused) {
  rules::TensorCoreConfig c = wgmma_config(2, 1, 64);
  c.validate(test_arch());
  rules::TensorCoreConfig bad = wgmma_config(2, 1, 64);
  bad.block_k = 32;  // 64-byte rows
  EXPECT_THROW(bad.validate(test_arch()), rules::ConfigError);
  bad = wgmma_config(2, 1, 64);
  bad.warps_m = 2, bad.warps_n = 2;
  EXPECT_THROW(bad.validate(test_arch()), rules::ConfigError);
  bad = wgmma_config(2, 3, 64);  // three warpgroups: block_m 192
  EXPECT_THROW(bad.validate(test_arch()), rules::ConfigError);
  EXPECT_THROW(wgmma_config(2, 1, 64).validate(Arch::by_name("a100")), rules::ConfigError);
  // The JSON round trip keeps the flag; an mma.sync config's JSON has none.
  rules::TensorCoreConfig back = rules::TensorCoreConfig::from_json(c.to_json());
  EXPECT_TRUE(back.wgmma);
  EXPECT_FALSE(rules::TensorCoreConfig().to_json().contains("wgmma"));
}

TEST(TensorCoreWgmma, EveryConfigThePolicyProposesIsRight) {
  // The policy's wgmma configs for a large problem (rasterised panels, 2 to
  // 6 stages, 256-wide N) run at a small one that divides none of them.
  // nt reads both tiles K-major, nn its B N-major.
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  for (bool b_k_inner : {true, false}) {
    SCOPED_TRACE(b_k_inner ? "nt" : "nn");
    ir::PrimFunc big = analysis::specialize(
        script::parse_func(matmul_text("float16", true, b_k_inner, "m", 8192, 8192)), {{"m", 8192}});
    auto m = rule.match(big, test_arch());
    ASSERT_TRUE(m) << m.reason();
    ir::PrimFunc small = script::parse_func(matmul_text("float16", true, b_k_inner, "m", 72, 136));
    int tried = 0, rasterised = 0;
    for (const policies::Candidate &c : policies::propose(big, rule, **m, test_arch(), {.topk = 20}).candidates) {
      const auto &config = dynamic_cast<const rules::TensorCoreConfig &>(*c.config);
      if (!config.wgmma) continue;
      SCOPED_TRACE(config.str());
      if (config.warp_specialized) {
        // Its warpgroups wait for each other: the emulator runs them together.
        std::string error;
        ir::PrimFunc scheduled = rule.apply(small, **rule.match(small, test_arch()), config).func();
        std::vector<runtime::OutputCheck> checks = emulate(small, scheduled, {{"m", 77}}, &error);
        EXPECT_EQ(error, "");
        if (error.empty()) expect_ok(checks);
      } else {
        expect_ok(run_checked(small, {{"m", 77}}, &config));
      }
      ++tried;
      rasterised += config.raster > 0;
    }
    EXPECT_EQ(tried, 10);
    std::printf("# %s: %d wgmma configs, %d rasterised\n", b_k_inner ? "nt" : "nn", tried, rasterised);
  }
}

TEST(TensorCoreWgmma, ThePolicyProposesBothKernelsOnHopper) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  auto count = [&](const std::string &text, const Arch &arch, policies::ProposeOptions options) {
    ir::PrimFunc f = analysis::specialize(script::parse_func(text), {{"m", 4096}});
    auto m = rule.match(f, arch);
    EXPECT_TRUE(m) << m.reason();
    std::pair<int, int> wgmma_mma{0, 0};
    for (const policies::Candidate &c : policies::propose(f, rule, **m, arch, options).candidates) {
      const auto &tc = dynamic_cast<const rules::TensorCoreConfig &>(*c.config);
      EXPECT_NO_THROW(tc.validate(arch)) << tc.str();
      (tc.wgmma ? wgmma_mma.first : wgmma_mma.second) += 1;
    }
    return wgmma_mma;
  };
  const std::string nt = matmul_text("float16", true, true, "m", 4096, 4096);
  // Each family keeps half of the top-k: the model is not calibrated between them.
  EXPECT_EQ(count(nt, test_arch(), {.topk = 20}), std::make_pair(10, 10));
  // 16-bit operands in any layout (wgmma reads them MN-major). (int8 is
  // matched K-major only: the mma.sync kernel's ldmatrix needs it.)
  EXPECT_EQ(count(matmul_text("float16", true, false, "m", 4096, 4096), test_arch(), {.topk = 20}),
            std::make_pair(10, 10));
  EXPECT_EQ(count(matmul_text("bfloat16", false, true, "m", 4096, 4096), test_arch(), {.topk = 20}),
            std::make_pair(10, 10));
  // Not where the Arch has no wgmma, nor in dynamic plans.
  EXPECT_EQ(count(nt, Arch::by_name("a100"), {.topk = 20}).first, 0);
  EXPECT_EQ(count(nt, test_arch(), {.topk = 20, .hopper_kernels = false}).first, 0);
}

}  // namespace
}  // namespace tessera::test
