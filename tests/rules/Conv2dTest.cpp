//===- tests/rules/Conv2dTest.cpp - The conv2d rule (implicit GEMM) ----------===//
//
// What it matches (the corpus conv with its padding block and cast epilogue,
// a strided and dilated conv without padding, a 5x5 conv with padding 2 and
// a bias + ReLU epilogue) and why it declines; default and other configs of
// both forms (direct, implicit_gemm) against the interpreter; geometry from
// the index expressions; fit_conv2d_layout on the implicit form; JSON and
// validate errors (the halo tile counts in shared memory).
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"

#include "tessera/analysis/Specialize.h"
#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "tessera/rules/Conv2d.h"
#include "tessera/script/Parser.h"
#include "Conv2dPrograms.h"

namespace tessera::test {
namespace {

const rules::Rule &rule() {
  return rules::conv2d_rule();
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}


/// A 5 x 5 window with padding 2 (a padding block), then bias + ReLU.
const char *kPadded = R"(
@T.prim_func
def main(I: T.Buffer((1, 7, 6, 3), "float32"), W: T.Buffer((5, 5, 3, 5), "float32"), bias: T.Buffer((5,), "float32"), O: T.Buffer((1, 7, 6, 5), "float32")):
    T.func_attr({"tir.noalias": True})
    P = T.alloc_buffer((1, 11, 10, 3))
    A = T.alloc_buffer((1, 7, 6, 5))
    for b, y, x, c in T.grid(1, 11, 10, 3):
        with T.block("P"):
            vb, vy, vx, vc = T.axis.remap("SSSS", [b, y, x, c])
            P[vb, vy, vx, vc] = T.if_then_else(2 <= vy and vy < 9 and 2 <= vx and vx < 8, I[vb, vy - 2, vx - 2, vc], T.float32(0))
    for b, y, x, o, r, s, c in T.grid(1, 7, 6, 5, 5, 5, 3):
        with T.block("A"):
            vb, vy, vx, vo, vr, vs, vc = T.axis.remap("SSSSRRR", [b, y, x, o, r, s, c])
            with T.init():
                A[vb, vy, vx, vo] = T.float32(0)
            A[vb, vy, vx, vo] = A[vb, vy, vx, vo] + P[vb, vy + vr, vx + vs, vc] * W[vr, vs, vc, vo]
    for b, y, x, o in T.grid(1, 7, 6, 5):
        with T.block("O"):
            vb, vy, vx, vo = T.axis.remap("SSSS", [b, y, x, o])
            O[vb, vy, vx, vo] = T.max(A[vb, vy, vx, vo] + bias[vo], T.float32(0))
)";

/// Stride 2 x 2, dilation 2 x 2, padding 1 (a padding block), 3 x 3 window.
const char *kStridedDilatedPadded = R"(
@T.prim_func
def main(I: T.Buffer((1, 9, 8, 3), "float32"), W: T.Buffer((3, 3, 3, 4), "float32"), O: T.Buffer((1, 4, 3, 4), "float32")):
    T.func_attr({"tir.noalias": True})
    P = T.alloc_buffer((1, 11, 10, 3))
    for b, y, x, c in T.grid(1, 11, 10, 3):
        with T.block("P"):
            vb, vy, vx, vc = T.axis.remap("SSSS", [b, y, x, c])
            P[vb, vy, vx, vc] = T.if_then_else(1 <= vy and vy < 10 and 1 <= vx and vx < 9, I[vb, vy - 1, vx - 1, vc], T.float32(0))
    for b, y, x, o, r, s, c in T.grid(1, 4, 3, 4, 3, 3, 3):
        with T.block("O"):
            vb, vy, vx, vo, vr, vs, vc = T.axis.remap("SSSSRRR", [b, y, x, o, r, s, c])
            with T.init():
                O[vb, vy, vx, vo] = T.float32(0)
            O[vb, vy, vx, vo] = O[vb, vy, vx, vo] + P[vb, vy * 2 + vr * 2, vx * 2 + vs * 2, vc] * W[vr, vs, vc, vo]
)";

rules::Conv2dConfig with_tiles(const rules::Config &def, int64_t bh, int64_t bw, int64_t bn, int64_t bk,
                               int64_t th, int64_t tw, int64_t tn, int64_t va, int64_t vb, int64_t vc,
                               int64_t pa, bool unroll) {
  auto c = dynamic_cast<const rules::Conv2dConfig &>(def);
  c.block_h = bh, c.block_w = bw, c.block_n = bn, c.block_k = bk, c.thread_h = th, c.thread_w = tw,
  c.thread_n = tn;
  c.vector_a = va, c.vector_b = vb, c.vector_c = vc, c.pad_a = pa, c.pad_b = 0, c.unroll = unroll;
  return c;
}

