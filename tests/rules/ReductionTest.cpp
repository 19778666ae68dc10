//===- tests/rules/ReductionTest.cpp - The reduction rules -------------------===//
//
// The reduction and general_reduction rules: what they match and why they
// decline, the schedule each layout produces, the interpreter's answer at the
// default config and at configs whose splits do not divide the shapes (the
// workloads at their small sizes, symbolic sizes, and small programs for the
// cases the corpus lacks), configs through JSON and validate.
//
//===----------------------------------------------------------------------===//
#include "ReductionCases.h"
#include "RuleTestUtil.h"
#include "tessera/analysis/BlockInfo.h"
#include "tessera/ir/StructuralEqual.h"
#include "tessera/rules/Elementwise.h"
#include "tessera/rules/GeneralReduction.h"
#include "tessera/rules/Reduction.h"
#include "tessera/schedule/Trace.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::test {
namespace {

using rules::GeneralReductionConfig;
using rules::ReductionConfig;

ir::PrimFunc small(const std::string &name) { return small_workload(find_entry(name)).func; }

/// Runs the scheduled function in the interpreter and expects every written
/// parameter within the bounds of the original's float64 reference.
void expect_same(const ir::PrimFunc &original, const ir::PrimFunc &scheduled, const runtime::DimBindings &dims = {}) {
  std::vector<runtime::NDArray> got = runtime::make_random_args(original, dims, 7);
  runtime::Reference want = runtime::compute_reference(original, got);
  runtime::interpret(scheduled, got);
  for (const runtime::OutputCheck &c : runtime::check_outputs(original, got, want))
    EXPECT_TRUE(c.ok) << c.str() << "\n" << script::print(scheduled);
}

/// Applies `rule` at `config` (validated), checks the trace replays and the
/// answer; returns the scheduled function.
ir::PrimFunc apply_checked(const rules::Rule &rule, const ir::PrimFunc &f, const rules::Config &config,
                           const runtime::DimBindings &dims = {}) {
  auto m = rule.match(f, test_arch());
  EXPECT_TRUE(m) << m.reason();
  if (!m) return f;
  config.validate(test_arch());
  schedule::Schedule sch = rule.apply(f, **m, config);
  SCOPED_TRACE(std::string(rule.name()) + " " + config.str());
  EXPECT_TRUE(analysis::analyze(sch.func()).is_scheduled);
  schedule::Schedule replay(f);
  replay.replay(sch.trace().to_json());
  EXPECT_TRUE(ir::structural_equal(replay.func(), sch.func()));
  expect_same(f, sch.func(), dims);
  return sch.func();
}

std::string config_error(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const rules::ConfigError &e) {
    return e.what();
  }
  return "";
}

std::string reason(const rules::Rule &rule, const ir::PrimFunc &f) {
  auto m = rule.match(f, test_arch());
  return m ? "(matched: " + (*m)->describe() + ")" : m.reason();
}

#define EXPECT_DECLINES(rule, func, fragment) \
  EXPECT_NE(reason(rule, func).find(fragment), std::string::npos) << reason(rule, func)

ReductionConfig rconfig(int64_t tx, int64_t ty, int64_t unroll, bool local = false) {
  ReductionConfig c;
  c.threads_x = tx, c.threads_y = ty, c.unroll = unroll, c.local_intermediates = local;
  return c;
}

GeneralReductionConfig gconfig(int64_t tx, int64_t rows, int64_t vector, int64_t unroll, bool local = false) {
  GeneralReductionConfig c;
  c.threads_x = tx, c.rows_per_block = rows, c.vector = vector, c.unroll = unroll, c.local_intermediates = local;
  return c;
}

//===----------------------------------------------------------------------===//
// Small programs for what the corpus lacks
//===----------------------------------------------------------------------===//

/// One reduction, then a block over [rows, cols] that reads it: general_reduction's.
constexpr const char *kL2Normalize = R"(
@T.prim_func
def main(A: T.Buffer((19, 70), "float32"), B: T.Buffer((19, 70), "float32")):
    T.func_attr({"tir.noalias": True})
    ss = T.alloc_buffer((19,), "float32")
    for i, k in T.grid(19, 70):
        with T.block("ss"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                ss[v_i] = T.float32(0)
            ss[v_i] = ss[v_i] + A[v_i, v_k] * A[v_i, v_k]
    for i, j in T.grid(19, 70):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = A[v_i, v_j] * T.rsqrt(ss[v_i])
)";

