//===- tests/rules/TransposeTest.cpp - The elementwise rule's tiled form ----===//
//
// Transpose-like programs through the elementwise rule: the match finds the
// transposed input (after inlining a chain, ignoring broadcasts), the default
// config is the tiled form there and the plain form elsewhere, the tiled
// schedule gives the interpreter's answer at tiles that divide nothing
// (33 x 70, symbolic sizes, several tile shapes), lowers to a padded shared
// tile, and its config goes through JSON and validate.
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"

#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/lower/Lower.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/schedule/Trace.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

using rules::ElementwiseConfig;

/// The transpose workload at `rows` x `cols`.
ir::PrimFunc transpose_at(int64_t rows, int64_t cols) {
  return analysis::specialize(load_func(find_entry("transpose_f32")), {{"rows", rows}, {"cols", cols}});
}

std::string config_error(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const rules::ConfigError &e) {
    return e.what();
  }
  return "";
}

ElementwiseConfig tiled(int64_t tile, int64_t rows, int64_t pad, int64_t staged_bytes = 4,
                        bool unroll = true) {
  ElementwiseConfig c;
  c.transpose_tile = tile, c.tile_rows = rows, c.transpose_pad = pad, c.staged_bytes = staged_bytes;
  c.threads = tile * rows, c.unroll = unroll;
  return c;
}

/// Applies the elementwise rule at `config` (validated), checks that the trace
/// replays and that the interpreter's answer is the unscheduled one.
ir::PrimFunc apply_checked(const ir::PrimFunc &f, const ElementwiseConfig &config,
                           const runtime::DimBindings &dims = {}) {
  const rules::Rule &rule = rules::elementwise_rule();
  auto m = rule.match(f, test_arch());
  EXPECT_TRUE(m) << m.reason();
  if (!m) return f;
  config.validate(test_arch());
  SCOPED_TRACE(config.str());
  schedule::Schedule sch = rule.apply(f, **m, config);
  EXPECT_TRUE(analysis::analyze(sch.func()).is_scheduled);
  schedule::Schedule replay(f);
  replay.replay(sch.trace().to_json());
  EXPECT_TRUE(ir::structural_equal(replay.func(), sch.func()));
  Entry e;
  e.name = f.name();
  expect_same_results(e, f, sch.func(), dims);
  return sch.func();
}

/// A chain: a scaled copy of A, transposed (the transpose is in the last
/// block's read of the intermediate), plus a bias along the output's rows
/// (a broadcast across the stores, not staged). Batched: 3 x 37 x 45.
constexpr const char *kBatchedChain = R"(
@T.prim_func
def main(A: T.Buffer((3, 37, 45), "float32"), bias: T.Buffer((45,), "float32"), B: T.Buffer((3, 45, 37), "float32")):
    T.func_attr({"tir.noalias": True})
    S = T.alloc_buffer((3, 37, 45), "float32")
    for b, i, j in T.grid(3, 37, 45):
        with T.block("S"):
            v_b, v_i, v_j = T.axis.remap("SSS", [b, i, j])
            S[v_b, v_i, v_j] = A[v_b, v_i, v_j] * T.float32(2)
    for b, j, i in T.grid(3, 45, 37):
        with T.block("B"):
            v_b, v_j, v_i = T.axis.remap("SSS", [b, j, i])
            B[v_b, v_j, v_i] = S[v_b, v_i, v_j] + bias[v_j]
)";

/// Two transposed inputs of different element sizes, and one read straight.
constexpr const char *kTwoInputs = R"(
@T.prim_func
def main(A: T.Buffer((40, 24), "float32"), H: T.Buffer((40, 24), "float16"), D: T.Buffer((24, 40), "float32"), C: T.Buffer((24, 40), "float32")):
    T.func_attr({"tir.noalias": True})
    for j, i in T.grid(24, 40):
        with T.block("C"):
            v_j, v_i = T.axis.remap("SS", [j, i])
            C[v_j, v_i] = A[v_i, v_j] + T.Cast("float32", H[v_i, v_j]) + D[v_j, v_i]
)";

