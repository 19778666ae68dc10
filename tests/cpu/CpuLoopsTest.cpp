//===- tests/cpu/CpuLoopsTest.cpp - CPU schedules of one loop nest ---------===//
//
// cpu/CpuLoops.h on the shapes it is for, written as TVM prints them: a
// column sum reordered (the same bits: each output still sums in k order), a
// row sum split into vectorized partial sums (rfactor: another order, within
// the float64 bound), a transpose in tiles (the same bits); other functions
// get no candidates; configs are checked.
//
//===----------------------------------------------------------------------===//
#include "tessera/cpu/CpuLoops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "CpuTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/ir/Functor.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/runtime/Verify.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/DataPaths.h"
#include "tessera/support/Error.h"

namespace tessera::cpu {
namespace {

const char *kColumnSum = R"(
# from tvm.script import tir as T

@T.prim_func
def main(a: T.handle, b: T.handle) -> None:
    rows, cols = T.int32(), T.int32()
    A = T.match_buffer(a, (rows, cols), "float32")
    B = T.match_buffer(b, (cols,), "float32")
    for j, k in T.grid(cols, rows):
        with T.block("B"):
            v_j, v_k = T.axis.remap("SR", [j, k])
            T.reads(A[v_k, v_j])
            T.writes(B[v_j])
            with T.init():
                B[v_j] = T.float32(0.0)
            B[v_j] = B[v_j] + A[v_k, v_j]
)";

const char *kRowSum = R"(
@T.prim_func
def main(A: T.Buffer((37, 1024), "float32"), B: T.Buffer((37,), "float32")):
    for i, k in T.grid(37, 1024):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)";

const char *kTranspose = R"(
@T.prim_func
def main(A: T.Buffer((45, 67), "float32"), B: T.Buffer((67, 45), "float32")):
    for i, j in T.grid(45, 67):
        with T.block("B"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            B[v_j, v_i] = A[v_i, v_j]
)";

const char *kAdd = R"(
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    for i, j in T.grid(8, 16):
        with T.block("C"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            C[v_i, v_j] = A[v_i, v_j] + B[v_i, v_j]
)";

using test::loop_kinds;

bool has(const std::vector<std::string> &v, const std::string &x) { return std::find(v.begin(), v.end(), x) != v.end(); }

/// The same bits as `original` on the inputs of seed 3.
void expect_same_bits(const ir::PrimFunc &original, const ir::PrimFunc &scheduled) {
  test::expect_same_bits(original, scheduled, {}, 3);
}

std::vector<std::string> kinds_of(const std::vector<CpuLoopConfig> &configs) {
  std::vector<std::string> out;
  for (const CpuLoopConfig &c : configs) out.push_back(c.str());
  return out;
}

TEST(CpuLoops, AColumnSumSumsConsecutiveOutputsTogetherInKOrder) {
  ir::PrimFunc f = analysis::specialize(script::parse_func(kColumnSum), {{"rows", 50}, {"cols", 300}});
  std::vector<CpuLoopConfig> configs = cpu_loop_candidates(f);
  EXPECT_EQ(kinds_of(configs), (std::vector<std::string>{R"({"loops":"reduce_outer","tile":64})",
                                                         R"({"loops":"reduce_outer","tile":256})"}));
  for (const CpuLoopConfig &c : configs) {
    SCOPED_TRACE(c.str());
    ir::PrimFunc g = schedule_loops_for_cpu(f, c);
    std::vector<std::string> kinds = loop_kinds(g);
    EXPECT_EQ(kinds.front(), "parallel");
    EXPECT_TRUE(has(kinds, "vectorized"));
    expect_same_bits(f, g);
  }
}

/// `scheduled` within the float64 bound of `original` on the inputs of seed 7.
void expect_within_bound(const ir::PrimFunc &original, const ir::PrimFunc &scheduled) {
  std::vector<runtime::NDArray> args = runtime::make_random_args(original, {}, 7);
  runtime::Reference want = runtime::compute_reference(original, args);
  runtime::interpret(scheduled, args);
  for (const runtime::OutputCheck &check : runtime::check_outputs(original, args, want))
    EXPECT_TRUE(check.ok) << check.str();
}

TEST(CpuLoops, ARowSumBecomesVectorizedPartialSumsWithinTheBound) {
  ir::PrimFunc f = script::parse_func(kRowSum);
  std::vector<CpuLoopConfig> configs = cpu_loop_candidates(f);
  ASSERT_EQ(configs.size(), 2u);
  for (const CpuLoopConfig &c : configs) {
    SCOPED_TRACE(c.str());
    EXPECT_EQ(c.kind, "rfactor");
    ir::PrimFunc g = schedule_loops_for_cpu(f, c);
    EXPECT_TRUE(has(loop_kinds(g), "vectorized"));
    expect_within_bound(f, g);
  }
}