/// Two spatial axes (batch, row) and a product.
constexpr const char *kBatchedProduct = R"(
@T.prim_func
def main(A: T.Buffer((3, 5, 40), "float32"), B: T.Buffer((3, 5), "float32")):
    T.func_attr({"tir.noalias": True})
    for b, m, k in T.grid(3, 5, 40):
        with T.block("B"):
            v_b, v_m, v_k = T.axis.remap("SSR", [b, m, k])
            with T.init():
                B[v_b, v_m] = T.float32(1)
            B[v_b, v_m] = B[v_b, v_m] * A[v_b, v_m, v_k]
)";

/// Column minimum over int32 with a batch axis: an outer reduction.
constexpr const char *kBatchedColumnMin = R"(
@T.prim_func
def main(A: T.Buffer((3, 20, 33), "int32"), B: T.Buffer((3, 33), "int32")):
    T.func_attr({"tir.noalias": True})
    for b, j, k in T.grid(3, 33, 20):
        with T.block("B"):
            v_b, v_j, v_k = T.axis.remap("SSR", [b, j, k])
            with T.init():
                B[v_b, v_j] = T.max_value("int32")
            B[v_b, v_j] = T.min(B[v_b, v_j], A[v_b, v_k, v_j])
)";

/// Two reduce axes, written in the opposite order of the memory layout, and
/// a two-block epilogue (one inlined).
constexpr const char *kTwoAxesWithEpilogue = R"(
@T.prim_func
def main(A: T.Buffer((6, 5, 7), "float32"), C: T.Buffer((6,), "float32")):
    T.func_attr({"tir.noalias": True})
    acc = T.alloc_buffer((6,), "float32")
    half_acc = T.alloc_buffer((6,), "float32")
    for i, k, j in T.grid(6, 7, 5):
        with T.block("acc"):
            v_i, v_k, v_j = T.axis.remap("SRR", [i, k, j])
            with T.init():
                acc[v_i] = T.float32(0)
            acc[v_i] = acc[v_i] + A[v_i, v_j, v_k]
    for i in range(6):
        with T.block("half"):
            v_i = T.axis.remap("S", [i])
            half_acc[v_i] = acc[v_i] * T.float32(0.5)
    for i in range(6):
        with T.block("C"):
            v_i = T.axis.remap("S", [i])
            C[v_i] = half_acc[v_i] + T.float32(1)
)";

/// A softmax over axis 0: its reductions read along a non-contiguous axis.
constexpr const char *kColumnSoftmax = R"(
@T.prim_func
def main(A: T.Buffer((16, 24), "float32"), B: T.Buffer((16, 24), "float32")):
    T.func_attr({"tir.noalias": True})
    mx = T.alloc_buffer((24,), "float32")
    for j, k in T.grid(24, 16):
        with T.block("mx"):
            v_j, v_k = T.axis.remap("SR", [j, k])
            with T.init():
                mx[v_j] = T.min_value("float32")
            mx[v_j] = T.max(mx[v_j], A[v_k, v_j])
    for i, j in T.grid(16, 24):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = A[v_i, v_j] - mx[v_j]
)";

/// An update that is no known combiner.
constexpr const char *kDecay = R"(
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(8, 16):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] * T.float32(0.5) + A[v_i, v_k]
)";

/// An epilogue reading the reduction's output parameter.
constexpr const char *kTwoOutputs = R"(
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(8, 16):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + A[v_i, v_k]
    for i in range(8):
        with T.block("C"):
            v_i = T.axis.remap("S", [i])
            C[v_i] = B[v_i] * T.float32(2)
)";

/// A reduction of everything to one element.
constexpr const char *kTotalSum = R"(
@T.prim_func
def main(A: T.Buffer((50, 3), "float32"), C: T.Buffer((1,), "float32")):
    T.func_attr({"tir.noalias": True})
    for i, k in T.grid(50, 3):
        with T.block("C"):
            v_i, v_k = T.axis.remap("RR", [i, k])
            with T.init():
                C[0] = T.float32(0)
            C[0] = C[0] + A[v_i, v_k]
)";

/// The same with an epilogue, which reads the total at a constant index.
constexpr const char *kTotalSumEpilogue = R"(
@T.prim_func
def main(A: T.Buffer((50, 3), "float32"), C: T.Buffer((1,), "float32")):
    T.func_attr({"tir.noalias": True})
    total = T.alloc_buffer((1,), "float32")
    for i, k in T.grid(50, 3):
        with T.block("total"):
            v_i, v_k = T.axis.remap("RR", [i, k])
            with T.init():
                total[0] = T.float32(0)
            total[0] = total[0] + A[v_i, v_k]
    with T.block("C"):
        C[0] = total[0] * T.float32(0.5)
)";