/// A float16 transpose (two elements per bank word).
constexpr const char *kTransposeF16 = R"(
@T.prim_func
def main(A: T.Buffer((64, 96), "float16"), B: T.Buffer((96, 64), "float16")):
    T.func_attr({"tir.noalias": True})
    for i, j in T.grid(64, 96):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_j, v_i] = A[v_i, v_j]
)";

TEST(TransposeTile, WorkloadMatchesElementwiseWithTheTiledFormByDefault) {
  SmallWorkload w = small_workload(find_entry("transpose_f32"));
  rules::DefaultSchedule s = rules::apply_default_schedule(w.func, test_arch());
  EXPECT_EQ(s.rule, "elementwise");
  ASSERT_EQ(s.config["rule"], "elementwise");
  EXPECT_EQ(s.config["transpose_tile"], 32) << s.config.dump();
  EXPECT_EQ(s.config["tile_rows"], 32) << s.config.dump();
  EXPECT_EQ(s.config["vector"], 4) << s.config.dump();
  EXPECT_EQ(s.config["threads"], 256) << s.config.dump();
  EXPECT_EQ(s.config["staged_bytes"], 4) << s.config.dump();
  // float32 rows 32 apart hit one bank: one element of padding separates them.
  EXPECT_EQ(s.config["transpose_pad"], 1) << s.config.dump();
  std::string text = script::print(s.func);
  EXPECT_NE(text.find("A_shared"), std::string::npos) << text;
  EXPECT_NE(text.find("threadIdx.y"), std::string::npos) << text;
  EXPECT_NE(text.find("buffer_dim_align"), std::string::npos) << text;
  expect_same_results(find_entry("transpose_f32"), w.func, s.func, w.dims);

  auto m = rules::elementwise_rule().match(w.func, test_arch());
  ASSERT_TRUE(m);
  EXPECT_NE((*m)->describe().find("transposed read of A"), std::string::npos) << (*m)->describe();
  std::optional<rules::ElementwiseTranspose> t = rules::elementwise_transpose(**m);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->extent_w, find_entry("transpose_f32").small.at("rows"));
  EXPECT_EQ(t->extent_r, find_entry("transpose_f32").small.at("cols"));
  EXPECT_EQ(t->staged_inputs, 1);
}

TEST(TransposeTile, TiledConfigsMatchTheInterpreterOnShapesThatDivideNothing) {
  for (auto [rows, cols] : {std::pair{33, 70}, std::pair{45, 67}, std::pair{64, 32}}) {
    ir::PrimFunc f = transpose_at(rows, cols);
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    for (const ElementwiseConfig &c :
         {tiled(32, 8, 1), tiled(16, 4, 1, 4, false), tiled(64, 16, 1), tiled(32, 32, 0), tiled(8, 1, 3)})
      apply_checked(f, c);
  }
}

TEST(TransposeTile, SymbolicExtentsAreMasked) {
  ir::PrimFunc f = load_func(find_entry("transpose_f32"));
  auto m = rules::elementwise_rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  auto c = rules::elementwise_rule().default_config(**m, test_arch());
  const auto &ec = static_cast<const ElementwiseConfig &>(*c);
  EXPECT_EQ(ec.transpose_tile, 32);
  for (auto [rows, cols] : {std::pair{33, 70}, std::pair{5, 40}}) {
    SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
    apply_checked(f, ec, {{"rows", rows}, {"cols", cols}});
    apply_checked(f, tiled(16, 2, 1), {{"rows", rows}, {"cols", cols}});
  }
}

