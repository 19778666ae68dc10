//===- ArchValidationTest.cpp - Bad arch descriptions and their messages ---===//
//
// One test per kind of problem; each checks the JSON path and the message.
// The documents are a valid preset with one thing broken.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tessera/arch/Arch.h"

namespace tessera {
namespace {

ArchJson valid() { return Arch::by_name("h100_sxm").to_json(); }

/// The problems from_json reports for `j` (empty when it is valid).
std::vector<ArchProblem> problems_of(const ArchJson &j) {
  try {
    Arch::from_json(j, "arch/h100_sxm.json");
  } catch (const ArchError &e) {
    EXPECT_EQ(e.source(), "arch/h100_sxm.json");
    return e.problems();
  }
  return {};
}

/// Expects exactly one problem, at `path`, whose message contains `fragment`.
void expect_one_problem(const ArchJson &j, const std::string &path, const std::string &fragment) {
  std::vector<ArchProblem> ps = problems_of(j);
  ASSERT_EQ(ps.size(), 1u) << (ps.empty() ? "no problem" : ps[0].path + ": " + ps[0].message);
  EXPECT_EQ(ps[0].path, path);
  EXPECT_NE(ps[0].message.find(fragment), std::string::npos) << ps[0].message;
}

TEST(ArchValidation, ValidDocumentHasNoProblems) { EXPECT_TRUE(problems_of(valid()).empty()); }

TEST(ArchValidation, MistypedValueNamesFilePathAndValue) {
  ArchJson j = valid();
  j["memory"]["l2_bytes"] = "50MB";
  try {
    Arch::from_json(j, "arch/h100_sxm.json");
    FAIL() << "expected an ArchError";
  } catch (const UserError &e) {  // an ArchError is a UserError
    EXPECT_STREQ(e.what(), "arch/h100_sxm.json: /memory/l2_bytes: expected a positive integer, got \"50MB\"");
  }
}

TEST(ArchValidation, MissingField) {
  ArchJson j = valid();
  j["limits"].erase("smem_per_block_optin_bytes");
  expect_one_problem(j, "/limits/smem_per_block_optin_bytes", "missing (expected a positive integer)");
}

TEST(ArchValidation, MissingGroup) {
  ArchJson j = valid();
  j.erase("memory");
  std::vector<ArchProblem> ps = problems_of(j);
  ASSERT_FALSE(ps.empty());
  EXPECT_EQ(ps[0].path, "/memory");
  EXPECT_EQ(ps[0].message, "missing (expected an object)");
  // The group's absence is reported once, not once per field inside it.
  for (const ArchProblem &p : ps) EXPECT_EQ(p.path.rfind("/memory/", 0), std::string::npos) << p.path;
}

TEST(ArchValidation, OutOfRangeInteger) {
  ArchJson j = valid();
  j["limits"]["max_regs_per_thread"] = 300;
  expect_one_problem(j, "/limits/max_regs_per_thread", "expected an integer in [1, 255], got 300");
}

TEST(ArchValidation, FractionalIntegerAndNegativeNumber) {
  ArchJson j = valid();
  j["compute"]["sm_count"] = 132.5;
  expect_one_problem(j, "/compute/sm_count", "got 132.5");
  j = valid();
  j["memory"]["dram_bandwidth_gbps"] = -1;
  expect_one_problem(j, "/memory/dram_bandwidth_gbps", "expected a positive number, got -1");
}

TEST(ArchValidation, WrongTypeBooleanAndString) {
  ArchJson j = valid();
  j["tensor_cores"]["wgmma"] = "yes";
  expect_one_problem(j, "/tensor_cores/wgmma", "expected true or false, got \"yes\"");
  j = valid();
  j["sources"]["memory"] = "";
  expect_one_problem(j, "/sources/memory", "expected a non-empty string");
}

TEST(ArchValidation, UnknownFieldSuggestsTheNearestName) {
  ArchJson j = valid();
  j["memory"]["l2_byte"] = 1;
  j["memory"].erase("l2_bytes");
  std::vector<ArchProblem> ps = problems_of(j);
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].path, "/memory/l2_bytes");  // missing
  EXPECT_EQ(ps[1].path, "/memory/l2_byte");
  EXPECT_EQ(ps[1].message, "unknown field (did you mean 'l2_bytes'?)");
}