/// A whole-tensor softmax-like normalisation: the reduced value has no row axis.
constexpr const char *kScaleByTotal = R"(
@T.prim_func
def main(A: T.Buffer((6, 8), "float32"), B: T.Buffer((6, 8), "float32")):
    T.func_attr({"tir.noalias": True})
    total = T.alloc_buffer((1,), "float32")
    for i, k in T.grid(6, 8):
        with T.block("total"):
            v_i, v_k = T.axis.remap("RR", [i, k])
            with T.init():
                total[0] = T.float32(0)
            total[0] = total[0] + A[v_i, v_k]
    for i, j in T.grid(6, 8):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_i, v_j] = A[v_i, v_j] / total[0]
)";

ir::PrimFunc parse(const char *text) { return script::parse_func(text); }

//===----------------------------------------------------------------------===//
// reduction: match
//===----------------------------------------------------------------------===//

TEST(ReductionRule, MatchesRowColumnAndGemvReductions) {
  const rules::Rule &r = rules::reduction_rule();
  for (auto [name, layout] : {std::pair{"reduce_sum_f32", "inner sum"}, std::pair{"reduce_max_f16", "inner max"},
                              std::pair{"reduce_sum_outer_f32", "outer sum"}, std::pair{"gemv_f16", "inner sum"},
                              std::pair{"gemv_int4", "inner sum"}}) {
    auto m = r.match(small(name), test_arch());
    ASSERT_TRUE(m) << name << ": " << m.reason();
    EXPECT_NE((*m)->describe().find(layout), std::string::npos) << (*m)->describe();
  }
  auto gemv = r.match(small("gemv_int4"), test_arch());
  EXPECT_NE((*gemv)->describe().find("epilogue 'y', 1 block(s) inlined"), std::string::npos) << (*gemv)->describe();
  // Symbolic sizes: nothing is allocated, so nothing needs a constant shape.
  EXPECT_TRUE(r.match(load_func(find_entry("reduce_sum_f32")), test_arch()));
  EXPECT_TRUE(r.match(load_func(find_entry("reduce_sum_outer_f32")), test_arch()));
}

TEST(ReductionRule, DeclinesWithTheReason) {
  const rules::Rule &r = rules::reduction_rule();
  EXPECT_DECLINES(r, small("add_f16"), "it has no reduction block");
  EXPECT_DECLINES(r, small("softmax_f16"), "it has 2 reduction blocks ('row_max', 'row_sum')");
  EXPECT_DECLINES(r, small("matmul_nn_f32"), "reused along the output axes 'v_i', 'v_j' (a matmul or convolution");
  EXPECT_DECLINES(r, small("conv2d_nhwc_f16"), "(a matmul or convolution, not a reduction)");
  EXPECT_DECLINES(r, load_func(find_entry("prefix_sum")), "statements outside blocks");
  EXPECT_DECLINES(r, parse(kL2Normalize), "epilogue 'B' has 2 axes but the reduction keeps 1: it broadcasts");
  EXPECT_DECLINES(r, parse(kDecay), "block 'B' (SR) is not a reduction with a recognised combiner");
  EXPECT_DECLINES(r, parse(kTwoOutputs), "epilogue 'C' reads 'B', an output parameter");
  EXPECT_DECLINES(r, parse(kTotalSumEpilogue), "epilogue 'C' reads 'total' at indices other than distinct iter vars");
  rules::DefaultSchedule s = rules::apply_default_schedule(small("reduce_sum_f32"), test_arch());
  EXPECT_DECLINES(r, s.func, "already scheduled");
}

//===----------------------------------------------------------------------===//
// reduction: schedules and answers
//===----------------------------------------------------------------------===//

TEST(ReductionRule, InnerReductionIsAThreadGroupPerRow) {
  const rules::Rule &r = rules::reduction_rule();
  std::string text = script::print(apply_checked(r, small("reduce_sum_f32"), rconfig(64, 2, 2)));
  // Rows over blocks and threadIdx.y; the row over threadIdx.x, striding.
  EXPECT_NE(text.find("for bx in T.thread_binding(19, thread=\"blockIdx.x\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for ry in T.thread_binding(2, thread=\"threadIdx.y\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for k_t in T.thread_binding(64, thread=\"threadIdx.x\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for k_u in T.unroll(2)"), std::string::npos) << text;
  EXPECT_NE(text.find("v_k = T.axis.reduce(130, k_o * 128 + k_u * 64 + k_t)"), std::string::npos) << text;
}