TEST(CpuLoops, ATransposeGoesInTilesWithTheSameBits) {
  ir::PrimFunc f = script::parse_func(kTranspose);
  std::vector<CpuLoopConfig> configs = cpu_loop_candidates(f);
  ASSERT_EQ(configs.size(), 6u);
  for (const CpuLoopConfig &c : configs) {
    SCOPED_TRACE(c.str());
    EXPECT_EQ(c.kind, "tile2d");
    EXPECT_EQ(CpuLoopConfig::parse(c.str())->str(), c.str());
    ir::PrimFunc g = schedule_loops_for_cpu(f, c);
    EXPECT_EQ(loop_kinds(g).front(), "parallel");
    // Whatever the cache tile, the vectorized loop is one 512-bit vector of
    // float32 under a serial loop as long: the tile the JIT transposes.
    int64_t vectorized = 0, above = 0;
    ir::pre_order_visit(g.body(), nullptr, [&](const ir::Stmt &s) {
      const auto *l = s.as<ir::For>();
      if (const auto *inner = l ? l->body.as<ir::For>() : nullptr; inner && inner->for_kind == ir::ForKind::Vectorized)
        above = ir::as_const_int(l->extent).value_or(0), vectorized = ir::as_const_int(inner->extent).value_or(0);
    });
    EXPECT_EQ(vectorized, 16);
    EXPECT_EQ(above, 16);
    // "stream": the block's stores may bypass the caches.
    size_t streaming = 0;
    ir::pre_order_visit(g.body(), nullptr, [&](const ir::Stmt &s) {
      if (const auto *b = s.as<ir::Block>()) streaming += b->annotations.count(ir::kStreamingStoresAnnotation);
    });
    EXPECT_EQ(streaming, c.stream ? 1u : 0u);
    expect_same_bits(f, g);
  }
}

/// The names of the blocks of `f`, in pre-order.
std::vector<std::string> block_names(const ir::PrimFunc &f) {
  std::vector<std::string> names;
  ir::pre_order_visit(f.body(), nullptr, [&](const ir::Stmt &s) {
    if (const auto *b = s.as<ir::Block>()) names.push_back(b->name);
  });
  return names;
}

