//===- tests/cpu/CpuScheduleTest.cpp - The CPU target -----------------------===//
//
// cpu/CpuArch.h and cpu/CpuSchedule.h: the host read back sensibly, presets
// and their refusal; a matmul (symbolic sizes, as TVM prints it; a batched
// one) tiled by every candidate config gives the same bits as the function
// as written (each output still sums its terms in k order) at sizes no tile
// divides, with the loops marked parallel, unrolled and vectorized; other
// functions are left as they are, with the reason; configs are checked.
//
//===----------------------------------------------------------------------===//
#include "tessera/cpu/CpuSchedule.h"

#include <gtest/gtest.h>

#include <cstring>

#include <fmt/format.h>

#include "CpuTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/ir/Functor.h"
#include "tessera/runtime/Interpreter.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Error.h"

namespace tessera::cpu {
namespace {

const char *kMatmul = R"(
# from tvm.script import tir as T

@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle) -> None:
    T.func_attr({"tir.noalias": True})
    m, n, k = T.int32(), T.int32(), T.int32()
    A = T.match_buffer(a, (m, k), "float32")
    B = T.match_buffer(b, (k, n), "float32")
    C = T.match_buffer(c, (m, n), "float32")
    for i, j, r in T.grid(m, n, k):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            T.reads(A[v_i, v_r], B[v_r, v_j])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_r] * B[v_r, v_j]
)";

const char *kBatched = R"(
@T.prim_func
def bmm(A: T.Buffer((3, 9, 20), "float32"), B: T.Buffer((3, 20, 35), "float32"), C: T.Buffer((3, 9, 35), "float32")):
    for b, i, j, k in T.grid(3, 9, 35, 20):
        with T.block("matmul"):
            v_b, v_i, v_j, v_k = T.axis.remap("SSSR", [b, i, j, k])
            with T.init():
                C[v_b, v_i, v_j] = T.float32(0.0)
            C[v_b, v_i, v_j] = C[v_b, v_i, v_j] + A[v_b, v_i, v_k] * B[v_b, v_k, v_j]
)";

const char *kSoftmaxRow = R"(
@T.prim_func
def main(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4, 16), "float32")):
    S = T.alloc_buffer((4,), "float32")
    for i, k in T.grid(4, 16):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                S[vi] = T.float32(0)
            S[vi] = S[vi] + T.exp(A[vi, vk])
    for i, k in T.grid(4, 16):
        with T.block("norm"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = T.exp(A[vi, vk]) / S[vi]
)";

using test::expect_same_bits;
using test::loop_kinds;

TEST(CpuArch, TheHostAndThePresets) {
  CpuArch host = CpuArch::detect();
  EXPECT_GE(host.cores, 1);
  EXPECT_TRUE(host.vector_bits == 128 || host.vector_bits == 256 || host.vector_bits == 512) << host.str();
  EXPECT_GT(host.l1d_bytes, 0);
  EXPECT_GE(host.l2_bytes, host.l1d_bytes);
  EXPECT_EQ(CpuArch::by_name("ci").str(), "ci: 2 cores, 512-bit vectors, L1d 32 KiB, L2 1 MiB, L3 32 MiB");
  EXPECT_EQ(CpuArch::by_name("ci").lanes(4), 16);
  EXPECT_EQ(CpuArch::by_name("host").cores, host.cores);
  try {
    CpuArch::by_name("m3");
    FAIL() << "a preset m3";
  } catch (const UserError &e) {
    EXPECT_STREQ(e.what(), "unknown CPU 'm3' (CPUs: host, ci)");
  }
}

TEST(CpuSchedule, EveryMatmulTilingGivesTheSameBitsAtSizesNoTileDivides) {
  ir::PrimFunc f = script::parse_func(kMatmul);
  const CpuArch ci = CpuArch::by_name("ci");
  std::vector<CpuMatmulConfig> configs = cpu_matmul_candidates(f, ci);
  ASSERT_GE(configs.size(), 8u);
  for (const CpuMatmulConfig &c : configs) {
    SCOPED_TRACE(c.str());
    EXPECT_EQ(c.tile_n % ci.lanes(4), 0);
    EXPECT_LE(c.tile_m * c.tile_n / ci.lanes(4), 28);  // the C tile fits the registers
    CpuSchedule s = schedule_for_cpu(f, ci, c);
    ASSERT_EQ(s.kind, "matmul");
    EXPECT_EQ(loop_kinds(s.func).front(), "parallel");
    std::vector<std::string> kinds = loop_kinds(s.func);
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), "unroll"), kinds.end());
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), "vectorized"), kinds.end());
    expect_same_bits(f, s.func, {{"m", 13}, {"n", 37}, {"k", 300}});
  }
  // K below the step and an empty K (the init still writes zeros).
  CpuSchedule s = schedule_for_cpu(f, ci, CpuMatmulConfig{4, 32, 256});
  expect_same_bits(f, s.func, {{"m", 5}, {"n", 3}, {"k", 7}});
  expect_same_bits(f, s.func, {{"m", 5}, {"n", 3}, {"k", 0}});
}

/// The matmul with B stored N x K ("nt"), constant sizes.
const char *kMatmulNT = R"(
@T.prim_func
def main(A: T.Buffer((19, 40), "float32"), B: T.Buffer((64, 40), "float32"), C: T.Buffer((19, 64), "float32")):
    for i, j, k in T.grid(19, 64, 40):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
)";