TEST(ReductionRule, OuterReductionPutsThreadsAlongTheContiguousOutputs) {
  const rules::Rule &r = rules::reduction_rule();
  std::string text = script::print(apply_checked(r, small("reduce_sum_outer_f32"), rconfig(16, 4, 2)));
  EXPECT_NE(text.find("for s_t in T.thread_binding(16, thread=\"threadIdx.x\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for k_t in T.thread_binding(4, thread=\"threadIdx.y\")"), std::string::npos) << text;
  EXPECT_NE(text.find("v_j = T.axis.spatial(37, bx * 16 + s_t)"), std::string::npos) << text;
  // One thread per output: the init leaves the reduce loop.
  text = script::print(apply_checked(r, small("reduce_sum_outer_f32"), rconfig(32, 1, 4)));
  EXPECT_NE(text.find("with T.block(\"B_init\")"), std::string::npos) << text;
  EXPECT_EQ(text.find("threadIdx.y"), std::string::npos) << text;
}

TEST(ReductionRule, EpilogueRunsUnderTheRowLoopWithTheValueOnChip) {
  const rules::Rule &r = rules::reduction_rule();
  std::string text = script::print(apply_checked(r, small("gemv_f16"), rconfig(32, 4, 4)));
  EXPECT_NE(text.find("acc = T.alloc_buffer((67,), scope=\"shared\")"), std::string::npos) << text;
  text = script::print(apply_checked(r, small("gemv_f16"), rconfig(32, 4, 4, true)));
  EXPECT_NE(text.find("acc = T.alloc_buffer((67,), scope=\"local\")"), std::string::npos) << text;
}

TEST(ReductionRule, WorkloadsGiveTheInterpretersAnswerAtManyConfigs) {
  const rules::Rule &r = rules::reduction_rule();
  for (const char *name : {"reduce_sum_f32", "reduce_max_f16", "reduce_sum_outer_f32", "gemv_f16", "gemv_int4"}) {
    SCOPED_TRACE(name);
    ir::PrimFunc f = small(name);
    auto m = r.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    apply_checked(r, f, *r.default_config(**m, test_arch()));
    // Power-of-two and odd thread counts, none dividing the small sizes;
    // serial rows (threads_x 1) and serial columns (threads_y 1).
    for (const ReductionConfig &c : {rconfig(64, 2, 1), rconfig(48, 3, 3, true), rconfig(1, 8, 4),
                                     rconfig(16, 1, 2), rconfig(8, 5, 8, true)})
      apply_checked(r, f, c);
  }
}

TEST(ReductionRule, SymbolicSizesStaySymbolic) {
  const rules::Rule &r = rules::reduction_rule();
  runtime::DimBindings dims{{"rows", 21}, {"cols", 45}, {"m", 13}, {"k", 70}};
  for (const char *name : {"reduce_sum_f32", "reduce_max_f16", "reduce_sum_outer_f32", "gemv_f16"}) {
    SCOPED_TRACE(name);
    ir::PrimFunc f = load_func(find_entry(name));
    auto m = r.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    auto def = r.default_config(**m, test_arch());
    apply_checked(r, f, *def, dims);
    // Threads split a symbolic reduce extent as a constant one (the default
    // does), its iterations past the extent masked, down to none at all.
    bool outer = std::string(name) == "reduce_sum_outer_f32";
    const auto &d = static_cast<const ReductionConfig &>(*def);
    EXPECT_GT(outer ? d.threads_y : d.threads_x, 1) << def->str();
    for (const ReductionConfig &c : {rconfig(16, 2, 3), rconfig(1, 8, 3), rconfig(64, 4, 1)}) {
      apply_checked(r, f, c, dims);
      runtime::DimBindings empty = dims;
      empty[outer ? "rows" : std::string(name) == "gemv_f16" ? "k" : "cols"] = 0;
      apply_checked(r, f, c, empty);
    }
  }
}

