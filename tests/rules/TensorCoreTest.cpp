//===- tests/rules/TensorCoreTest.cpp - mma.sync GEMMs proved on the CPU ----===//
//
// The tensor-core rule's kernels through the interpreter, whose ldmatrix,
// mma.sync and cp.async have the instructions' per-lane semantics
// (runtime/CompileWarp.cpp), against the float64 reference:
//   - every layout, float16 and bfloat16, shapes that divide no tile, a
//     batch, a symbolic M of 7, an epilogue, and several configs;
//   - the interpreter's instructions against the fragment tables
//     (ir/MmaFragments.h, themselves checked against the PTX ISA figures);
//   - a missing or short cp.async wait reads poison and fails.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "RuleTestUtil.h"
#include "TensorCoreTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/ir/Functor.h"
#include "tessera/ir/MmaFragments.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/lower/Lower.h"
#include "tessera/arith/Analyzer.h"
#include "tessera/policies/CostModel.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

ir::PrimFunc parse(const std::string &text) { return script::parse_func(text); }

TEST(TensorCoreRule, EveryLayoutAndTypeAtShapesThatDivideNoTile) {
  for (const char *dtype : {"float16", "bfloat16"})
    for (bool a_k : {true, false})
      for (bool b_k : {false, true}) {
        SCOPED_TRACE(std::string(dtype) + " A k-inner " + std::to_string(a_k) + " B k-inner " + std::to_string(b_k));
        // 100 x 77 x 50: odd N and K (2-byte rows: copied element by element
        // where no 4-byte piece stays aligned); 100 x 80 x 56: 16-byte copies.
        expect_ok(run_checked(parse(matmul_text(dtype, a_k, b_k, "100", 77, 50)), {}, nullptr));
        expect_ok(run_checked(parse(matmul_text(dtype, a_k, b_k, "100", 80, 56)), {}, nullptr));
      }
}

TEST(TensorCoreRule, SymbolicMOfSevenAndOtherConfigs) {
  ir::PrimFunc f = parse(matmul_text("float16", true, false, "m", 72, 48));
  rules::TensorCoreConfig small;
  small.block_m = 32, small.block_n = 32, small.block_k = 16, small.warps_m = 2, small.warps_n = 1;
  small.stages = 2, small.pad = 0;
  rules::TensorCoreConfig deep;
  deep.block_m = 64, deep.block_n = 64, deep.block_k = 64, deep.warps_m = 1, deep.warps_n = 2, deep.stages = 5;
  // Rasterized: panels of 2 tile rows of 16 (M = 45: 3 rows, the last panel partial).
  rules::TensorCoreConfig rastered;
  rastered.block_m = 16, rastered.block_n = 32, rastered.block_k = 16, rastered.warps_m = 1, rastered.warps_n = 2;
  rastered.stages = 2, rastered.raster = 2;
  for (const rules::TensorCoreConfig *c :
       std::vector<const rules::TensorCoreConfig *>{nullptr, &small, &deep, &rastered}) {
    SCOPED_TRACE(c ? c->str() : "default");
    expect_ok(run_checked(f, {{"m", 7}}, c));
    expect_ok(run_checked(f, {{"m", 45}}, c));
  }
}

TEST(TensorCoreRule, BatchAndEpilogueOfTheCorpus) {
  // bmm_symbolic_m_f16 (batch, symbolic M) and matmul_nn_f16 (the cast to
  // float16 folded into the store), at batch 3 and M = 7.
  for (const Entry &e : workload_entries()) {
    if (e.name != "bmm_symbolic_m_f16" && e.name != "matmul_nn_f16" && e.name != "matmul_nt_f16") continue;
    SCOPED_TRACE(e.name);
    ir::PrimFunc f = load_func(e);
    auto dims = e.small;
    dims["m"] = 7;
    auto m = rules::matmul_tensor_core_rule().match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    expect_ok(run_checked(f, dims, nullptr));
  }
}

