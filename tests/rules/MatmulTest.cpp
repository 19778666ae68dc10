//===- tests/rules/MatmulTest.cpp - The SIMT matmul rule ---------------------===//
//
// What it matches and why it declines; the default config and others (tiles
// that divide none of the small shapes, every vector width, padding, no
// unroll) give the interpreter's answer on every matmul workload and on the
// layouts the corpus lacks (tn, tt); a symbolic m scheduled once runs for any
// m; config JSON and validate errors; the default config follows Arch
// fields; and at 2048^3 the CUDA is the tiled GEMM one would write by hand.
//
//===----------------------------------------------------------------------===//
#include "RuleTestUtil.h"

#include "tessera/codegen/CodegenCUDA.h"
#include "tessera/lower/Lower.h"
#include "TensorCoreTestUtil.h"
#include "tessera/rules/Matmul.h"
#include "tessera/rules/MatmulTensorCore.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

const rules::Rule &rule() {
  return rules::matmul_rule();
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}


rules::MatmulConfig config(int64_t bm, int64_t bn, int64_t bk, int64_t tm, int64_t tn, int64_t va, int64_t vb,
                           int64_t vc, int64_t pa, int64_t pb, bool unroll, const rules::Config &facts) {
  const auto &f = dynamic_cast<const rules::MatmulConfig &>(facts);
  rules::MatmulConfig c;
  c.block_m = bm, c.block_n = bn, c.block_k = bk, c.thread_m = tm, c.thread_n = tn;
  c.vector_a = va, c.vector_b = vb, c.vector_c = vc, c.pad_a = pa, c.pad_b = pb, c.unroll = unroll;
  c.a_bytes = f.a_bytes, c.b_bytes = f.b_bytes, c.acc_bytes = f.acc_bytes;
  return c;
}

/// Two configs besides the default: small odd tiles with padding and no
/// unroll, and tall tiles of 2 x 2 per thread with a K step that does not
/// divide. None divides the small shapes (37, 45, 67 by 40).
std::vector<rules::MatmulConfig> other_configs(const rules::Config &facts, bool b_transposed) {
  int64_t vb = b_transposed ? 1 : 2;
  return {config(16, 32, 8, 4, 4, 2, vb, 2, 2, 2 * vb, false, facts),
          config(32, 16, 16, 2, 2, 1, 1, 1, 0, 0, true, facts)};
}

TEST(MatmulRule, MatchesTheMatmulWorkloads) {
  for (const Entry &e : workload_entries()) {
    if (e.rule != "matmul") continue;
    auto m = rule().match(small_workload(e).func, test_arch());
    ASSERT_TRUE(m) << e.name << ": " << m.reason();
    EXPECT_TRUE(
        contains((*m)->describe(), e.name.find("_nt_") != std::string::npos ? "nt matmul" : "nn matmul"))
        << (*m)->describe();
  }
  auto bmm = rule().match(small_workload(find_entry("bmm_symbolic_m_f16")).func, test_arch());
  ASSERT_TRUE(bmm);
  EXPECT_EQ(
      (*bmm)->describe(),
      "block 'acc': nn matmul, M=symbolic N=45 K=40, batch 3, float16 x float16 -> float32, epilogue 'C'");
}

TEST(MatmulRule, DeclinesOthersWithTheReason) {
  for (auto [name, reason] : {std::pair{"copy_f16", "it has no reduction block"},
                              {"reduce_max_f16", "reduces with max, not a sum of products"},
                              {"softmax_f16", "it has 2 reduction blocks; a matmul has one"},
                              {"gemv_f16", "a matrix-vector product: gemv"},
                              {"conv2d_nhwc_f16", "a convolution window?"},
                              {"prefix_sum", "statements outside blocks"}}) {
    Entry e = find_entry(name);
    auto m = rule().match(e.small.empty() ? load_func(e) : small_workload(e).func, test_arch());
    ASSERT_FALSE(m) << name;
    EXPECT_TRUE(contains(m.reason(), reason)) << name << ": " << m.reason();
  }
  // Two M iters: the rule tiles one loop per role.
  auto two_m = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((4, 8, 16), "float32"), B: T.Buffer((16, 8), "float32"), C: T.Buffer((4, 8, 8), "float32")):
    for i, l, j, r in T.grid(4, 8, 8, 16):
        with T.block("C"):
            vi, vl, vj, vr = T.axis.remap("SSSR", [i, l, j, r])
            with T.init():
                C[vi, vl, vj] = T.float32(0)
            C[vi, vl, vj] = C[vi, vl, vj] + A[vi, vl, vr] * B[vr, vj]
)");
  auto m = rule().match(two_m, test_arch());
  ASSERT_FALSE(m);
  EXPECT_EQ(m.reason(), "block 'C' has 2 M iters; the matmul rule tiles one iter per role");
  // An epilogue that reads the product transposed cannot ride on the write-back.
  auto transposed = script::parse_func(R"(
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16, 8), "float32"), D: T.Buffer((8, 8), "float32")):
    C = T.alloc_buffer((8, 8))
    for i, j, r in T.grid(8, 8, 16):
        with T.block("C"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vr] * B[vr, vj]
    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vj, vi]
)");
  m = rule().match(transposed, test_arch());
  ASSERT_FALSE(m);
  EXPECT_TRUE(contains(m.reason(), "epilogue block 'D'")) << m.reason();
}