TEST(ReductionRule, OuterVectorsNeedThreadsSplittingTheReduction) {
  // Adjacent outputs per thread keep per-thread partial arrays, which only
  // the cross-thread form has: with threads_y = 1 a vector is a ConfigError.
  const rules::Rule &r = rules::reduction_rule();
  ir::PrimFunc f = analysis::specialize(load_func(find_entry("reduce_sum_outer_f32")), {{"rows", 64}, {"cols", 64}});
  auto m = r.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  ReductionConfig alone = rconfig(16, 1, 2);
  alone.vector = 4;
  EXPECT_NE(config_error([&] { r.apply(f, **m, alone); }).find("vector = 4 asks for vectors along the outputs"),
            std::string::npos);
  ReductionConfig split = rconfig(4, 8, 2);
  split.vector = 4;
  apply_checked(r, f, split, {});
}

TEST(ReductionRule, ProgramsBeyondTheCorpus) {
  const rules::Rule &r = rules::reduction_rule();
  for (const char *text : {kBatchedProduct, kBatchedColumnMin, kTwoAxesWithEpilogue, kTotalSum}) {
    ir::PrimFunc f = parse(text);
    auto m = r.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    apply_checked(r, f, *r.default_config(**m, test_arch()));
    apply_checked(r, f, rconfig(8, 3, 2));
    apply_checked(r, f, rconfig(32, 2, 1, true));
  }
  auto m = r.match(parse(kBatchedColumnMin), test_arch());
  EXPECT_NE((*m)->describe().find("outer min reduction 'B': 99 outputs of 20 elements"), std::string::npos)
      << (*m)->describe();
  // The contiguous reduce axis ends up innermost: consecutive threads, consecutive addresses.
  std::string text = script::print(apply_checked(r, parse(kTwoAxesWithEpilogue), rconfig(8, 1, 1)));
  EXPECT_NE(text.find("A[v_i, v_j, v_k]"), std::string::npos) << text;
  EXPECT_NE(text.find("v_k = T.axis.reduce(7, (k_o * 8 + k_t) % 7)"), std::string::npos) << text;
}

//===----------------------------------------------------------------------===//
// general_reduction
//===----------------------------------------------------------------------===//

TEST(GeneralReductionRule, MatchesSoftmaxAndTheNorms) {
  const rules::Rule &g = rules::general_reduction_rule();
  for (auto [name, what] :
       {std::pair{"softmax_f16", "37 rows of 130: reductions 'row_max' 'row_sum', then 'B', 1 block(s) inlined"},
        std::pair{"rmsnorm_f16", "37 rows of 130: reductions 'sum_sq', then 'B', 1 block(s) inlined"},
        std::pair{"layernorm_f16", "45 rows of 67: reductions 'row_sum' 'sq_dev_sum', then 'B', 1 block(s) inlined"}}) {
    auto m = g.match(small(name), test_arch());
    ASSERT_TRUE(m) << name << ": " << m.reason();
    EXPECT_EQ((*m)->describe(), what);
  }
  EXPECT_TRUE(g.match(parse(kL2Normalize), test_arch()));
}

TEST(GeneralReductionRule, DeclinesWithTheReason) {
  const rules::Rule &g = rules::general_reduction_rule();
  EXPECT_DECLINES(g, small("add_f16"), "it has no reduction block");
  EXPECT_DECLINES(g, small("reduce_sum_f32"), "the last block 'B' is a reduction");
  EXPECT_DECLINES(g, small("gemv_f16"), "has no axis beyond the reduced rows (the reduction rule");
  EXPECT_DECLINES(g, small("matmul_nn_f32"), "the last block 'C' is a reduction");
  EXPECT_DECLINES(g, small("matmul_bias_relu_f32"), "block 'C' contracts operands that are reused along the output");
  EXPECT_DECLINES(g, parse(kColumnSoftmax), "reduction 'mx' does not reduce along the contiguous axis of 'A'");
  EXPECT_DECLINES(g, parse(kTwoOutputs), "writes the output parameter 'B'");
  EXPECT_DECLINES(g, load_func(find_entry("prefix_sum")), "statements outside blocks");
}