TEST(ArchValidation, UnknownTopLevelField) {
  ArchJson j = valid();
  j["bandwidth"] = {750, 12080};
  expect_one_problem(j, "/bandwidth", "unknown field");
}

TEST(ArchValidation, BadNameAndAlias) {
  ArchJson j = valid();
  j["name"] = "H100 SXM";
  j["aliases"] = {"ok_alias", "Bad-Alias"};
  std::vector<ArchProblem> ps = problems_of(j);
  ASSERT_EQ(ps.size(), 2u);
  EXPECT_EQ(ps[0].path, "/name");
  EXPECT_NE(ps[0].message.find("lower-case letters, digits and '_'"), std::string::npos);
  EXPECT_EQ(ps[1].path, "/aliases/1");
  EXPECT_EQ(ps[1].message, "expected lower-case letters, digits and '_', got \"Bad-Alias\"");
}

TEST(ArchValidation, SchemaVersion) {
  ArchJson j = valid();
  j["schema_version"] = 2;
  expect_one_problem(j, "/schema_version", "unsupported schema version 2 (this tessera reads 1)");
}

TEST(ArchValidation, MmaShapeIsNamedByItsIndex) {
  ArchJson j = valid();
  j["tensor_cores"]["mma"][0]["shapes"][1] = "16x8x8";
  expect_one_problem(j, "/tensor_cores/mma/0/shapes/1", "expected a shape such as \"m16n8k16\", got \"16x8x8\"");
  j = valid();
  j["tensor_cores"]["mma"][2]["shapes"] = ArchJson::array();
  expect_one_problem(j, "/tensor_cores/mma/2/shapes", "expected at least one shape");
}

TEST(ArchValidation, MmaSyncFractionIsAShareOfThePeak) {
  // sm_90 presets derate mma.sync below the wgmma-class peaks; every other
  // card leaves the field out (1: mma.sync is its native path).
  Arch h100 = Arch::by_name("h100_sxm"), a100 = Arch::by_name("a100");
  const MmaSupport *f16 = h100.find_mma("float16", "float32");
  ASSERT_NE(f16, nullptr);
  EXPECT_DOUBLE_EQ(h100.tensor_cores.mma_sync_fraction, 0.63);
  EXPECT_DOUBLE_EQ(h100.mma_sync_peak_tops(*f16), f16->peak_tops * 0.63);
  EXPECT_LT(h100.mma_sync_peak_tops(*f16), f16->peak_tops);
  EXPECT_DOUBLE_EQ(a100.tensor_cores.mma_sync_fraction, 1);
  EXPECT_FALSE(a100.to_json()["tensor_cores"].contains("mma_sync_fraction"));
  EXPECT_EQ(Arch::from_json(h100.to_json(), "round trip"), h100);
  ArchJson j = valid();
  j["tensor_cores"]["mma_sync_fraction"] = 1.5;
  expect_one_problem(j, "/tensor_cores/mma_sync_fraction", "expected a share of the peak in (0, 1]");
  j["tensor_cores"]["mma_sync_fraction"] = 0;
  expect_one_problem(j, "/tensor_cores/mma_sync_fraction", "");
}

TEST(ArchValidation, MmaDtypesAndAccumulators) {
  ArchJson j = valid();
  j["tensor_cores"]["mma"][0]["dtype"] = "fp16";
  expect_one_problem(j, "/tensor_cores/mma/0/dtype", "unknown tensor-core dtype \"fp16\" (known: float16, bfloat16");
  j = valid();
  j["tensor_cores"]["mma"][4]["accumulator"] = "float32";  // int8 -> float32
  expect_one_problem(j, "/tensor_cores/mma/4/accumulator", "int8 cannot accumulate in \"float32\" (allowed: int32)");
  j = valid();
  j["tensor_cores"]["mma"].push_back(j["tensor_cores"]["mma"][0]);
  expect_one_problem(j, "/tensor_cores/mma/7", "duplicate entry for float16 -> float32 (also /tensor_cores/mma/0)");
  j = valid();
  j["tensor_cores"]["mma"][1] = "float16";
  expect_one_problem(j, "/tensor_cores/mma/1", "expected an object, got \"float16\"");
}