/// The implicit-GEMM form of `def` with matmul-style tiles.
rules::Conv2dConfig implicit_gemm(const rules::Config &def, int64_t bm, int64_t bn, int64_t bk, int64_t tm,
                                  int64_t tn, int64_t va, int64_t vb, int64_t vc, int64_t pa, int64_t pb,
                                  bool unroll) {
  auto c = dynamic_cast<const rules::Conv2dConfig &>(def);
  c.form = rules::Conv2dConfig::kImplicitGemm;
  c.block_m = bm, c.block_n = bn, c.block_k = bk, c.thread_m = tm, c.thread_n = tn;
  c.vector_a = va, c.vector_b = vb, c.vector_c = vc, c.pad_a = pa, c.pad_b = pb, c.unroll = unroll;
  return c;
}

void expect_configs_match(const Entry &e, const ir::PrimFunc &f, const runtime::DimBindings &dims,
                          std::vector<rules::Conv2dConfig> extra) {
  auto m = rule().match(f, test_arch());
  ASSERT_TRUE(m) << e.name << ": " << m.reason();
  auto def = rule().default_config(**m, test_arch());
  extra.insert(extra.begin(), dynamic_cast<const rules::Conv2dConfig &>(*def));
  for (const rules::Conv2dConfig &c : extra) {
    SCOPED_TRACE(e.name + " " + c.str());
    c.validate(test_arch());
    expect_same_results(e, f, rule().apply(f, **m, c).func(), dims);
  }
}

TEST(Conv2dRule, MatchesConvolutionsWithTheirGeometry) {
  auto m = rule().match(small_workload(find_entry("conv2d_nhwc_f16")).func, test_arch());
  ASSERT_TRUE(m) << m.reason();
  EXPECT_EQ((*m)->describe(),
            "block 'acc': conv2d 3x3 window, stride 1x1, dilation 1x1, output 9x11x10 from 6 "
            "channels, padding inlined, epilogue");
  auto s = rule().match(script::parse_func(kStridedConv2d), test_arch());
  ASSERT_TRUE(s) << s.reason();
  EXPECT_TRUE(contains((*s)->describe(), "3x2 window, stride 2x2, dilation 2x3")) << (*s)->describe();
  auto c = dynamic_cast<const rules::Conv2dConfig &>(*rule().default_config(**s, test_arch()));
  EXPECT_EQ(c.halo_h(), (c.block_h - 1) * 2 + 2 * 2 + 1);
  EXPECT_EQ(c.halo_w(), (c.block_w - 1) * 2 + 1 * 3 + 1);
}

TEST(Conv2dRule, DeclinesOthersWithTheReason) {
  for (auto [name, reason] : {std::pair{"matmul_nn_f32", "has no convolution window"},
                              {"add_f16", "it has no reduction block"},
                              {"reduce_max_f16", "does not sum"},
                              {"layernorm_f16", "2 reduction blocks"}}) {
    auto m = rule().match(small_workload(find_entry(name)).func, test_arch());
    ASSERT_FALSE(m) << name;
    EXPECT_TRUE(contains(m.reason(), reason)) << name << ": " << m.reason();
  }
  // One window (a 1-d convolution) and a window index that is not affine.
  auto one = script::parse_func(R"(
@T.prim_func
def main(I: T.Buffer((10, 4), "float32"), W: T.Buffer((3, 4, 6), "float32"), O: T.Buffer((8, 6), "float32")):
    for x, o, s, c in T.grid(8, 6, 3, 4):
        with T.block("O"):
            vx, vo, vs, vc = T.axis.remap("SSRR", [x, o, s, c])
            with T.init():
                O[vx, vo] = T.float32(0)
            O[vx, vo] = O[vx, vo] + I[vx + vs, vc] * W[vs, vc, vo]
)");
  auto m = rule().match(one, test_arch());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.reason(), "block 'O' reads 'I' through 1 windows; the conv2d rule handles 2");
  auto square = script::parse_func(R"(
@T.prim_func
def main(I: T.Buffer((2, 40, 40, 4), "float32"), W: T.Buffer((3, 3, 4, 6), "float32"), O: T.Buffer((2, 6, 6, 6), "float32")):
    for b, y, x, o, r, s, c in T.grid(2, 6, 6, 6, 3, 3, 4):
        with T.block("O"):
            vb, vy, vx, vo, vr, vs, vc = T.axis.remap("SSSSRRR", [b, y, x, o, r, s, c])
            with T.init():
                O[vb, vy, vx, vo] = T.float32(0)
            O[vb, vy, vx, vo] = O[vb, vy, vx, vo] + I[vb, vy * vy + vr, vx + vs, vc] * W[vr, vs, vc, vo]
)");
  m = rule().match(square, test_arch());
  ASSERT_FALSE(m);
  EXPECT_TRUE(contains(m.reason(), "is not a window")) << m.reason();
}