TEST(GeneralReductionRule, OneThreadBlockPerRowWithTheRowValuesOnChip) {
  const rules::Rule &g = rules::general_reduction_rule();
  std::string text = script::print(apply_checked(g, small("softmax_f16"), gconfig(32, 2, 2, 2)));
  EXPECT_NE(text.find("row_max = T.alloc_buffer((37,), \"float16\", scope=\"shared\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for bx in T.thread_binding(19, thread=\"blockIdx.x\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for ry in T.thread_binding(2, thread=\"threadIdx.y\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for row_max_k_t in T.thread_binding(32, thread=\"threadIdx.x\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for row_sum_k_t in T.thread_binding(32, thread=\"threadIdx.x\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for c_t in T.thread_binding(32, thread=\"threadIdx.x\")"), std::string::npos) << text;
  // Whole vectors under the tail predicate (a block around the vector loop).
  EXPECT_NE(text.find("with T.block(\"B_o\")"), std::string::npos) << text;
  EXPECT_NE(text.find("for c_v in T.vectorized(2)"), std::string::npos) << text;
  // The elementwise exp was inlined: no row_exp buffer is left.
  EXPECT_EQ(text.find("row_exp"), std::string::npos) << text;
  text = script::print(apply_checked(g, small("rmsnorm_f16"), gconfig(64, 1, 2, 1, true)));
  EXPECT_NE(text.find("sum_sq = T.alloc_buffer((37,), scope=\"local\")"), std::string::npos) << text;
}

TEST(GeneralReductionRule, WorkloadsGiveTheInterpretersAnswerAtManyConfigs) {
  const rules::Rule &g = rules::general_reduction_rule();
  for (const char *name : {"softmax_f16", "rmsnorm_f16", "layernorm_f16"}) {
    SCOPED_TRACE(name);
    ir::PrimFunc f = small(name);
    auto m = g.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    apply_checked(g, f, *g.default_config(**m, test_arch()));
    // Vectors that do not divide the row (4 for 130 and 67) take the masked
    // scalar path; rows_per_block 3 leaves a partial last block.
    for (const GeneralReductionConfig &c : {gconfig(64, 2, 1, 1), gconfig(32, 3, 4, 2, true), gconfig(16, 1, 8, 1),
                                            gconfig(48, 2, 2, 4), gconfig(1, 4, 1, 3, true)})
      apply_checked(g, f, c);
  }
}

/// A batch-1 decode step's rmsnorm as relax prints it: the unit axes
/// simplified away, the reduced value read at [0, 0] (no row axis).
constexpr const char *kDecodeRmsNorm = R"(
@T.prim_func(private=True)
def rms_norm(A: T.Buffer((1, 1, 96), "float16"), B: T.Buffer((96,), "float16"), rms_norm: T.Buffer((1, 96), "float16")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    Ared_temp = T.alloc_buffer((1, 1))
    for ax0 in range(96):
        with T.block("Ared_temp"):
            v0 = T.axis.reduce(96, ax0)
            T.reads(A[0, 0, v0])
            T.writes(Ared_temp[0, 0])
            with T.init():
                Ared_temp[0, 0] = T.float32(0.0)
            Ared_temp[0, 0] = Ared_temp[0, 0] + T.Cast("float32", A[0, 0, v0]) * T.Cast("float32", A[0, 0, v0])
    for ax0 in range(96):
        with T.block("rms_norm"):
            v0 = T.axis.spatial(96, ax0)
            T.reads(B[v0], A[0, 0, v0], Ared_temp[0, 0])
            T.writes(rms_norm[0, v0])
            rms_norm[0, v0] = T.Cast(
                "float16",
                T.Cast("float32", B[v0])
                * (T.Cast("float32", A[0, 0, v0]) / T.sqrt(Ared_temp[0, 0] * T.float32(0.010416667) + T.float32(1e-06))),
            )
)";

TEST(GeneralReductionRule, OneRowWithoutARowAxis) {
  // The reduced values read at constant indices: the whole tensor is one
  // row, one thread block reduces it (a unit loop stands for the rows).
  const rules::Rule &g = rules::general_reduction_rule();
  for (const char *text : {kDecodeRmsNorm, kScaleByTotal}) {
    ir::PrimFunc f = parse(text);
    auto m = g.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    EXPECT_EQ((*m)->describe().rfind("1 rows of ", 0), 0u) << (*m)->describe();
    std::string s = script::print(apply_checked(g, f, *g.default_config(**m, test_arch())));
    EXPECT_NE(s.find("for r in T.thread_binding(1, thread=\"blockIdx.x\")"), std::string::npos) << s;
    apply_checked(g, f, gconfig(32, 1, 2, 2, false));
    apply_checked(g, f, gconfig(16, 2, 1, 1, true));
  }
}