TEST(CpuLoops, RowsSplitsEachRowReductionIntoLanesAndInlinesWhatOneBlockReads) {
  // Softmax as relax's legalization prints it: the max and the sum get lanes
  // (the max in any order is the same number); the exponentials, read by the
  // sum and the normalisation, stay stored, computed like the normalisation
  // in rows over the cores and vectors of L; fused, all four blocks under
  // one loop over the rows.
  ir::PrimFunc softmax = script::parse_file(support::data_root() / "tests" / "corpus" / "softmax.py").funcs.at(0);
  std::vector<CpuLoopConfig> configs = cpu_loop_candidates(softmax);
  ASSERT_EQ(configs.size(), 4u);
  for (const CpuLoopConfig &c : configs) {
    SCOPED_TRACE(c.str());
    EXPECT_EQ(c.kind, "rows");
    ir::PrimFunc g = schedule_loops_for_cpu(softmax, c);
    const std::vector<std::string> kinds = loop_kinds(g);
    // Rows over the cores in all four loop nests (one loop when fused); in
    // vectors of L: each reduction's partial results, set (the init, out of
    // its reduce loop) and updated, the exponentials and the normalisation.
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "vectorized"), 6);
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "parallel"), c.fuse ? 1 : 4);
    EXPECT_EQ(kinds.front(), "parallel");
    const std::vector<std::string> blocks = block_names(g);
    EXPECT_TRUE(has(blocks, "T_softmax_exp"));
    EXPECT_EQ(std::count_if(blocks.begin(), blocks.end(), [](const std::string &n) { return n.ends_with("_rf_init"); }),
              2);
    EXPECT_EQ(CpuLoopConfig::parse(c.str())->str(), c.str());
    expect_within_bound(softmax, g);
  }
  // The int4 gemv: the dequantised weight is computed where the product
  // reads it (never stored), the product gets lanes: 16 of k = 1008 (no
  // multiple of 64), 16 or 64 of k = 1024, there also word-major (its
  // packed weights read at k // 8; 16 x 8 and 64 x 8 divide 1024, not 1008).
  ir::PrimFunc gemv = script::parse_file(support::data_root() / "workloads" / "gemv_int4.py").funcs.at(0);
  for (int64_t k : {1008, 1024}) {
    ir::PrimFunc f = analysis::specialize(gemv, {{"m", 5}, {"k", k}});
    configs = cpu_loop_candidates(f);
    const auto word_major =
        std::count_if(configs.begin(), configs.end(), [](const CpuLoopConfig &c) { return c.words == 8; });
    ASSERT_EQ(configs.size(), k == 1024 ? 8u : 2u) << k;
    EXPECT_EQ(word_major, k == 1024 ? 4 : 0) << k;
    for (const CpuLoopConfig &c : configs) {
      SCOPED_TRACE(c.str());
      ir::PrimFunc g = schedule_loops_for_cpu(f, c);
      EXPECT_FALSE(has(block_names(g), "decode"));
      EXPECT_TRUE(has(loop_kinds(g), "vectorized"));
      // Word-major: x copied once, in the order of the lanes (x'[k % 8, k // 8]),
      // outside the row loops, fused or not.
      EXPECT_EQ(has(block_names(g), "x_global"), c.words > 0);
      if (c.words > 0) {
        const std::string text = script::print(g);
        EXPECT_NE(text.find(fmt::format("x_global = T.alloc_buffer((8, {}), \"float16\")", k / 8)), std::string::npos)
            << text;
        EXPECT_NE(text.find("x_global[v0 % 8, v0 // 8] = x[v0]"), std::string::npos) << text;
      }
      EXPECT_EQ(CpuLoopConfig::parse(c.str())->str(), c.str());
      expect_within_bound(f, g);
    }
  }
  // One scale per row (s[i], also one-dimensional, its length a multiple
  // of 8, read in the product): x is the vector copied in the lanes' order,
  // not s.
  ir::PrimFunc per_row = script::parse_func(R"(
@T.prim_func
def main(
    Wq: T.Buffer((8, 32), "uint32"),
    s: T.Buffer((8,), "float16"),
    x: T.Buffer((256,), "float16"),
    y: T.Buffer((8,), "float32"),
) -> None:
    for i, k in T.grid(8, 256):
        with T.block("y"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                y[v_i] = T.float32(0)
            y[v_i] = y[v_i] + T.Cast("float32", (T.Cast("float16", Wq[v_i, v_k // 8] >> T.Cast("uint32", v_k % 8 * 4) & T.uint32(15)) - T.float16(8)) * s[v_i]) * T.Cast("float32", x[v_k])
)");
  {
    ir::PrimFunc g = schedule_loops_for_cpu(per_row, {"rows", 16, false, false, 8});
    EXPECT_TRUE(has(block_names(g), "x_global"));
    EXPECT_FALSE(has(block_names(g), "s_global"));
    expect_within_bound(per_row, g);
  }
  // Word-major where nothing reads packed words is refused, saying why.
  try {
    schedule_loops_for_cpu(softmax, {"rows", 16, false, false, 8});
    FAIL() << "words 8 of a softmax";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("reads packed words at r // 8"), std::string::npos) << e.what();
  }
  // A function where no reduction gets lanes is refused, saying why.
  try {
    schedule_loops_for_cpu(analysis::specialize(gemv, {{"m", 5}, {"k", 1008}}), {"rows", 64});
    FAIL() << "rows 64 of k = 1008";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("no reduction of 'main'"), std::string::npos) << e.what();
  }
}

TEST(CpuLoops, OthersGetNoCandidatesAndConfigsAreChecked) {
  EXPECT_TRUE(cpu_loop_candidates(script::parse_func(kAdd)).empty());  // already in order
  // A row sum no lane count divides: rfactor would leave partial sums unset.
  std::string odd = kRowSum;
  for (size_t at; (at = odd.find("1024")) != std::string::npos;) odd.replace(at, 4, "1000");
  EXPECT_TRUE(cpu_loop_candidates(script::parse_func(odd)).empty());
  EXPECT_FALSE(CpuLoopConfig::parse(R"({"tile_m": 4})").has_value());  // a matmul config
  EXPECT_EQ(CpuLoopConfig::parse(R"({"loops": "rfactor", "tile": 16})")->str(), R"({"loops":"rfactor","tile":16})");
  EXPECT_EQ(CpuLoopConfig::parse(R"({"loops": "rows", "tile": 16, "fuse": true})")->str(),
            R"({"loops":"rows","tile":16,"fuse":true})");
  for (auto [text, message] : {std::pair{R"({"loops": "spiral", "tile": 4})", "unknown loops 'spiral'"},
                               {R"({"loops": "tile2d"})", "'tile' must be an integer"},
                               {R"({"loops": "tile2d", "tile": 4, "x": 1})", "unknown field 'x'"},
                               {R"({"loops": "tile2d", "tile": 4, "stream": 1})", "'stream' is true or false"},
                               {R"({"loops": "rfactor", "tile": 16, "stream": true})", "only for tile2d"},
                               {R"({"loops": "tile2d", "tile": 16, "fuse": true})", "'fuse' is true or false, and only for rows"},
                               {R"({"loops": "rows", "tile": 16, "fuse": "yes"})", "'fuse' is true or false"},
                               {R"({"loops": "rows", "tile": 16, "words": 1})", "'words' is an integer of at least 2"},
                               {R"({"loops": "rfactor", "tile": 16, "words": 8})", "and only for rows"}}) {
    try {
      CpuLoopConfig::parse(text);
      FAIL() << text;
    } catch (const UserError &e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  // A config of another shape, and a tile of 0, are refused with the reason.
  ir::PrimFunc rows = script::parse_func(kRowSum);
  try {
    schedule_loops_for_cpu(rows, {"tile2d", 16});
    FAIL() << "tile2d of a reduction";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("does not apply to 'B' (1 spatial and 1 reduction loops)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(schedule_loops_for_cpu(rows, {"rfactor", 0}), UserError);
}

}  // namespace
}  // namespace tessera::cpu