TEST(Conv2dRule, DefaultAndOtherConfigsMatchTheInterpreter) {
  Entry e = find_entry("conv2d_nhwc_f16");
  SmallWorkload w = small_workload(e);
  auto m = rule().match(w.func, test_arch());
  ASSERT_TRUE(m);
  auto def = rule().default_config(**m, test_arch());
  // 9 x 11 pixels, 10 output and 6 input channels: no tile divides.
  expect_configs_match(e, w.func, w.dims,
                       {with_tiles(*def, 4, 4, 8, 4, 2, 1, 4, 1, 2, 2, 1, false),
                        with_tiles(*def, 2, 8, 16, 8, 1, 2, 2, 1, 1, 1, 0, true)});
}

TEST(Conv2dRule, ADynamicBatchWithFixedPixelsAndChannels) {
  // Only the batch symbolic (what an engine with a dynamic batch holds): the
  // fused batch-and-tile loop's extent is n times a constant, and its bound
  // on the batch (f // tiles < n) must be provable for the tiles to reorder.
  Entry e = find_entry("conv2d_nhwc_f16");
  ir::PrimFunc f =
      analysis::specialize(load_func(e), {{"h", 9}, {"w", 11}, {"ci", 6}, {"co", 10}});
  auto m = rule().match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  auto def = rule().default_config(**m, test_arch());
  expect_configs_match(e, f, {{"n", 3}},
                       {with_tiles(*def, 4, 4, 8, 4, 2, 1, 4, 1, 2, 2, 1, false),
                        with_tiles(*def, 2, 8, 16, 8, 1, 2, 2, 1, 1, 1, 0, true)});
  // The implicit-GEMM form fuses the batch with the pixels: refused by name.
  try {
    rule().apply(f, **m, implicit_gemm(*def, 32, 8, 8, 4, 2, 1, 2, 2, 0, 0, true));
    FAIL() << "an implicit GEMM over a symbolic batch";
  } catch (const UserError &err) {
    EXPECT_TRUE(contains(err.what(), "iter 'v_b' of block 'acc' has a symbolic one")) << err.what();
  }
}

TEST(Conv2dRule, StrideDilationAndPaddingComeFromTheIndices) {
  Entry e;
  e.name = "strided";
  ir::PrimFunc strided = script::parse_func(kStridedConv2d);
  auto m = rule().match(strided, test_arch());
  ASSERT_TRUE(m);
  auto def = rule().default_config(**m, test_arch());
  expect_configs_match(e, strided, {},
                       {with_tiles(*def, 4, 4, 8, 2, 1, 2, 2, 1, 1, 1, 0, false),
                        with_tiles(*def, 2, 8, 4, 4, 2, 2, 2, 4, 2, 2, 4, true)});
  e.name = "padded";
  ir::PrimFunc padded = script::parse_func(kPadded);
  auto mp = rule().match(padded, test_arch());
  ASSERT_TRUE(mp) << mp.reason();
  EXPECT_TRUE(contains((*mp)->describe(), "5x5 window")) << (*mp)->describe();
  def = rule().default_config(**mp, test_arch());
  expect_configs_match(e, padded, {}, {with_tiles(*def, 4, 2, 4, 2, 2, 1, 2, 1, 1, 1, 0, true)});
}

TEST(Conv2dRule, ImplicitGemmMatchesTheInterpreter) {
  // Stride 1 with padding 1 (the corpus conv: M = 2 x 9 x 11 = 198, K = 3 x 3
  // x 6 = 54, N = 10, so no tile divides), stride 2 with dilation 2 x 3,
  // stride 2 with dilation 2 and padding 1, a 5 x 5 window with padding 2 and
  // a bias + ReLU epilogue.
  Entry corpus = find_entry("conv2d_nhwc_f16");
  SmallWorkload w = small_workload(corpus);
  auto m = rule().match(w.func, test_arch());
  ASSERT_TRUE(m);
  auto def = rule().default_config(**m, test_arch());
  expect_configs_match(corpus, w.func, w.dims,
                       {implicit_gemm(*def, 32, 8, 8, 4, 2, 1, 2, 2, 0, 0, true),
                        implicit_gemm(*def, 16, 16, 16, 2, 4, 2, 2, 1, 2, 2, false)});
  for (auto [name, text] : {std::pair{"strided", kStridedConv2d},
                            {"strided_dilated_padded", kStridedDilatedPadded},
                            {"padded", kPadded}}) {
    Entry e;
    e.name = name;
    ir::PrimFunc f = script::parse_func(text);
    auto mf = rule().match(f, test_arch());
    ASSERT_TRUE(mf) << name << ": " << mf.reason();
    auto d = rule().default_config(**mf, test_arch());
    expect_configs_match(e, f, {},
                         {implicit_gemm(*d, 8, 4, 4, 2, 2, 1, 1, 1, 0, 0, true),
                          implicit_gemm(*d, 16, 8, 8, 4, 4, 1, 2, 2, 1, 2, false)});
  }
}