TEST(GeneralReductionRule, TupleReductionAsRelaxPrintsLayerNorm) {
  // One block sums x and x * x into two buffers through T.let values: a
  // tuple reduction. general_reduction takes it (both per-row values on
  // chip); the reduction rule says whose pattern it is.
  ir::PrimFunc f = parse(relax_layer_norm(96).c_str());
  const rules::Rule &g = rules::general_reduction_rule();
  auto m = g.match(f, test_arch());
  ASSERT_TRUE(m) << m.reason();
  EXPECT_NE((*m)->describe().find("reductions 'A_red_temp', then 'compute', 1 block(s) inlined"), std::string::npos)
      << (*m)->describe();
  std::string text = script::print(apply_checked(g, f, *g.default_config(**m, test_arch()), {{"n", 5}}));
  EXPECT_NE(text.find("A_red_temp_v0 = T.alloc_buffer((T.int64(1), n), scope=\"local\")"), std::string::npos) << text;
  EXPECT_NE(text.find("A_red_temp_v1 = T.alloc_buffer((T.int64(1), n), scope=\"local\")"), std::string::npos) << text;
  for (const GeneralReductionConfig &c : {gconfig(32, 2, 1, 2, false), gconfig(1, 4, 1, 4, true)})
    apply_checked(g, f, c, {{"n", 3}});
  EXPECT_DECLINES(rules::reduction_rule(), f, "reduces into 2 buffers at once (a tuple reduction");
}

TEST(GeneralReductionRule, SymbolicRowsColumnsAndOneReduction) {
  const rules::Rule &g = rules::general_reduction_rule();
  // Symbolic columns: each reduction's loop, computed at the row, runs over
  // exactly the columns (not a bound of them) and needs no guard.
  for (const char *name : {"softmax_f16", "rmsnorm_f16", "layernorm_f16"}) {
    SCOPED_TRACE(name);
    ir::PrimFunc f = load_func(find_entry(name));
    auto m = g.match(f, test_arch());
    ASSERT_TRUE(m) << m.reason();
    EXPECT_NE((*m)->describe().find("symbolic rows of symbolic"), std::string::npos) << (*m)->describe();
    ir::PrimFunc s = apply_checked(g, f, *g.default_config(**m, test_arch()), {{"rows", 5}, {"cols", 300}});
    std::string text = script::print(s);
    EXPECT_NE(text.find("in range((cols + "), std::string::npos) << text;
    EXPECT_EQ(text.find("2147483647"), std::string::npos) << text;
    for (int64_t cols : {0, 1, 7, 70})
      apply_checked(g, f, gconfig(32, 3, 2, 2, false), {{"rows", 4}, {"cols", cols}});
  }
  // Symbolic rows.
  for (const char *name : {"softmax_f16", "layernorm_f16"}) {
    ir::PrimFunc rows = analysis::specialize(load_func(find_entry(name)), {{"cols", 70}});
    auto m = g.match(rows, test_arch());
    ASSERT_TRUE(m) << m.reason();
    apply_checked(g, rows, *g.default_config(**m, test_arch()), {{"rows", 11}});
    apply_checked(g, rows, gconfig(32, 3, 2, 2, false), {{"rows", 11}});
  }
  ir::PrimFunc l2 = parse(kL2Normalize);
  auto m = g.match(l2, test_arch());
  ASSERT_TRUE(m) << m.reason();
  apply_checked(g, l2, *g.default_config(**m, test_arch()));
  apply_checked(g, l2, gconfig(16, 4, 2, 2));
}

//===----------------------------------------------------------------------===//
// Configs
//===----------------------------------------------------------------------===//