TEST(MatmulRule, DefaultAndOtherConfigsMatchTheInterpreter) {
  for (const Entry &e : workload_entries()) {
    if (e.rule != "matmul") continue;
    SmallWorkload w = small_workload(e);
    auto m = rule().match(w.func, test_arch());
    ASSERT_TRUE(m) << m.reason();
    auto def = rule().default_config(**m, test_arch());
    std::vector<rules::MatmulConfig> configs = other_configs(*def, e.name.find("_nt_") != std::string::npos);
    configs.insert(configs.begin(), dynamic_cast<const rules::MatmulConfig &>(*def));
    for (const rules::MatmulConfig &c : configs) {
      SCOPED_TRACE(e.name + " " + c.str());
      c.validate(test_arch());
      schedule::Schedule sch = rule().apply(w.func, **m, c);
      expect_same_results(e, w.func, sch.func(), w.dims);
    }
  }
}

TEST(MatmulRule, TransposedLayoutsMatchTheInterpreter) {
  Entry e;
  e.name = "layouts";
  for (const char *layout : {"nn", "nt", "tn", "tt"}) {
    ir::PrimFunc f = test::matmul_layout_program(layout, 37, 45, 40);
    auto m = rule().match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    EXPECT_TRUE(contains((*m)->describe(), std::string(layout) + " matmul")) << (*m)->describe();
    auto def = rule().default_config(**m, test_arch());
    std::vector<rules::MatmulConfig> configs = other_configs(*def, layout[1] == 't');
    configs.push_back(dynamic_cast<const rules::MatmulConfig &>(*def));
    for (const rules::MatmulConfig &c : configs) {
      SCOPED_TRACE(std::string(layout) + " " + c.str());
      expect_same_results(e, f, rule().apply(f, **m, c).func(), {});
    }
  }
}

TEST(MatmulRule, SymbolicMIsScheduledOnceForEveryM) {
  Entry e = find_entry("bmm_symbolic_m_f16");
  SmallWorkload w = small_workload(e);
  ASSERT_TRUE(w.dims.count("m"));
  auto m = rule().match(w.func, test_arch());
  ASSERT_TRUE(m);
  schedule::Schedule sch = rule().apply(w.func, **m, *rule().default_config(**m, test_arch()));
  std::string text = script::print(sch.func());
  EXPECT_TRUE(contains(text, "T.thread_binding((m + 63) // 64, thread=\"blockIdx.y\")")) << text;
  for (int64_t mv : {1, 37, 64, 65}) {
    SCOPED_TRACE("m = " + std::to_string(mv));
    expect_same_results(e, w.func, sch.func(), {{"m", mv}});
  }
  // The kernel takes m; its shared and local tiles have constant sizes.
  std::string cuda = codegen::codegen_cuda(lower::lower(sch.func()));
  EXPECT_TRUE(contains(cuda, "int m)")) << cuda;
  EXPECT_TRUE(contains(cuda, "grid (1, (m + 63) // 64, 3)")) << cuda;
}

TEST(MatmulRule, AUnitBatchAxisAsRelaxPrintsIt) {
  // C (1, m, n) += A (1, m, k) x W (k, n): the unit axis used by A and C
  // only is a batch of one, not a second M iter; both matmul rules take it.
  ir::PrimFunc f = script::parse_func(relax_matmul_text(40, 96));
  Entry e;
  e.name = "relax_matmul";
  for (const rules::Rule *r : {&rule(), &rules::matmul_tensor_core_rule()}) {
    SCOPED_TRACE(r->name());
    auto m = r->match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    schedule::Schedule sch = r->apply(f, **m, *r->default_config(**m, test_arch()));
    for (int64_t mv : {1, 37, 70}) {
      SCOPED_TRACE("m = " + std::to_string(mv));
      expect_same_results(e, f, sch.func(), {{"m", mv}});
    }
  }
}

