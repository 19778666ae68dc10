//===- tests/rules/TensorCoreFormsTest.cpp - tf32 and float16 accumulation ---===//
//
// The mma.sync forms beyond float16/bfloat16 -> float32 and int8:
//   - T.round_to_tf32: its rounding (ties away, low bits cleared, inf/NaN
//     kept), its parse error, and the rule's refusal of float32 operands the
//     program does not round;
//   - m16n8k8 (tf32) in the interpreter against the fragment tables, with
//     unrounded inputs read truncated as the hardware reads them;
//   - the tf32 GEMM kernel in every layout at shapes that divide no tile, and
//     its fragment loads conflict-free in the bank model;
//   - float16 accumulators (acc_bytes 2) only where the program accumulates
//     float16 in float16, chosen by default where the Arch runs them faster.
//
//===----------------------------------------------------------------------===//
#include <cmath>

#include "TensorCoreTestUtil.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/ir/MmaFragments.h"
#include "tessera/lower/Lower.h"
#include "tessera/policies/CostModel.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Half.h"

namespace tessera::test {
namespace {

ir::PrimFunc parse(const std::string &text) { return script::parse_func(text); }

float bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(RoundToTf32, RoundsToNearestTiesAwayAndKeepsSpecials) {
  EXPECT_EQ(round_to_tf32(1.0f), 1.0f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: away from zero.
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(round_to_tf32(-1.0f - std::ldexp(1.0f, -11)), -1.0f - std::ldexp(1.0f, -10));
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -12)), 1.0f);
  EXPECT_EQ(round_to_tf32(bits(0x3f801fffu)), bits(0x3f802000u));
  EXPECT_TRUE(std::isinf(round_to_tf32(std::numeric_limits<float>::infinity())));
  EXPECT_TRUE(std::isnan(round_to_tf32(bits(0x7f800001u))));  // a NaN whose payload is all low bits
  EXPECT_TRUE(std::isinf(round_to_tf32(std::numeric_limits<float>::max())));
  // The float64 reference's rounding agrees on float32 values.
  for (uint32_t u : {0x3f801000u, 0x40490fdbu, 0xc2f6e979u, 0x3eaaaaabu})
    EXPECT_EQ(round_to_tf32(static_cast<double>(bits(u))), static_cast<double>(round_to_tf32(bits(u)))) << u;
}