TEST(TransposeTile, ChainIsInlinedAndOnlyTheTransposedInputIsStaged) {
  ir::PrimFunc f = script::parse_func(kBatchedChain);
  auto m = rules::elementwise_rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  std::optional<rules::ElementwiseTranspose> t = rules::elementwise_transpose(**m);
  ASSERT_TRUE(t.has_value()) << (*m)->describe();
  EXPECT_EQ(t->staged_inputs, 1);
  EXPECT_EQ(t->extent_w, 37);
  EXPECT_EQ(t->extent_r, 45);
  auto c = rules::elementwise_rule().default_config(**m, test_arch());
  ASSERT_TRUE(static_cast<const ElementwiseConfig &>(*c).is_tiled()) << c->str();
  ir::PrimFunc s = apply_checked(f, static_cast<const ElementwiseConfig &>(*c));
  std::string text = script::print(s);
  EXPECT_NE(text.find("A_shared"), std::string::npos) << text;
  EXPECT_EQ(text.find("bias_shared"), std::string::npos) << text;
  apply_checked(f, tiled(16, 8, 1));
}

TEST(TransposeTile, EveryTransposedInputIsStaged) {
  ir::PrimFunc f = script::parse_func(kTwoInputs);
  auto m = rules::elementwise_rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  std::optional<rules::ElementwiseTranspose> t = rules::elementwise_transpose(**m);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->staged_inputs, 2);
  EXPECT_EQ(t->staged_bytes, 4 + 2);
  ir::PrimFunc s = apply_checked(f, tiled(16, 4, 1, 6));
  std::string text = script::print(s);
  EXPECT_NE(text.find("A_shared"), std::string::npos) << text;
  EXPECT_NE(text.find("H_shared"), std::string::npos) << text;
  EXPECT_EQ(text.find("D_shared"), std::string::npos) << text;
  auto mm = rules::elementwise_rule().match(f, test_arch());
  EXPECT_NE(config_error([&] {
              rules::elementwise_rule().apply(f, **mm, tiled(16, 4, 1, 4));
            }).find("staged_bytes = 4 does not describe this workload (6)"),
            std::string::npos);
}

TEST(TransposeTile, PlainWorkloadsKeepThePlainForm) {
  for (const char *name : {"copy_f16", "add_f16"}) {
    SmallWorkload w = small_workload(find_entry(name));
    auto m = rules::elementwise_rule().match(w.func, test_arch());
    ASSERT_TRUE(m) << m.reason();
    EXPECT_FALSE(rules::elementwise_transpose(**m).has_value()) << name;
    rules::DefaultSchedule s = rules::apply_default_schedule(w.func, test_arch());
    EXPECT_EQ(s.rule, "elementwise");
    EXPECT_EQ(s.config["transpose_tile"], 0) << name << " " << s.config.dump();
    EXPECT_EQ(script::print(s.func).find("_shared"), std::string::npos) << name;
    // The tiled form needs a transposed input.
    EXPECT_NE(config_error([&] {
                rules::elementwise_rule().apply(w.func, **m, tiled(32, 8, 1));
              }).find("transpose_tile = 32 needs a transpose-like access"),
              std::string::npos)
        << name;
    EXPECT_THROW(rules::tiled_elementwise_config(**m, 32, 8, test_arch()), rules::ConfigError);
  }
}