TEST(MatmulRule, ConfigJsonRoundTrips) {
  rules::MatmulConfig c = config(32, 64, 8, 4, 4, 2, 1, 4, 2, 0, false, rules::MatmulConfig{});
  c.a_bytes = 2;
  rules::Json j = c.to_json();
  EXPECT_EQ(j.dump(), rules::MatmulConfig::from_json(j).to_json().dump());
  EXPECT_EQ(rule().config_from_json(j)->str(), c.str());
  rules::Json unknown = j;
  unknown["block_x"] = 4;
  EXPECT_THROW(rule().config_from_json(unknown), rules::ConfigError);
  rules::Json typed = j;
  typed["unroll"] = 1;
  EXPECT_THROW(rule().config_from_json(typed), rules::ConfigError);
  rules::Json missing = j;
  missing.erase("stages");
  EXPECT_THROW(rule().config_from_json(missing), rules::ConfigError);
}

TEST(MatmulRule, ValidateNamesTheField) {
  auto expect_error = [](rules::MatmulConfig c, const std::string &field) {
    try {
      c.validate(test_arch());
      ADD_FAILURE() << "no error for " << field << ": " << c.str();
    } catch (const rules::ConfigError &err) {
      EXPECT_TRUE(contains(err.what(), "matmul config: " + field + " = ")) << err.what();
    }
  };
  rules::MatmulConfig ok;
  ok.validate(test_arch());
  rules::MatmulConfig c = ok;
  c.block_m = 256, c.thread_m = 2;  // 128 x 32 threads
  expect_error(c, "threads");
  c = ok, c.block_k = 512;  // (64 + 128) x 512 floats
  expect_error(c, "shared memory");
  c = ok, c.thread_m = 16, c.thread_n = 16, c.block_m = 64, c.block_n = 64;  // 256 accumulators
  expect_error(c, "registers");
  c = ok, c.stages = rules::MatmulConfig::kMaxStages + 1;
  expect_error(c, "stages");
  c = ok, c.vector_a = 8;  // 32 bytes of float32
  expect_error(c, "vector_a");
  c = ok, c.block_m = 60;
  expect_error(c, "block_m");
  c = ok, c.pad_a = 2;
  expect_error(c, "pad_a");
  c = ok, c.vector_c = 8;
  expect_error(c, "vector_c");
  c = ok, c.a_bytes = 3;
  expect_error(c, "a_bytes");
  // float16 operands count at their size: 256 x 256 x 128 tiles fit as float16 only.
  c = ok, c.block_m = 256, c.block_n = 256, c.block_k = 128, c.thread_m = 16, c.thread_n = 16;
  c.a_bytes = c.b_bytes = 2;
  EXPECT_LE(c.shared_bytes(), test_arch().max_smem_per_block());
  c.a_bytes = c.b_bytes = 4;
  EXPECT_GT(c.shared_bytes(), test_arch().max_smem_per_block());
}

TEST(MatmulRule, ApplyRejectsAConfigOfAnotherWorkload) {
  SmallWorkload w = small_workload(find_entry("matmul_nt_f16"));
  auto m = rule().match(w.func, test_arch());
  ASSERT_TRUE(m);
  rules::MatmulConfig f32;  // 4-byte operands: not this workload's
  EXPECT_THROW(rule().apply(w.func, **m, f32), rules::ConfigError);
  auto c = rule().default_config(**m, test_arch());
  auto &mc = dynamic_cast<rules::MatmulConfig &>(*c);
  mc.vector_b = 2;  // B is transposed into shared memory element by element
  try {
    rule().apply(w.func, **m, mc);
    ADD_FAILURE() << "vector_b accepted";
  } catch (const rules::ConfigError &err) {
    EXPECT_TRUE(contains(err.what(), "vector_b")) << err.what();
  }
}