TEST(ReductionConfigs, DefaultsComeFromTheArchAndTheShape) {
  const rules::Rule &r = rules::reduction_rule();
  const rules::Rule &g = rules::general_reduction_rule();
  Arch a100 = Arch::by_name("a100");
  // Long rows: a block per row; short rows: a warp per row, several per block.
  ir::PrimFunc big = analysis::specialize(load_func(find_entry("reduce_sum_f32")), {{"rows", 4096}, {"cols", 4096}});
  auto m = r.match(big, a100);
  ASSERT_TRUE(m);
  EXPECT_EQ(r.default_config(**m, a100)->str(),
            R"({"rule":"reduction","threads_x":256,"threads_y":1,"unroll":4,"vector":4,"local_intermediates":true})");
  ir::PrimFunc narrow = analysis::specialize(load_func(find_entry("reduce_sum_f32")), {{"rows", 4096}, {"cols", 64}});
  m = r.match(narrow, a100);
  EXPECT_EQ(r.default_config(**m, a100)->str(),
            R"({"rule":"reduction","threads_x":32,"threads_y":8,"unroll":1,"vector":2,"local_intermediates":true})");
  ir::PrimFunc softmax = analysis::specialize(load_func(find_entry("softmax_f16")), {{"rows", 8192}, {"cols", 4096}});
  m = g.match(softmax, a100);
  ASSERT_TRUE(m);
  EXPECT_EQ(g.default_config(**m, a100)->str(),
            R"({"rule":"general_reduction","threads_x":256,"rows_per_block":1,"vector":8,"unroll":4,)"
            R"("local_intermediates":true})");
  for (const rules::Rule *rule : {&r, &g})
    for (const char *name : {"reduce_sum_f32", "reduce_sum_outer_f32", "gemv_int4", "softmax_f16", "layernorm_f16"}) {
      auto mm = rule->match(small(name), test_arch());
      if (!mm) continue;
      auto c = rule->default_config(**mm, test_arch());
      EXPECT_NO_THROW(c->validate(test_arch())) << c->str();
      EXPECT_EQ(rule->config_from_json(c->to_json())->to_json(), c->to_json());
    }
}

TEST(ReductionConfigs, JsonErrorsNameTheField) {
  const rules::Rule &r = rules::reduction_rule();
  rules::Json j = ReductionConfig().to_json();
  j["threads_x"] = "64";
  EXPECT_EQ(config_error([&] { r.config_from_json(j); }),
            "reduction config: field 'threads_x': expected an integer, got \"64\"");
  j = ReductionConfig().to_json();
  j["rows_per_block"] = 2;
  EXPECT_EQ(config_error([&] { r.config_from_json(j); }),
            "reduction config: unknown field 'rows_per_block' (fields: threads_x, threads_y, unroll, "
            "vector, local_intermediates)");
  EXPECT_EQ(config_error([&] { rules::general_reduction_rule().config_from_json(ReductionConfig().to_json()); }),
            "config is for rule 'reduction', not 'general_reduction'");
  rules::Json g = GeneralReductionConfig().to_json();
  g.erase("vector");
  EXPECT_EQ(config_error([&] { rules::general_reduction_rule().config_from_json(g); }),
            "general_reduction config: missing the field 'vector'");
}

TEST(ReductionConfigs, ValidateRejectsWhatTheArchCannotRun) {
  auto error = [](const rules::Config &c) { return config_error([&] { c.validate(test_arch()); }); };
  EXPECT_NE(error(rconfig(2048, 1, 1)).find("reduction config: threads_x = 2048 is outside [1, 1024]"),
            std::string::npos);
  EXPECT_NE(error(rconfig(256, 8, 1)).find("threads_x * threads_y = 2048 threads per block exceed the 1024"),
            std::string::npos);
  EXPECT_NE(error(rconfig(32, 0, 1)).find("threads_y = 0 is outside"), std::string::npos);
  EXPECT_NE(error(rconfig(32, 1, 0)).find("unroll = 0 is outside [1, 64]"), std::string::npos);
  EXPECT_NE(error(gconfig(512, 4, 1, 1)).find("general_reduction config: threads_x * rows_per_block = 2048"),
            std::string::npos);
  EXPECT_NE(error(gconfig(32, 1, 3, 1)).find("vector = 3 is not a power of two in [1, 16]"), std::string::npos);
  EXPECT_NE(error(gconfig(32, 1, 32, 1)).find("vector = 32"), std::string::npos);
  // Registers: a block of 1024 threads at 32 registers each fits in 65536,
  // but not on an arch with half the registers per block.
  Arch small_regs = test_arch();
  small_regs.limits.regs_per_block = 16384;
  EXPECT_NE(config_error([&] { rconfig(1024, 1, 1).validate(small_regs); }).find("registers each exceed the 16384"),
            std::string::npos);
  EXPECT_EQ(error(rconfig(1024, 1, 64)), "");
}

TEST(ReductionConfigs, AnotherRulesConfigIsAConfigError) {
  for (const rules::Rule *rule : {&rules::reduction_rule(), &rules::general_reduction_rule()}) {
    ir::PrimFunc f = small(rule == &rules::reduction_rule() ? "reduce_sum_f32" : "softmax_f16");
    auto m = rule->match(f, test_arch());
    ASSERT_TRUE(m);
    rules::ElementwiseConfig other;
    EXPECT_NE(config_error([&] { rule->apply(f, **m, other); }).find("got a config for 'elementwise'"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace tessera::test