TEST(TransposeTile, TheLoweredTileIsPaddedAgainstBankConflicts) {
  ir::PrimFunc f = transpose_at(64, 96);
  auto m = rules::elementwise_rule().match(f, test_arch());
  ASSERT_TRUE(m);
  for (auto [tile, pad] : {std::pair{32, 1}, std::pair{64, 1}, std::pair{32, 0}}) {
    ElementwiseConfig c = tiled(tile, 8, pad);
    lower::LoweredFunc k = lower::lower(rules::elementwise_rule().apply(f, **m, c).func());
    auto shared = std::find_if(k.allocs.begin(), k.allocs.end(),
                               [](const ir::Buffer &b) { return b.scope() == "shared"; });
    ASSERT_NE(shared, k.allocs.end()) << c.str();
    ASSERT_EQ(shared->ndim(), 1);
    // Rows tile + pad elements apart; the last row ends the buffer.
    EXPECT_EQ(ir::as_const_int(shared->shape()[0]), (tile - 1) * (tile + pad) + tile) << c.str();
  }
  // The bank model's pad: a float32 column of a 32- or 64-wide tile is
  // conflict free one element apart; float16 elements pack two to a bank
  // word and need a pad too.
  EXPECT_EQ(rules::tiled_elementwise_config(**m, 32, 8, test_arch()).transpose_pad, 1);
  EXPECT_EQ(rules::tiled_elementwise_config(**m, 64, 4, test_arch()).transpose_pad, 1);
  ir::PrimFunc h = script::parse_func(kTransposeF16);
  auto mh = rules::elementwise_rule().match(h, test_arch());
  ASSERT_TRUE(mh);
  ElementwiseConfig ch = rules::tiled_elementwise_config(**mh, 32, 8, test_arch());
  EXPECT_GT(ch.transpose_pad, 0);
  EXPECT_EQ(ch.staged_bytes, 2);
  apply_checked(h, ch);
}

TEST(TransposeTile, ConfigRoundTripsAndValidates) {
  ElementwiseConfig c = tiled(32, 8, 1);
  EXPECT_NO_THROW(c.validate(test_arch()));
  std::unique_ptr<rules::Config> back = rules::elementwise_rule().config_from_json(c.to_json());
  EXPECT_EQ(back->to_json(), c.to_json());
  auto error = [](const ElementwiseConfig &x) { return config_error([&] { x.validate(test_arch()); }); };
  auto with = [&](auto edit) {
    ElementwiseConfig x = c;
    edit(x);
    return error(x);
  };
  EXPECT_NE(with([](auto &x) {
              x.transpose_tile = 24;
            }).find("transpose_tile = 24 is not 0 (the plain form) or a power of two"),
            std::string::npos);
  EXPECT_NE(with([](auto &x) {
              x.tile_rows = 3, x.threads = 96;
            }).find("tile_rows = 3 does not divide transpose_tile = 32"),
            std::string::npos);
  EXPECT_NE(
      with([](auto &x) { x.threads = 128; }).find("threads = 128 is not transpose_tile / vector x tile_rows = 256"),
      std::string::npos);
  EXPECT_NE(with([](auto &x) { x.vector = 4; }).find("threads = 256 is not transpose_tile / vector x tile_rows = 64"),
            std::string::npos);
  EXPECT_NE(with([](auto &x) {
              x.transpose_tile = 8, x.tile_rows = 8, x.vector = 16;
            }).find("vector = 16 does not divide transpose_tile = 8"),
            std::string::npos);
  EXPECT_NE(with([](auto &x) {
              x.transpose_pad = 32;
            }).find("transpose_pad = 32 is outside [0, transpose_tile = 32)"),
            std::string::npos);
  EXPECT_NE(with([](auto &x) { x.staged_bytes = 0; }).find("staged_bytes = 0 must be at least 1"),
            std::string::npos);
  ElementwiseConfig big = tiled(128, 8, 1, 16);
  EXPECT_NE(
      error(big).find("needs " + std::to_string(128 * 129 * 16) + " bytes of shared memory, more than the " +
                      std::to_string(test_arch().max_smem_per_block())),
      std::string::npos)
      << error(big);
  ElementwiseConfig plain;
  plain.tile_rows = 8;
  EXPECT_NE(error(plain).find("tile_rows = 8 must be 0 in the plain form"), std::string::npos);
  plain.tile_rows = 0, plain.transpose_pad = 1;
  EXPECT_NE(error(plain).find("transpose_pad = 1 must be 0 in the plain form"), std::string::npos);
}

}  // namespace
}  // namespace tessera::test