TEST(CpuSchedule, PackingBLaysItOutInPanelsAndKeepsTheBits) {
  const CpuArch ci = CpuArch::by_name("ci");
  // B as K x N (the symbolic matmul at constant sizes) and as N x K.
  ir::PrimFunc nn = analysis::specialize(script::parse_func(kMatmul), {{"m", 13}, {"n", 48}, {"k", 30}});
  ir::PrimFunc nt = script::parse_func(kMatmulNT);
  for (const ir::PrimFunc &f : {nn, nt}) {
    std::vector<CpuMatmulConfig> configs = cpu_matmul_candidates(f, ci);
    const auto packed = std::count_if(configs.begin(), configs.end(), [](const CpuMatmulConfig &c) { return c.pack_b; });
    EXPECT_GT(packed, 0);
    for (const CpuMatmulConfig &c : configs) {
      if (!c.pack_b) continue;
      SCOPED_TRACE(c.str());
      const int64_t n = f.same_as(nn) ? 48 : 64, k = f.same_as(nn) ? 30 : 40;
      EXPECT_EQ(n % c.tile_n, 0);
      CpuSchedule s = schedule_for_cpu(f, ci, c);
      const std::string text = script::print(s.func);
      EXPECT_NE(text.find(fmt::format("B_global = T.alloc_buffer(({}, {}, {}))", n / c.tile_n, k, c.tile_n)),
                std::string::npos)
          << text;
      expect_same_bits(f, s.func, {});
    }
  }
  // N not a multiple of the panel, or symbolic: refused, with the reason.
  try {
    schedule_for_cpu(nn, ci, CpuMatmulConfig{4, 32, 0, true});
    FAIL() << "pack_b with N = 48 and tile_n = 32";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("N extent (48) is a constant multiple of tile_n"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(schedule_for_cpu(script::parse_func(kMatmul), ci, CpuMatmulConfig{4, 16, 0, true}), UserError);
  for (const CpuMatmulConfig &c : cpu_matmul_candidates(script::parse_func(kMatmul), ci)) EXPECT_FALSE(c.pack_b);
}

TEST(CpuSchedule, RowBlocksPerCoreWithKStepsOutsideKeepTheBits) {
  const CpuArch ci = CpuArch::by_name("ci");
  ir::PrimFunc f = analysis::specialize(script::parse_func(kMatmul), {{"m", 256}, {"n", 48}, {"k", 300}});
  std::vector<CpuMatmulConfig> configs = cpu_matmul_candidates(f, ci);
  const auto blocked =
      std::count_if(configs.begin(), configs.end(), [](const CpuMatmulConfig &c) { return c.tile_mc > 0; });
  EXPECT_EQ(blocked, 4) << "64 and 128 rows, tiles of 8 and 4 rows";
  for (const CpuMatmulConfig &c : configs) {
    if (c.tile_mc == 0) continue;
    SCOPED_TRACE(c.str());
    EXPECT_EQ(c.tile_k, 256);
    EXPECT_EQ(CpuMatmulConfig::parse(c.str()).tile_mc, c.tile_mc);
    CpuSchedule s = schedule_for_cpu(f, ci, c);
    std::vector<std::string> kinds = loop_kinds(s.func);
    EXPECT_EQ(kinds.front(), "parallel");
    // The K step loop right inside the parallel row blocks.
    const std::string text = script::print(s.func);
    EXPECT_NE(text.find(fmt::format("for i_0 in T.parallel({}):", 256 / c.tile_mc)), std::string::npos) << text;
    expect_same_bits(f, s.func, {});
  }
  try {
    schedule_for_cpu(f, ci, CpuMatmulConfig{8, 32, 256, false, 60});
    FAIL() << "tile_mc 60 with tile_m 8";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("tile_mc must be a multiple of tile_m"), std::string::npos) << e.what();
  }
}

TEST(CpuSchedule, ABatchedMatmulRunsItsBatchAndRowsOverTheCores) {
  ir::PrimFunc f = script::parse_func(kBatched);
  CpuSchedule s = schedule_for_cpu(f, CpuArch::by_name("ci"), CpuMatmulConfig{2, 16, 8});
  ASSERT_EQ(s.kind, "matmul");
  EXPECT_EQ(loop_kinds(s.func).front(), "parallel");
  expect_same_bits(f, s.func, {});
}

TEST(CpuSchedule, OtherFunctionsStayAsTheyAreWithTheReason) {
  ir::PrimFunc f = script::parse_func(kSoftmaxRow);
  EXPECT_TRUE(cpu_matmul_candidates(f, CpuArch::by_name("ci")).empty());
  CpuSchedule s = schedule_for_cpu(f, CpuArch::by_name("ci"));
  EXPECT_EQ(s.kind, "plain");
  EXPECT_TRUE(s.func.same_as(f));
  EXPECT_NE(s.why.find("no matmul to tile"), std::string::npos) << s.why;
}

TEST(CpuSchedule, ConfigsAreChecked) {
  EXPECT_EQ(CpuMatmulConfig::parse(R"({"tile_m": 8, "tile_n": 64})").str(), R"({"tile_m":8,"tile_n":64,"tile_k":0})");
  EXPECT_EQ(CpuMatmulConfig::parse(R"({"tile_m": 8, "tile_n": 64, "pack_b": true})").str(),
            R"({"tile_m":8,"tile_n":64,"tile_k":0,"pack_b":true})");
  for (auto [text, message] :
       {std::pair{"{", "not valid JSON"}, {"[1]", "expected an object"},
        {R"({"tile_m": "4"})", "'tile_m' must be an integer"}, {R"({"tile_q": 4})", "unknown field 'tile_q'"},
        {R"({"pack_b": 1})", "'pack_b' must be true or false"}}) {
    try {
      CpuMatmulConfig::parse(text);
      FAIL() << text;
    } catch (const UserError &e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(schedule_for_cpu(script::parse_func(kMatmul), CpuArch::by_name("ci"), CpuMatmulConfig{0, 16, 0}),
               UserError);
}

}  // namespace
}  // namespace tessera::cpu