/// bias + ReLU into a float32 intermediate, then the cast to float16 plus a
/// residual: a two-block chain folded into the accumulators' store.
const char *kEpilogueChain = R"(@T.prim_func
def main(a: T.handle, b: T.handle, bias_h: T.handle, r_h: T.handle, d: T.handle) -> None:
    m = T.int32()
    A = T.match_buffer(a, (m, 64), "float16")
    B = T.match_buffer(b, (64, 72), "float16")
    bias = T.match_buffer(bias_h, (72,), "float32")
    R = T.match_buffer(r_h, (m, 72), "float16")
    D = T.match_buffer(d, (m, 72), "float16")
    C = T.alloc_buffer((m, 72), "float32")
    E = T.alloc_buffer((m, 72), "float32")
    for i, j, r in T.grid(m, 72, 64):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + T.Cast("float32", A[v_i, v_r]) * T.Cast("float32", B[v_r, v_j])
    for i, j in T.grid(m, 72):
        with T.block("E"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            E[v_i, v_j] = T.max(C[v_i, v_j] + bias[v_j], T.float32(0))
    for i, j in T.grid(m, 72):
        with T.block("D"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            D[v_i, v_j] = T.Cast("float16", E[v_i, v_j]) + R[v_i, v_j]
)";

TEST(TensorCoreRule, FoldsAnEpilogueChain) {
  ir::PrimFunc f = parse(kEpilogueChain);
  ir::PrimFunc s;
  expect_ok(run_checked(f, {{"m", 37}}, nullptr, &s));
  // The intermediates are gone: the kernel writes D alone.
  std::string text = script::print(s);
  EXPECT_EQ(text.find("E["), std::string::npos) << text;
  EXPECT_NE(text.find("T.writes(D[0:m, 0:72])"), std::string::npos) << text;
}

// As relax fuses them (TVM's dlight tests): a bias cast by a block of its
// own, added to the product; and SiLU, x * sigmoid(x), which reads the
// accumulator twice.
const char *kBiasFromItsOwnBlock = R"(
@T.prim_func
def main(p_a: T.handle, W: T.Buffer((72, 96), "float16"), bias: T.Buffer((72,), "float16"), p_y: T.handle) -> None:
    T.func_attr({"tir.noalias": True})
    m = T.int64()
    A = T.match_buffer(p_a, (m, 96), "float16")
    Y = T.match_buffer(p_y, (m, 72), "float16")
    C = T.alloc_buffer((m, 72))
    bias_f32 = T.alloc_buffer((72,))
    for i, j, k in T.grid(m, 72, 96):
        with T.block("matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + T.Cast("float32", A[v_i, v_k]) * T.Cast("float32", W[v_j, v_k])
    for j in range(72):
        with T.block("bias_cast"):
            v_j = T.axis.spatial(72, j)
            bias_f32[v_j] = T.Cast("float32", bias[v_j])
    for i, j in T.grid(m, 72):
        with T.block("add"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            Y[v_i, v_j] = T.Cast("float16", C[v_i, v_j] + bias_f32[v_j])
)";

const char *kSilu = R"(
@T.prim_func
def main(p_a: T.handle, W: T.Buffer((80, 64), "float16"), p_y: T.handle) -> None:
    T.func_attr({"tir.noalias": True})
    n = T.int64()
    A = T.match_buffer(p_a, (n, 64), "float16")
    Y = T.match_buffer(p_y, (n, 80), "float16")
    C = T.alloc_buffer((n, 80), "float16")
    S = T.alloc_buffer((n, 80), "float16")
    for i, j, k in T.grid(n, 80, 64):
        with T.block("NT_matmul"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[v_i, v_j] = T.float16(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * W[v_j, v_k]
    for i, j in T.grid(n, 80):
        with T.block("sigmoid"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            S[v_i, v_j] = T.sigmoid(C[v_i, v_j])
    for i, j in T.grid(n, 80):
        with T.block("silu"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            Y[v_i, v_j] = C[v_i, v_j] * S[v_i, v_j]
)";

TEST(TensorCoreRule, EpiloguesThatReadMoreThanTheLastStep) {
  for (auto [name, text, dims] : {std::tuple{"bias from its own block", kBiasFromItsOwnBlock, runtime::DimBindings{{"m", 37}}},
                                  {"silu", kSilu, runtime::DimBindings{{"n", 23}}}}) {
    SCOPED_TRACE(name);
    ir::PrimFunc f = parse(text);
    ir::PrimFunc s;
    expect_ok(run_checked(f, dims, nullptr, &s));
    // One kernel writing Y, the intermediates folded into it.
    std::string printed = script::print(s);
    EXPECT_NE(printed.find("T.block(\"matmul_tensor_core\")"), std::string::npos) << printed;
    for (const char *gone : {"bias_f32[", "S[v", "C[v"}) EXPECT_EQ(printed.find(gone), std::string::npos) << gone << "\n" << printed;
  }
}

TEST(TensorCoreRule, Int8IsExact) {
  // K = 72: 8-byte cp.async pieces; K = 70: element copies; a small config too.
  rules::TensorCoreConfig small;
  small.block_m = 32, small.block_n = 32, small.block_k = 64, small.warps_m = 2, small.warps_n = 1;
  small.stages = 2, small.pad = 16, small.in_bytes = 1;
  for (int k : {72, 70}) {
    SCOPED_TRACE(k);
    ir::PrimFunc f = parse(int8_text(100, 77, k));
    for (const rules::TensorCoreConfig *c : std::vector<const rules::TensorCoreConfig *>{nullptr, &small}) {
      std::vector<runtime::OutputCheck> checks = run_checked(f, {}, c);
      expect_ok(checks);
      for (const runtime::OutputCheck &r : checks) EXPECT_EQ(r.bound, 0) << "integers compare exactly";
    }
  }
  // A K-outer int8 B has no 8-bit ldmatrix.trans: the rule declines, saying so.
  auto m = rules::matmul_tensor_core_rule().match(parse(int8_text(64, 64, 64, false)), test_arch());
  ASSERT_FALSE(m);
  EXPECT_NE(m.reason().find("K-contiguous"), std::string::npos) << m.reason();
}

/// The shared-memory wavefronts of each ldmatrix phase (8 lanes' 16-byte
/// rows) of the first ldmatrix of A and of B in the lowered kernel, lane l
/// in 0..31 and every other variable at 0: the bank model's verdict on the
/// layout.
std::vector<int64_t> ldmatrix_wavefronts(const ir::PrimFunc &scheduled, int in_bytes) {
  lower::LoweredFunc k = lower::lower(scheduled);
  std::vector<ir::Expr> rows;  // the row-address index of each ldmatrix, in order
  ir::pre_order_visit(
      k.body,
      [&](const ir::Expr &e) {
        const auto *c = e.as<ir::Call>();
        if (c && c->op == ir::Intrinsic::Ldmatrix) rows.push_back(c->args[3].as<ir::Load>()->indices[0]);
      },
      nullptr);
  std::vector<int64_t> out;
  for (const ir::Expr &index : rows) {
    std::vector<ir::Var> vars;
    ir::pre_order_visit(
        ir::Evaluate::make(index),
        [&](const ir::Expr &e) {
          if (e.as<ir::VarNode>()) vars.push_back(ir::Var::from(e));
        },
        nullptr);
    int64_t worst = 0;
    for (int phase = 0; phase < 4; ++phase) {
      std::vector<int64_t> addresses;
      for (int lane = phase * 8; lane < phase * 8 + 8; ++lane) {
        std::vector<std::pair<ir::Var, ir::Expr>> at;
        for (const ir::Var &v : vars)
          at.push_back({v, ir::make_int(v.dtype(), v.same_as(k.launch.thread_vars[0]) ? lane : 0)});
        auto value = ir::as_const_int(arith::simplify(ir::substitute(index, at)));
        EXPECT_TRUE(value.has_value());
        addresses.push_back(value.value_or(0) * in_bytes);
      }
      worst = std::max(worst, policies::smem_wavefronts(test_arch(), addresses, 16));
    }
    out.push_back(worst);
  }
  return out;
}

TEST(TensorCoreRule, SwizzleAndPaddingAreConflictFreeForLdmatrix) {
  // nn (A row-major, B through .trans) and tn, float16 and int8 "nt".
  struct Case {
    std::string text;
    int in_bytes;
  };
  std::vector<Case> cases = {{matmul_text("float16", true, false, "64", 64, 64), 2},
                             {matmul_text("float16", false, true, "64", 64, 64), 2},
                             {int8_text(64, 64, 128), 1}};
  for (const Case &k : cases) {
    ir::PrimFunc f = parse(k.text);
    auto m = rules::matmul_tensor_core_rule().match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    for (int layout = 0; layout < 3; ++layout) {  // padded, swizzled, neither
      rules::TensorCoreConfig c;
      c.block_m = 64, c.block_n = 64, c.block_k = 128 / k.in_bytes, c.warps_m = 2, c.warps_n = 2, c.stages = 2;
      c.in_bytes = k.in_bytes;
      c.pad = layout == 0 ? 16 / k.in_bytes : 0;
      c.swizzle = layout == 1;
      c.validate(test_arch());
      SCOPED_TRACE(c.str());
      ir::PrimFunc s = rules::matmul_tensor_core_rule().apply(f, **m, c).func();
      std::vector<int64_t> w = ldmatrix_wavefronts(s, k.in_bytes);
      ASSERT_GE(w.size(), 2u) << "ldmatrix of A and B in every K slice";
      for (int64_t x : w) {
        if (layout < 2) EXPECT_EQ(x, 1) << "a conflict-free layout";
        else EXPECT_GT(x, 1) << "128-byte rows without padding or swizzle conflict";
      }
      // And the layout is the one the copies write: the answer is right.
      std::vector<runtime::NDArray> got = runtime::make_random_args(f, {}, 3);
      runtime::Reference want = runtime::compute_reference(f, got);
      runtime::interpret(s, got);
      expect_ok(runtime::check_outputs(f, got, want));
    }
  }
}

/// topi's batch_matmul as TVM prints it: B broadcast over the batch
/// (B[T.int64(0), v_j, v_k], extent 1), int64 extents, an IRModule.
const char *kTvmBatchMatmul = R"(# from tvm.script import ir as I
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((T.int64(4), T.int64(33), T.int64(64)), "float16"), B: T.Buffer((T.int64(1), T.int64(48), T.int64(64)), "float16"), T_batch_matmul_NT: T.Buffer((T.int64(4), T.int64(33), T.int64(48)), "float16")):
        T.func_attr({"layout_free_buffers": [1], "tir.noalias": T.bool(True)})
        # with T.block("root"):
        for b, i, j, k in T.grid(T.int64(4), T.int64(33), T.int64(48), T.int64(64)):
            with T.block("T_batch_matmul_NT"):
                v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
                T.reads(A[v_b, v_i, v_k], B[T.int64(0), v_j, v_k])
                T.writes(T_batch_matmul_NT[v_b, v_i, v_j])
                with T.init():
                    T_batch_matmul_NT[v_b, v_i, v_j] = T.float16(0)
                T_batch_matmul_NT[v_b, v_i, v_j] = T_batch_matmul_NT[v_b, v_i, v_j] + A[v_b, v_i, v_k] * B[T.int64(0), v_j, v_k]
)";

TEST(TensorCoreRule, TvmBatchMatmulWithABroadcastOperand) {
  for (const char *dtype : {"float16", "float32"}) {
    std::string text = kTvmBatchMatmul;
    for (size_t p; std::string(dtype) == "float32" && (p = text.find("float16")) != std::string::npos;)
      text.replace(p, 7, "float32");
    ir::Module mod = script::parse_module(text);
    ir::PrimFunc f = mod.funcs.at(0);
    rules::DefaultSchedule d = rules::apply_default_schedule(f, test_arch());
    // float16 on tensor cores; float32 by the SIMT matmul (tf32 needs an explicit cast).
    EXPECT_EQ(d.rule, std::string(dtype) == "float16" ? "matmul_tensor_core" : "matmul") << dtype;
    std::vector<runtime::NDArray> got = runtime::make_random_args(f, {}, 3);
    runtime::Reference want = runtime::compute_reference(f, got);
    runtime::interpret(d.func, got);
    expect_ok(runtime::check_outputs(f, got, want));
  }
}

/// An int4-dequantising producer of B (eight 4-bit weights per int32, a
/// per-column scale): inlined into the fetch of B's tile.
const char *kDequantB = R"(@T.prim_func
def main(A: T.Buffer((37, 64), "float16"), Wq: T.Buffer((64, 8), "int32"), scale: T.Buffer((64,), "float16"), C: T.Buffer((37, 64), "float16")) -> None:
    B = T.alloc_buffer((64, 64), "float16")
    acc = T.alloc_buffer((37, 64), "float32")
    for k, n in T.grid(64, 64):
        with T.block("dequant"):
            vk, vn = T.axis.remap("SS", [k, n])
            B[vk, vn] = T.Cast("float16", T.bitwise_and(T.shift_right(Wq[vk, vn // 8], vn % 8 * 4), 15) - 8) * scale[vn]
    for i, j, k in T.grid(37, 64, 64):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                acc[vi, vj] = T.float32(0)
            acc[vi, vj] = acc[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
    for i, j in T.grid(37, 64):
        with T.block("out"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.Cast("float16", acc[vi, vj])
)";

TEST(TensorCoreRule, InlinesADequantisingProducerIntoTheFetch) {
  ir::PrimFunc f = parse(kDequantB);
  ir::PrimFunc s;
  expect_ok(run_checked(f, {}, nullptr, &s));
  std::string text = script::print(s);
  EXPECT_EQ(text.find("B["), std::string::npos) << "the dequantised B is never stored:\n" << text;
  EXPECT_NE(text.find("T.reads(A[0:37, 0:64], Wq[0:64, 0:8], scale[0:64])"), std::string::npos) << text;
}

TEST(TensorCoreRule, ApplyingTwiceGivesTheSameFunction) {
  // Even N: the column pairs are stored as 2-wide vectors.
  ir::PrimFunc f = parse(matmul_text("float16", true, false, "64", 76, 48));
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  auto m = rule.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  auto c = rule.default_config(**m, test_arch());
  ir::PrimFunc a = rule.apply(f, **m, *c).func(), b = rule.apply(f, **m, *c).func();
  EXPECT_TRUE(ir::structural_equal(a, b)) << script::print(a);
  // A convolution, matched twice (each match builds its GEMM form afresh).
  for (int64_t co : {9, 10}) {
    SCOPED_TRACE(co);
    const Entry &e = find_entry("conv2d_nhwc_f16");
    ir::PrimFunc g = analysis::specialize(load_func(e), {{"n", 2}, {"h", 9}, {"w", 11}, {"ci", 6}, {"co", co}});
    auto m1 = rule.match(g, test_arch()), m2 = rule.match(g, test_arch());
    ASSERT_TRUE(m1 && m2);
    auto cc = rule.default_config(**m1, test_arch());
    ir::PrimFunc x = rule.apply(g, **m1, *cc).func(), y = rule.apply(g, **m2, *cc).func();
    EXPECT_TRUE(ir::structural_equal(x, y)) << ir::structural_diff(x, y);
  }
}

TEST(TensorCoreRule, DeclinesWhatItCannotRun) {
  const rules::Rule &rule = rules::matmul_tensor_core_rule();
  // float32 operands: tf32 needs an explicit rounding in the program.
  std::string f32 = matmul_text("float16", true, false, "64", 64, 64);
  for (size_t p; (p = f32.find("\"float16\"")) != std::string::npos;) f32.replace(p, 9, "\"float32\"");
  auto m = rule.match(parse(f32), test_arch());
  ASSERT_FALSE(m);
  EXPECT_NE(m.reason().find("T.round_to_tf32"), std::string::npos) << m.reason();
  // An arch without mma.sync for float16 (sm_70 presets list none with cp.async).
  Arch old = test_arch();
  old.memory.cp_async = false;
  auto m2 = rule.match(parse(matmul_text("float16", true, false, "64", 64, 64)), old);
  ASSERT_FALSE(m2);
  EXPECT_NE(m2.reason().find("cp.async"), std::string::npos) << m2.reason();
}

TEST(TensorCoreRule, ConfigErrorsNameTheField) {
  rules::TensorCoreConfig c;
  c.block_n = 72;  // not a multiple of 16 x warps_n = 32
  try {
    c.validate(test_arch());
    FAIL() << "accepted block_n = 72";
  } catch (const rules::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("block_n"), std::string::npos) << e.what();
  }
  c = rules::TensorCoreConfig{};
  c.stages = 6, c.block_k = 64, c.block_m = 256, c.block_n = 256;  // 6 x 2 x 256 x 72 x 2 bytes > 227 KB
  EXPECT_THROW(c.validate(test_arch()), rules::ConfigError);
  auto round = rules::TensorCoreConfig::from_json(rules::TensorCoreConfig{}.to_json());
  EXPECT_EQ(round.to_json(), rules::TensorCoreConfig{}.to_json());
}

TEST(TensorCoreRule, AShortWaitReadsPoisonAndFails) {
  ir::PrimFunc f = parse(matmul_text("float16", true, false, "64", 64, 96));
  ir::PrimFunc s;
  expect_ok(run_checked(f, {}, nullptr, &s));
  for (int delta : {1, -100}) {  // one group too many in flight; no wait at all in the loop
    SCOPED_TRACE(delta);
    ir::PrimFunc broken = s.with_body(ShiftLoopWaits(delta).mutate(s.body()));
    ASSERT_FALSE(ir::structural_equal(broken, s));
    std::vector<runtime::NDArray> got = runtime::make_random_args(f, {}, 3);
    runtime::Reference want = runtime::compute_reference(f, got);
    runtime::interpret(broken, got);
    EXPECT_FALSE(runtime::all_ok(runtime::check_outputs(f, got, want)));
  }
}

/// One warp: a 16 x 16 float16 tile (element value = its position) in
/// shared memory, ldmatrix.x4 (trans or not) into the fragment, every
/// lane's registers stored to out[lane, 0..7].
std::string ldmatrix_text(bool trans) {
  return std::string("@T.prim_func\n"
                     "def main(out: T.Buffer((32, 8), \"float16\")) -> None:\n"
                     "    for bx in T.thread_binding(1, thread=\"blockIdx.x\"):\n"
                     "        with T.block(\"warp\"):\n"
                     "            S = T.alloc_buffer((16, 24), \"float16\", scope=\"shared\")\n"
                     "            F = T.alloc_buffer((1, 32, 8), \"float16\", scope=\"warp\")\n"
                     "            for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                     "                for c in range(8):\n"
                     "                    S[tx // 2, tx % 2 * 8 + c] = T.Cast(\"float16\", tx // 2 * 16 + tx % 2 * 8 + c)\n"
                     "            for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
                     "                T.evaluate(T.ldmatrix(") +
         (trans ? "1" : "0") +
         ", 4, F[0, tx, 0], S[tx % 8 + tx // 8 % 2 * 8, tx // 16 * 8], tx))\n"
         "            for tx in T.thread_binding(32, thread=\"threadIdx.x\"):\n"
         "                for e in range(8):\n"
         "                    out[tx, e] = F[0, tx, e]\n";
}

TEST(WarpIntrinsics, LdmatrixMatchesTheFragmentTable) {
  for (bool trans : {false, true}) {
    SCOPED_TRACE(trans ? "trans" : "plain");
    ir::PrimFunc f = parse(ldmatrix_text(trans));
    runtime::NDArray out(ir::DataType::float16(), {32, 8});
    runtime::Interpreter(f).run({&out});
    ir::mma::LdmatrixLayout layout(4, trans);
    for (int lane = 0; lane < 32; ++lane)
      for (int j = 0; j < 4; ++j)
        for (int h = 0; h < 2; ++h) {
          // Matrix j is rows 8 (j % 2).., columns 8 (j / 2).. of the tile
          // (lane l addressed row l % 8 + 8 (l / 8 % 2), column 8 (l / 16)).
          ir::mma::Element e = layout.at(lane, j, h);
          int row = e.row + 8 * (j % 2), col = e.col + 8 * (j / 2);
          EXPECT_EQ(out.get(lane * 8 + 2 * j + h), row * 16 + col) << "lane " << lane << " reg " << j << "." << h;
        }
  }
}

TEST(WarpIntrinsics, ErrorsSayWhereAndWhy) {
  // A misaligned ldmatrix row (column 4: 8 bytes into a 16-byte row).
  std::string text = ldmatrix_text(false);
  text.replace(text.find("tx // 16 * 8]"), 13, "tx // 16 * 4]");
  runtime::NDArray out(ir::DataType::float16(), {32, 8});
  try {
    runtime::Interpreter(parse(text)).run({&out});
    FAIL() << "a misaligned ldmatrix ran";
  } catch (const runtime::InterpretError &e) {
    EXPECT_NE(std::string(e.what()).find("16-byte aligned"), std::string::npos) << e.what();
  }
  // Lowering refuses a warp buffer indexed by something other than threads.
  std::string bad = ldmatrix_text(false);
  bad.replace(bad.find("out[tx, e] = F[0, tx, e]"), 24, "out[tx, e] = F[0, e, e]");
  try {
    lower::lower(parse(bad));
    FAIL() << "lowered a warp buffer read across lanes";
  } catch (const lower::LowerError &e) {
    EXPECT_NE(std::string(e.what()).find("warp buffer 'F'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::test