TEST(Conv2dRule, FitLayoutKeepsImplicitGemmVectorsWithinATap) {
  // The strided float32 conv (4 input channels, no padding): an input vector
  // along the fused K divides the channels and the K step; the result
  // validates and gives the interpreter's answer. Through a padding block the
  // input stays scalar.
  Entry e;
  e.name = "strided";
  ir::PrimFunc f = script::parse_func(kStridedConv2d);
  auto m = rule().match(f, test_arch());
  ASSERT_TRUE(m);
  auto def = rule().default_config(**m, test_arch());
  std::vector<rules::Conv2dConfig> fitted;
  for (auto [bk, lanes] : {std::pair<int64_t, int64_t>{8, 4}, {6, 2}, {3, 1}}) {
    auto c = implicit_gemm(*def, 16, 6, bk, 4, 2, 0, 0, 0, 0, 0, true);
    rules::fit_conv2d_layout(**m, test_arch(), c);
    EXPECT_EQ(c.vector_a, lanes) << c.str();
    EXPECT_EQ(c.pad_a % c.vector_a, 0) << c.str();
    EXPECT_EQ(c.pad_b % c.vector_b, 0) << c.str();
    fitted.push_back(c);
  }
  expect_configs_match(e, f, {}, fitted);
  SmallWorkload w = small_workload(find_entry("conv2d_nhwc_f16"));
  auto mp = rule().match(w.func, test_arch());
  ASSERT_TRUE(mp);
  auto c = implicit_gemm(*rule().default_config(**mp, test_arch()), 32, 8, 12, 4, 2, 0, 0, 0, 0, 0, true);
  rules::fit_conv2d_layout(**mp, test_arch(), c);
  EXPECT_EQ(c.vector_a, 1) << c.str();
  EXPECT_EQ(c.form, rules::Conv2dConfig::kImplicitGemm);
}

TEST(Conv2dRule, ImplicitGemmGathersAnIm2colTile) {
  Entry e = find_entry("conv2d_nhwc_f16");
  SmallWorkload w = small_workload(e);
  auto m = rule().match(w.func, test_arch());
  ASSERT_TRUE(m);
  auto c = implicit_gemm(*rule().default_config(**m, test_arch()), 32, 8, 8, 4, 2, 1, 2, 2, 0, 0, true);
  std::string cuda = codegen::codegen_cuda(lower::lower(rule().apply(w.func, **m, c).func()));
  // The A tile is block_m x block_k (no halo), the weights block_k x block_n,
  // the accumulators thread_m x thread_n; nothing im2col-sized is stored.
  EXPECT_TRUE(contains(cuda, "pad_reindex_shared[256]")) << cuda;
  EXPECT_TRUE(contains(cuda, "weight_reindex_shared[64]")) << cuda;
  EXPECT_TRUE(contains(cuda, "acc_reindex_local[8]")) << cuda;
  EXPECT_FALSE(contains(cuda, "pad_reindex[")) << cuda;
}