TEST(ArchValidation, SharedMemoryOrdering) {
  ArchJson j = valid();
  j["limits"]["smem_per_block_optin_bytes"] = 40960;
  expect_one_problem(j, "/limits/smem_per_block_bytes",
                     "49152 is more than /limits/smem_per_block_optin_bytes (40960)");
  j = valid();
  j["limits"]["smem_per_sm_bytes"] = 232448;  // no room for the 1 KB reserved per block
  expect_one_problem(j, "/limits/smem_per_block_optin_bytes", "more than /limits/smem_per_sm_bytes (232448)");
}

TEST(ArchValidation, ThreadAndRegisterRelations) {
  ArchJson j = valid();
  j["limits"]["max_threads_per_block"] = 1000;
  expect_one_problem(j, "/limits/max_threads_per_block", "1000 is not a multiple of the warp size (32)");
  j = valid();
  j["limits"]["regs_per_block"] = 131072;
  expect_one_problem(j, "/limits/regs_per_block", "131072 is more than /limits/regs_per_sm (65536)");
  j = valid();
  j["compute"]["warp_size"] = 48;
  std::vector<ArchProblem> ps = problems_of(j);
  ASSERT_FALSE(ps.empty());
  EXPECT_EQ(ps[0].path, "/compute/warp_size");
}

TEST(ArchValidation, DerivedSharedMemoryBandwidthMustAgree) {
  ArchJson j = valid();
  j["memory"]["smem_bandwidth_gbps"] = 12080;
  expect_one_problem(j, "/memory/smem_bandwidth_gbps", "disagrees with smem_banks x smem_bank_bytes x boost clock");
}

TEST(ArchValidation, EveryProblemIsReportedAtOnce) {
  ArchJson j = valid();
  j["memory"]["l2_bytes"] = "50MB";
  j["limits"]["max_regs_per_thread"] = 0;
  j["compute"]["sm_cout"] = 132;  // a typo: sm_count is missing and sm_cout unknown
  j["compute"].erase("sm_count");
  j["sources"].erase("limits");
  std::vector<ArchProblem> ps = problems_of(j);
  std::vector<std::string> paths;
  for (const ArchProblem &p : ps) paths.push_back(p.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"/compute/sm_count", "/compute/sm_cout", "/memory/l2_bytes",
                                             "/limits/max_regs_per_thread", "/sources/limits"}));
  try {
    Arch::from_json(j, "x.json");
  } catch (const ArchError &e) {
    std::string msg = e.what();
    EXPECT_EQ(std::count(msg.begin(), msg.end(), '\n'), 4) << msg;
    EXPECT_EQ(msg.rfind("x.json: /compute/sm_count: missing", 0), 0u) << msg;
  }
}

TEST(ArchValidation, NotAnObjectAndInvalidJsonText) {
  expect_one_problem(ArchJson::array(), "", "expected a JSON object, got []");
  try {
    Arch::parse("{\n  \"name\": \"x\",,\n}", "broken.json");
    FAIL() << "expected an ArchError";
  } catch (const ArchError &e) {
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_EQ(e.problems()[0].path, "");
    EXPECT_NE(e.problems()[0].message.find("invalid JSON: parse error at line 2"), std::string::npos)
        << e.problems()[0].message;
    EXPECT_EQ(std::string(e.what()).rfind("broken.json: invalid JSON", 0), 0u) << e.what();
  }
}

TEST(ArchValidation, MissingFileNamesThePath) {
  try {
    Arch::load("/nonexistent/gpu.json");
    FAIL() << "expected an ArchError";
  } catch (const ArchError &e) {
    EXPECT_STREQ(e.what(), "/nonexistent/gpu.json: cannot read the file");
  }
}

TEST(ArchValidation, DetectedGroupIsValidatedToo) {
  ArchJson j = valid();
  j["detected"] = {{"device_name", "NVIDIA H100"}, {"ordinal", 0}, {"base_preset", "h100_sxm"},
                   {"from_device", {"/compute/sm_count"}}, {"rescaled", ArchJson::array()}};
  Arch a = Arch::from_json(j, "detected.json");
  ASSERT_TRUE(a.detected.has_value());
  EXPECT_EQ(a.detected->from_device, std::vector<std::string>{"/compute/sm_count"});
  EXPECT_EQ(Arch::from_json(a.to_json(), "again"), a);
  j["detected"]["ordinal"] = -1;
  expect_one_problem(j, "/detected/ordinal", "expected an integer in [0, 65536], got -1");
}

}  // namespace
}  // namespace tessera