TEST(MatmulRule, DefaultConfigFollowsArchFields) {
  ir::PrimFunc f =
      analysis::specialize(load_func(find_entry("matmul_nn_f32")), {{"m", 2048}, {"n", 2048}, {"k", 2048}});
  auto m = rule().match(f, test_arch());
  ASSERT_TRUE(m);
  auto base = dynamic_cast<const rules::MatmulConfig &>(*rule().default_config(**m, test_arch()));
  EXPECT_EQ(base.str(),
            R"({"rule":"matmul","block_m":64,"block_n":128,"block_k":16,"thread_m":8,"thread_n":4,)"
            R"("vector_a":4,"vector_b":4,"vector_c":4,"pad_a":0,"pad_b":0,"unroll":true,"stages":1,)"
            R"("a_bytes":4,"b_bytes":4,"acc_bytes":4})");
  Arch narrow = test_arch();
  narrow.memory.max_vector_bytes = 8;
  auto c = dynamic_cast<const rules::MatmulConfig &>(*rule().default_config(**m, narrow));
  EXPECT_EQ(c.vector_a, 2);
  EXPECT_EQ(c.thread_n, 2);
  Arch many = test_arch();
  many.compute.sm_count = 2048;  // more SMs than 64 x 128 tiles: smaller tiles
  c = dynamic_cast<const rules::MatmulConfig &>(*rule().default_config(**m, many));
  EXPECT_LT(c.block_m * c.block_n, base.block_m * base.block_n);
  c.validate(many);
}

/// matmul_nn_f32 at 2048^3 with the default config reads like a hand-written
/// tiled GEMM: 16-byte coalesced fetches of a 64 x 16 A tile and a 16 x 128 B
/// tile per K step, conflict-free shared reads in the unrolled FMA loop (the
/// A element is one address per warp, the B slice one 16-byte load per lane,
/// consecutive lanes consecutive slices), 8 x 4 accumulators in registers,
/// no masks (everything divides), 16-byte stores of the result.
TEST(MatmulRule, LargeMatmulIsATiledGemm) {
  ir::PrimFunc f =
      analysis::specialize(load_func(find_entry("matmul_nn_f32")), {{"m", 2048}, {"n", 2048}, {"k", 2048}});
  auto m = rule().match(f, test_arch());
  ASSERT_TRUE(m);
  schedule::Schedule sch = rule().apply(f, **m, *rule().default_config(**m, test_arch()));
  std::string cuda = codegen::codegen_cuda(lower::lower(sch.func()));
  for (const char *line :
       {"// launch: grid (16, 32, 1), block (32, 8, 1)", "__shared__ __align__(16) float A_shared[1024];",
        "__shared__ __align__(16) float B_shared[2048];", "__align__(16) float B_shared_local[4];",
        "__align__(16) float C_local[32];", "for (int r_0 = 0; r_0 < 128; ++r_0) {",
        "*(float4*)(B_shared + (ax0_ax1_fused_0_1 * 1024 + ty * 128 + tx * 4)) = *(const float4*)(B + (r_0 * "
        "32768 + ax0_ax1_fused_0_1 * 16384 + ty * 2048 + bx * 128 + tx * 4));",
        "*(float4*)(A_shared + (ty * 128 + tx * 4)) = *(const float4*)(A + (by * 131072 + ty * 16384 + tx / "
        "4 * "
        "2048 + r_0 * 16 + tx % 4 * 4));",
        // 8 x 4 per thread: the K step of 16 unrolled in chunks of 8 (256 FMAs).
        "    for (int r_1_0 = 0; r_1_0 < 2; ++r_1_0) {\n      #pragma unroll\n      for (int r_1_1 = 0; r_1_1 < 8; "
        "++r_1_1) {",
        "*(float4*)B_shared_local = *(const float4*)(B_shared + (r_1_0 * 1024 + r_1_1 * 128 + tx * 4));",
        "C_local[i_2 * 4 + j_2] = C_local[i_2 * 4 + j_2] + A_shared[ty * 128 + i_2 * 16 + r_1_0 * 8 + r_1_1] * "
        "B_shared_local[j_2];",
        "*(float4*)(C + (by * 131072 + ty * 16384 + ax0_1 * 2048 + bx * 128 + tx * 4)) = *(const "
        "float4*)(C_local "
        "+ ax0_1 * 4);"})
    EXPECT_TRUE(contains(cuda, line)) << "missing: " << line << "\n" << cuda;
  EXPECT_FALSE(contains(cuda, "if (")) << cuda;
  EXPECT_FALSE(contains(cuda, "vectorize_fallback")) << cuda;
}

}  // namespace
}  // namespace tessera::test