TEST(RoundToTf32, TheParserTakesOnlyFloat32) {
  std::string text = f16_accumulating_text(true, false, "16", 8, 16);
  text.replace(text.find("A[vi, vk] *"), 11, "T.round_to_tf32(A[vi, vk]) *");
  try {
    parse(text);
    FAIL() << "parsed T.round_to_tf32 of a float16";
  } catch (const std::exception &e) {
    EXPECT_NE(std::string(e.what()).find("T.round_to_tf32 rounds a float32"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(":11:53:"), std::string::npos) << "line and column of the argument: " << e.what();
  }
}

/// One warp: m16n8k8 on A (16 x 8) and B (8 x 8) placed into the fragments
/// by the PTX maps (a_e at (g + 8 (e % 2), t + 4 (e / 2)), b_e at (t + 4 e, g)),
/// the accumulators stored by the C map.
const char *kMmaTf32 = R"(@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((16, 8), "float32")) -> None:
    for bx in T.thread_binding(1, thread="blockIdx.x"):
        with T.block("warp"):
            Fa = T.alloc_buffer((1, 32, 4), "float32", scope="warp")
            Fb = T.alloc_buffer((1, 32, 2), "float32", scope="warp")
            Fc = T.alloc_buffer((1, 32, 4), "float32", scope="warp")
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for e in range(4):
                    Fa[0, tx, e] = A[tx // 4 + e % 2 * 8, tx % 4 + e // 2 * 4]
                    Fc[0, tx, e] = T.float32(0.5)
                for e in range(2):
                    Fb[0, tx, e] = B[tx % 4 + e * 4, tx // 4]
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                T.evaluate(T.mma_sync("m16n8k8", Fc[0, tx, 0], Fa[0, tx, 0], Fb[0, tx, 0], tx))
            for tx in T.thread_binding(32, thread="threadIdx.x"):
                for e in range(4):
                    C[tx // 4 + e // 2 * 8, tx % 4 * 2 + e % 2] = Fc[0, tx, e]
)";

TEST(WarpIntrinsics, MmaTf32MatchesTheTablesAndTruncatesItsInputs) {
  ir::PrimFunc f = parse(kMmaTf32);
  runtime::NDArray a(ir::DataType::float32(), {16, 8}), b(ir::DataType::float32(), {8, 8}),
      c(ir::DataType::float32(), {16, 8});
  // Small integers (exact in tf32) plus 2^-14 in A: below tf32's precision
  // at these magnitudes (>= 1), so the instruction drops it.
  for (int r = 0; r < 16; ++r)
    for (int k = 0; k < 8; ++k) a.set(r * 8 + k, (r * 8 + k) % 7 + 1 + std::ldexp(1.0, -14));
  for (int k = 0; k < 8; ++k)
    for (int n = 0; n < 8; ++n) b.set(k * 8 + n, (k + 2 * n) % 5 - 2);
  runtime::Interpreter(f).run({&a, &b, &c});
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      double want = 0.5;
      for (int k = 0; k < 8; ++k) want += ((r * 8 + k) % 7 + 1) * double((k + 2 * n) % 5 - 2);
      EXPECT_EQ(c.get(r * 8 + n), want) << "C[" << r << ", " << n << "]";
    }
}

TEST(WarpIntrinsics, MmaFormsAndTheirRefusals) {
  std::string why;
  auto v = ir::mma::find_mma_variant("m16n8k8", ir::DataType::float32(), ir::DataType::float32(), &why);
  ASSERT_TRUE(v) << why;
  EXPECT_EQ(v->ptx(), "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
  EXPECT_EQ(v->a_regs(), 4);
  EXPECT_EQ(v->b_regs(), 2);
  auto h = ir::mma::find_mma_variant("m16n8k16", ir::DataType::float16(), ir::DataType::float16(), &why);
  ASSERT_TRUE(h) << why;
  EXPECT_EQ(h->ptx(), "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16");
  EXPECT_EQ(h->c_regs(), 2) << "two float16 accumulators per register";
  EXPECT_FALSE(ir::mma::find_mma_variant("m16n8k16", ir::DataType::bfloat16(), ir::DataType::bfloat16(), &why));
  EXPECT_NE(why.find("does not multiply bfloat16 into bfloat16"), std::string::npos) << why;
  EXPECT_FALSE(ir::mma::find_mma_variant("m16n8k4", ir::DataType::float32(), ir::DataType::float32(), &why));
  EXPECT_NE(why.find("the shape must be"), std::string::npos) << why;
  // The interpreter names the block.
  std::string text = kMmaTf32;
  text.replace(text.find("\"m16n8k8\""), 9, "\"m16n8k16\"");
  runtime::NDArray a(ir::DataType::float32(), {16, 8}), b(ir::DataType::float32(), {8, 8}),
      c(ir::DataType::float32(), {16, 8});
  try {
    runtime::Interpreter(parse(text)).run({&a, &b, &c});
    FAIL() << "ran m16n8k16 on float32 fragments";
  } catch (const runtime::InterpretError &e) {
    EXPECT_NE(std::string(e.what()).find("block 'warp'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("does not multiply float32"), std::string::npos) << e.what();
  }
}

TEST(TensorCoreTf32, EveryLayoutAtShapesThatDivideNoTile) {
  for (bool a_k : {true, false})
    for (bool b_k : {false, true}) {
      SCOPED_TRACE("A k-inner " + std::to_string(a_k) + " B k-inner " + std::to_string(b_k));
      ir::PrimFunc s;
      // 100 x 77 x 50: rows of odd length copied 4 bytes at a time; 100 x 80 x 56: 16-byte copies.
      expect_ok(run_checked(parse(tf32_text(a_k, b_k, "100", 77, 50)), {}, nullptr, &s));
      expect_ok(run_checked(parse(tf32_text(a_k, b_k, "100", 80, 56)), {}, nullptr));
      std::string text = script::print(s);
      EXPECT_NE(text.find("T.mma_sync(\"m16n8k8\""), std::string::npos) << text;
      EXPECT_NE(text.find("T.round_to_tf32(A_shared"), std::string::npos) << "fragments rounded as the program says";
      EXPECT_EQ(text.find("T.ldmatrix"), std::string::npos) << "ldmatrix moves 16-bit units";
    }
  // A symbolic M of 7 and 45 under a small and a deep config.
  ir::PrimFunc f = parse(tf32_text(true, false, "m", 72, 40));
  rules::TensorCoreConfig small;
  small.in_bytes = 4, small.pad = 4;
  small.block_m = 32, small.block_n = 32, small.block_k = 8, small.warps_m = 2, small.warps_n = 1, small.stages = 2;
  rules::TensorCoreConfig deep = small;
  deep.block_m = 64, deep.block_n = 64, deep.block_k = 32, deep.warps_m = 1, deep.warps_n = 2, deep.stages = 4;
  for (const rules::TensorCoreConfig *c : {&small, &deep}) {
    SCOPED_TRACE(c->str());
    expect_ok(run_checked(f, {{"m", 7}}, c));
    expect_ok(run_checked(f, {{"m", 45}}, c));
  }
}

/// The kernel with every T.round_to_tf32 dropped: the tensor cores then see
/// the raw float32 bits and truncate them.
class DropRounding : public ir::IRMutator {
  ir::Expr visit_(const ir::Call *op, const ir::Expr &self) override {
    if (op->op == ir::Intrinsic::RoundToTf32) return mutate(op->args[0]);
    return ir::IRMutator::visit_(op, self);
  }
};

TEST(TensorCoreTf32, AKernelThatDoesNotRoundFailsTheCheck) {
  // The reference rounds as the program says, so the bound stays float32's
  // summation bound: truncating instead of rounding is caught.
  ir::PrimFunc f = parse(tf32_text(true, false, "64", 48, 96)), s;
  expect_ok(run_checked(f, {}, nullptr, &s));
  ir::PrimFunc broken = s.with_body(DropRounding().mutate(s.body()));
  ASSERT_EQ(script::print(broken).find("round_to_tf32"), std::string::npos);
  std::vector<runtime::NDArray> got = runtime::make_random_args(f, {}, 3);
  runtime::Reference want = runtime::compute_reference(f, got);
  runtime::interpret(broken, got);
  EXPECT_FALSE(runtime::all_ok(runtime::check_outputs(f, got, want)));
}

TEST(TensorCoreTf32, ProgramsMustAskForIt) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  // float32 products without the rounding: exact float32 is what they say.
  std::string plain = tf32_text(true, true, "64", 64, 64);
  for (size_t p; (p = plain.find("T.round_to_tf32(")) != std::string::npos;) {
    plain.erase(p, 16);
    plain.erase(plain.find(']', p) + 1, 1);
  }
  auto m = rule.match(parse(plain), test_arch());
  ASSERT_FALSE(m) << plain;
  EXPECT_NE(m.reason().find("round both factors with T.round_to_tf32"), std::string::npos) << m.reason();
  // One factor rounded is not tf32 either.
  std::string half = tf32_text(true, true, "64", 64, 64);
  size_t p = half.rfind("T.round_to_tf32(");
  half.erase(p, 16);
  half.erase(half.find(']', p) + 1, 1);
  EXPECT_FALSE(rule.match(parse(half), test_arch()));
  // The rounded program still runs on CUDA cores where no tf32 is listed.
  Arch no_tf32 = test_arch();
  std::erase_if(no_tf32.tensor_cores.mma, [](const MmaSupport &s) { return s.dtype == "tfloat32"; });
  auto m2 = rule.match(parse(tf32_text(true, true, "64", 64, 64)), no_tf32);
  ASSERT_FALSE(m2);
  EXPECT_NE(m2.reason().find("tfloat32"), std::string::npos) << m2.reason();
  ir::PrimFunc f = parse(tf32_text(true, false, "33", 40, 24));
  rules::DefaultSchedule d = rules::apply_default_schedule(f, no_tf32);
  EXPECT_EQ(d.rule, "matmul");
  std::vector<runtime::NDArray> got = runtime::make_random_args(f, {}, 3);
  runtime::Reference want = runtime::compute_reference(f, got);
  runtime::interpret(d.func, got);
  expect_ok(runtime::check_outputs(f, got, want));
}

/// The bank model's wavefronts of the warp's fragment loads from shared
/// memory (lane l = threadIdx.x, every other variable 0), the worst load.
int64_t worst_fragment_wavefronts(const ir::PrimFunc &scheduled) {
  lower::LoweredFunc k = lower::lower(scheduled);
  int64_t worst = 0, loads = 0;
  ir::pre_order_visit(
      k.body,
      [&](const ir::Expr &e) {
        const auto *c = e.as<ir::Call>();
        if (!c || c->op != ir::Intrinsic::RoundToTf32) return;
        const auto *l = c->args[0].as<ir::Load>();
        ASSERT_NE(l, nullptr);
        ++loads;
        std::vector<int64_t> addresses;
        for (int lane = 0; lane < 32; ++lane) {
          std::vector<std::pair<ir::Var, ir::Expr>> at;
          ir::pre_order_visit(
              ir::Evaluate::make(l->indices[0]),
              [&](const ir::Expr &x) {
                if (!x.as<ir::VarNode>()) return;
                ir::Var v = ir::Var::from(x);
                at.push_back({v, ir::make_int(v.dtype(), v.same_as(k.launch.thread_vars[0]) ? lane : 0)});
              },
              nullptr);
          auto value = ir::as_const_int(arith::simplify(ir::substitute(l->indices[0], at)));
          ASSERT_TRUE(value.has_value());
          addresses.push_back(*value * 4);
        }
        worst = std::max(worst, policies::smem_wavefronts(test_arch(), addresses, 4));
      },
      nullptr);
  EXPECT_GT(loads, 0);
  return worst;
}

TEST(TensorCoreTf32, FragmentLoadsAreConflictFreeInEveryLayout) {
  for (bool a_k : {true, false})
    for (bool b_k : {false, true}) {
      SCOPED_TRACE("A k-inner " + std::to_string(a_k) + " B k-inner " + std::to_string(b_k));
      ir::PrimFunc f = parse(tf32_text(a_k, b_k, "128", 128, 64));
      auto m = rules::matmul_tensor_core_rule().match(f, test_arch());
      ASSERT_TRUE(m) << m.reason();
      for (int64_t pad : {4, 0}) {
        rules::TensorCoreConfig c;
        c.in_bytes = 4, c.pad = pad;
        c.block_m = 128, c.block_n = 128, c.block_k = 32, c.warps_m = 2, c.warps_n = 4, c.stages = 2;
        c.validate(test_arch());
        SCOPED_TRACE(c.str());
        int64_t w = worst_fragment_wavefronts(rules::matmul_tensor_core_rule().apply(f, **m, c).func());
        if (pad) EXPECT_EQ(w, 1) << "padded rows: one wavefront per fragment load";
        else EXPECT_GT(w, 1) << "unpadded 128-byte rows conflict";
      }
    }
}

TEST(TensorCoreF16Accumulation, OnlyWhereTheProgramAccumulatesInFloat16) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  rules::TensorCoreConfig c;
  c.block_m = 64, c.block_n = 32, c.block_k = 32, c.warps_m = 2, c.warps_n = 2, c.stages = 3, c.acc_bytes = 2;
  for (bool a_k : {true, false}) {
    SCOPED_TRACE(a_k);
    ir::PrimFunc f = parse(f16_accumulating_text(a_k, false, "100", 77, 96)), s;
    expect_ok(run_checked(f, {}, &c, &s));
    std::string text = script::print(s);
    EXPECT_NE(text.find("C_frag = T.alloc_buffer((4, 32, 16), \"float16\", scope=\"warp\")"), std::string::npos)
        << text;
  }
  // A float32 accumulation keeps float32 accumulators: acc_bytes 2 is refused.
  ir::PrimFunc g = parse(matmul_text("float16", true, false, "64", 64, 64));
  auto m = rule.match(g, test_arch());
  ASSERT_TRUE(m) << m.reason();
  try {
    rule.apply(g, **m, c);
    FAIL() << "float16 accumulators for a float32 accumulation";
  } catch (const rules::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("acc_bytes = 2"), std::string::npos) << e.what();
  }
  rules::TensorCoreConfig int8 = c;
  int8.in_bytes = 1, int8.block_k = 64;
  EXPECT_THROW(int8.validate(test_arch()), rules::ConfigError);
  // A stored config without the field reads as float32 accumulators.
  rules::Json j = c.to_json();
  EXPECT_EQ(j.at("acc_bytes"), 2);
  j.erase("acc_bytes");
  EXPECT_EQ(rules::TensorCoreConfig::from_json(j).acc_bytes, 4);
}

TEST(TensorCoreF16Accumulation, ChosenWhereTheArchRunsItFaster) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  ir::PrimFunc f16 = parse(f16_accumulating_text(true, false, "256", 256, 256));
  ir::PrimFunc f32 = parse(matmul_text("float16", true, false, "256", 256, 256));
  // GeForce Ada runs float16 accumulation at twice float32's rate; the H100 at the same.
  for (auto [gpu, want] : {std::pair{"rtx4090", 2}, {"h100", 4}}) {
    SCOPED_TRACE(gpu);
    Arch arch = Arch::by_name(gpu);
    auto m = rule.match(f16, arch);
    ASSERT_TRUE(m) << m.reason();
    EXPECT_EQ(static_cast<const rules::TensorCoreConfig &>(*rule.default_config(**m, arch)).acc_bytes, want);
    auto m32 = rule.match(f32, arch);
    ASSERT_TRUE(m32) << m32.reason();
    EXPECT_EQ(static_cast<const rules::TensorCoreConfig &>(*rule.default_config(**m32, arch)).acc_bytes, 4);
  }
}

}  // namespace
}  // namespace tessera::test
