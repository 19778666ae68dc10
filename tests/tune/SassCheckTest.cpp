//===- tests/tune/SassCheckTest.cpp - Configs held to their machine code ----===//
//
// expected_access_bytes (what a "vector" config asks of the global accesses)
// and sass_warning (its message when the SASS summary falls short). The
// summaries are parsed from small listings: no toolkit and no cuobjdump.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "tessera/script/Parser.h"
#include "tessera/tune/SassCheck.h"

namespace tessera::tuning {
namespace {

using Json = nlohmann::ordered_json;

/// A copy from `in` to `out` dtypes, plus an optional third parameter.
ir::PrimFunc copy(const std::string &in, const std::string &out, const std::string &extra = "") {
  std::string params = "A: T.Buffer((64,), \"" + in + "\"), B: T.Buffer((64,), \"" + out + "\")";
  if (!extra.empty()) params += ", C: T.Buffer((8,), \"" + extra + "\")";
  std::string text = "@T.prim_func\ndef f(" + params +
                     "):\n    for i in range(64):\n        with T.block(\"B\"):\n"
                     "            vi = T.axis.spatial(64, i)\n            B[vi] = T.Cast(\"" +
                     out + "\", A[vi])\n";
  return script::parse_module(text).funcs.at(0);
}

runtime::SassSummary summary(const std::vector<std::string> &instructions) {
  std::string text = "\tcode for sm_90\n\t\tFunction : k\n";
  for (const std::string &i : instructions) text += "        /*0000*/                   " + i + " ;\n";
  return runtime::parse_sass(text).at(0);
}

TEST(SassCheck, ExpectedWidthIsVectorTimesTheNarrowestElement) {
  Json v8 = {{"rule", "elementwise"}, {"vector", 8}};
  EXPECT_EQ(expected_access_bytes(copy("float16", "float16"), v8), 16);
  // The narrowest parameter element decides: float16 in, float32 out.
  EXPECT_EQ(expected_access_bytes(copy("float16", "float32"), {{"vector", 4}}), 8);
  EXPECT_EQ(expected_access_bytes(copy("int8", "float32"), {{"vector", 4}}), 4);
  // At most 16 bytes: no single instruction moves more on these GPUs.
  EXPECT_EQ(expected_access_bytes(copy("float32", "float32"), {{"vector", 8}}), 16);
  EXPECT_EQ(expected_access_bytes(copy("float16", "float16"), {{"vector", 128}}), 16);
  // Packed int4 weights are int32 words.
  EXPECT_EQ(expected_access_bytes(copy("uint32", "uint32"), {{"vector", 2}}), 8);
  // A bool parameter is neither floating-point nor integer.
  EXPECT_EQ(expected_access_bytes(copy("float32", "float32", "bool"), {{"vector", 2}}), 8);
  // Nothing asked: no "vector", vector 1, or not an integer.
  EXPECT_EQ(expected_access_bytes(copy("float16", "float16"), {{"rule", "gemv"}}), 0);
  EXPECT_EQ(expected_access_bytes(copy("float16", "float16"), {{"vector", 1}}), 0);
  EXPECT_EQ(expected_access_bytes(copy("float16", "float16"), {{"vector", "8"}}), 0);
  EXPECT_EQ(expected_access_bytes(copy("float16", "float16"), Json::array()), 0);
}

TEST(SassCheck, WarningWhenNeitherLoadsNorStoresAreAsWide) {
  ir::PrimFunc f = copy("float16", "float16");
  Json v8 = {{"rule", "elementwise"}, {"vector", 8}};
  runtime::SassSummary narrow =
      summary({"LDG.E.U16.CONSTANT R2, desc[UR4][R4.64]", "STG.E.U16 desc[UR4][R2.64], R2"});
  EXPECT_EQ(sass_warning(f, v8, narrow),
            "sass: asks for vector 8 (16 bytes) but its widest global access is 2 bytes");
  runtime::SassSummary wide =
      summary({"LDG.E.128.CONSTANT R4, desc[UR4][R4.64]", "STG.E.U16 desc[UR4][R2.64], R2"});
  EXPECT_EQ(sass_warning(f, v8, wide), "");
  EXPECT_EQ(sass_warning(f, {{"vector", 1}}, narrow), "");
  EXPECT_EQ(sass_warning(f, {{"vector", 2}}, narrow),
            "sass: asks for vector 2 (4 bytes) but its widest global access is 2 bytes");
}

TEST(SassCheck, AWgmmaConfigAsksForWarpgroupMma) {
  ir::PrimFunc f = copy("float16", "float16");
  Json hopper = {{"rule", "matmul_tensor_core"}, {"wgmma", true}};
  runtime::SassSummary mma_sync = summary({"HMMA.16816.F32 R24, R12, R8, R24"});
  EXPECT_EQ(sass_warning(f, hopper, mma_sync), "sass: asks for wgmma but holds no HGMMA or IGMMA");
  runtime::SassSummary gmma = summary({"HGMMA.64x64x16.F32 R24, gdesc[UR4], R24"});
  EXPECT_EQ(sass_warning(f, hopper, gmma), "");
  EXPECT_EQ(sass_warning(f, {{"rule", "matmul_tensor_core"}}, mma_sync), "");
}

}  // namespace
}  // namespace tessera::tuning