TEST(Conv2dRule, ConfigJsonRoundTripsAndValidateNamesTheField) {
  rules::Conv2dConfig c;
  rules::Json j = c.to_json();
  EXPECT_EQ(rule().config_from_json(j)->str(), c.str());
  rules::Json unknown = j;
  unknown["block_m"] = 64;  // an implicit_gemm field in a direct config
  EXPECT_THROW(rule().config_from_json(unknown), rules::ConfigError);
  rules::Conv2dConfig g = c;
  g.form = rules::Conv2dConfig::kImplicitGemm, g.block_m = 32, g.thread_m = 2;
  rules::Json gj = g.to_json();
  EXPECT_EQ(rule().config_from_json(gj)->str(), g.str());
  EXPECT_FALSE(gj.contains("block_h")) << gj.dump();
  g.validate(test_arch());
  rules::Json bad = gj;
  bad["form"] = "im2col";
  try {
    rule().config_from_json(bad);
    ADD_FAILURE() << "form im2col accepted";
  } catch (const rules::ConfigError &err) {
    EXPECT_TRUE(
        contains(err.what(), R"(field 'form': expected one of "direct", "implicit_gemm", got "im2col")"))
        << err.what();
  }
  auto expect_error = [](rules::Conv2dConfig x, const std::string &field) {
    try {
      x.validate(test_arch());
      ADD_FAILURE() << "no error for " << field;
    } catch (const rules::ConfigError &err) {
      EXPECT_TRUE(contains(err.what(), "conv2d config: " + field + " = ")) << err.what();
    }
  };
  c.validate(test_arch());
  rules::Conv2dConfig x = c;
  x.block_h = 64, x.block_w = 64, x.thread_h = 4, x.thread_w = 4;  // 16 x 16 x 16 threads
  expect_error(x, "threads");
  x = c, x.block_k = 128, x.kernel_h = x.kernel_w = 7;  // 14 x 14 x 128 inputs, 7 x 7 x 128 x 64 weights
  expect_error(x, "shared memory");
  x = c, x.block_h = 7;
  expect_error(x, "block_h");
  x = c, x.stride_w = 0;
  expect_error(x, "stride_w");
  x = c, x.stages = rules::MatmulConfig::kMaxStages + 1;
  expect_error(x, "stages");
  x = g, x.block_m = 30, x.thread_m = 4;
  expect_error(x, "block_m");
  x = g, x.block_m = 256, x.thread_m = 8, x.block_k = 512;  // the A tile alone is 256 x 512 x 2 bytes
  expect_error(x, "shared memory");
  x = c, x.form = "im2col";
  expect_error(x, "form");
}

TEST(Conv2dRule, ApplyRejectsAnotherGeometry) {
  SmallWorkload w = small_workload(find_entry("conv2d_nhwc_f16"));
  auto m = rule().match(w.func, test_arch());
  ASSERT_TRUE(m);
  auto c = dynamic_cast<const rules::Conv2dConfig &>(*rule().default_config(**m, test_arch()));
  c.stride_h = 2;
  try {
    rule().apply(w.func, **m, c);
    ADD_FAILURE() << "stride accepted";
  } catch (const rules::ConfigError &err) {
    EXPECT_TRUE(contains(err.what(), "stride_h = 2 does not describe this workload (1)")) << err.what();
  }
  // The implicit GEMM fuses strides from the extents: symbolic ones are refused.
  ir::PrimFunc symbolic = load_func(find_entry("conv2d_nhwc_f16"));
  auto ms = rule().match(symbolic, test_arch());
  ASSERT_TRUE(ms) << ms.reason();
  auto g = implicit_gemm(*rule().default_config(**ms, test_arch()), 64, 32, 16, 4, 4, 1, 4, 4, 0, 0, true);
  try {
    rule().apply(symbolic, **ms, g);
    ADD_FAILURE() << "symbolic extents accepted";
  } catch (const rules::ConfigError &err) {
    EXPECT_TRUE(contains(err.what(), "needs constant extents to fuse; iter 'v_b'")) << err.what();
  }
}

/// The full-size conv: a halo tile per block, masks only where the padding is.
TEST(Conv2dRule, FullSizeKernelStagesAHaloTile) {
  Entry e = find_entry("conv2d_nhwc_f16");
  ir::PrimFunc f = analysis::specialize(load_func(e), e.specialized(e.full));
  auto m = rule().match(f, test_arch());
  ASSERT_TRUE(m);
  auto c = dynamic_cast<const rules::Conv2dConfig &>(*rule().default_config(**m, test_arch()));
  EXPECT_EQ(56 % c.block_h, 0);
  EXPECT_EQ(56 % c.block_w, 0);
  std::string cuda = codegen::codegen_cuda(lower::lower(rule().apply(f, **m, c).func()));
  const int64_t halo = c.halo_h() * c.halo_w();
  EXPECT_TRUE(contains(cuda, "__shared__ __align__(16) half pad_shared[")) << cuda;
  EXPECT_TRUE(contains(
      cuda, "__align__(16) float acc_local[" + std::to_string(c.thread_h * c.thread_w * c.thread_n) + "];"))
      << cuda;
  EXPECT_TRUE(contains(cuda, "< " + std::to_string(halo * c.block_k)))
      << "halo fetch of " << halo << " pixels\n"
      << cuda;
  EXPECT_TRUE(contains(cuda, "*(uint2*)weight_shared_local = ")) << cuda;
}

}  // namespace
}  // namespace tessera::test
