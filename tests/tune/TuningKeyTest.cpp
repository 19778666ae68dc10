//===- tests/tune/TuningKeyTest.cpp - What makes two tuning keys equal -------===//
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "TuneTestUtil.h"

#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/NVRTC.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"
#include "tessera/support/Version.h"
#include "tessera/tune/TuningKey.h"

namespace tessera::test {
namespace {

using tuning::Toolchain;
using tuning::TuningKey;

const Toolchain kToolchain{.nvrtc = "13.0", .driver = "13.0", .tessera = "0.1.0"};

TuningKey key_of(const AddSpec &spec, const char *arch = "h100") {
  return TuningKey::of(add_func(spec), Arch::by_name(arch), kToolchain);
}

TEST(TuningKey, EqualForTheSameFunctionParsedTwiceAndReprinted) {
  ir::PrimFunc once = add_func(), twice = add_func();
  ASSERT_FALSE(once.same_as(twice));
  Arch h100 = Arch::by_name("h100");
  EXPECT_EQ(TuningKey::of(once, h100, kToolchain), TuningKey::of(twice, h100, kToolchain));
  ir::PrimFunc reprinted = script::parse_func(script::print(once));
  EXPECT_EQ(TuningKey::of(reprinted, h100, kToolchain), TuningKey::of(once, h100, kToolchain));
}

TEST(TuningKey, NamesDoNotMatter) {
  AddSpec renamed{
      .func = "my_kernel", .a = "X", .b = "Y", .c = "Z", .i = "p", .j = "q", .vi = "u", .vj = "w"};
  EXPECT_EQ(key_of(renamed), key_of({}));
  // The attribute namespace's two spellings mean the same.
  EXPECT_EQ(key_of({.noalias = "tirx.noalias"}), key_of({}));
}

TEST(TuningKey, ShapeDtypeAndComputationChangeTheWorkload) {
  std::string base = key_of({}).workload;
  EXPECT_NE(key_of({.rows = 32, .cols = 16}).workload, base);  // transposed shape
  EXPECT_NE(key_of({.rows = 16, .cols = 33}).workload, base);
  EXPECT_NE(key_of({.dtype = "float16"}).workload, base);
  EXPECT_NE(key_of({.op = "*"}).workload, base);
  EXPECT_EQ(key_of({}).workload, base);
}

TEST(TuningKey, ArchAndToolchainAreFieldsOfTheKey) {
  TuningKey h100 = key_of({}, "h100"), a100 = key_of({}, "a100");
  EXPECT_EQ(h100.workload, a100.workload);
  EXPECT_EQ(h100.arch, Arch::by_name("h100").fingerprint());
  EXPECT_NE(h100, a100);

  ir::PrimFunc f = add_func();
  Arch arch = Arch::by_name("h100");
  TuningKey base = TuningKey::of(f, arch, kToolchain);
  for (Toolchain other : {Toolchain{"12.8", "13.0", "0.1.0"}, Toolchain{"13.0", "none", "0.1.0"},
                          Toolchain{"13.0", "13.0", "0.2.0"}}) {
    TuningKey k = TuningKey::of(f, arch, other);
    EXPECT_EQ(k.workload, base.workload);
    EXPECT_NE(k, base) << k.str();
  }
}

TEST(TuningKey, WorkloadIsSixteenHexDigitsAndToJsonHasEveryField) {
  TuningKey k = key_of({});
  EXPECT_EQ(k.workload.size(), 16u);
  EXPECT_EQ(k.workload.find_first_not_of("0123456789abcdef"), std::string::npos) << k.workload;
  tuning::Json j = k.to_json();
  EXPECT_EQ(j, (tuning::Json{{"workload", k.workload},
                           {"arch", "h100_sxm/sm_90/132sm"},
                           {"nvrtc", "13.0"},
                           {"driver", "13.0"},
                           {"tessera", "0.1.0"}}));
  EXPECT_EQ(k.str(), k.workload + " h100_sxm/sm_90/132sm nvrtc 13.0 driver 13.0 tessera 0.1.0");
}

TEST(TuningKey, SymbolicShapesAreRefusedByName) {
  try {
    key_of({.symbolic_rows = true});
    FAIL() << "a symbolic function got a key";
  } catch (const UserError &e) {
    EXPECT_NE(std::string(e.what()).find("symbolic shapes (rows)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("analysis::specialize"), std::string::npos) << e.what();
  }
}

TEST(TuningKey, NormalizeRenamesAndDropsTheGlobalSymbol) {
  ir::PrimFunc n = tuning::normalize_workload(add_func({.func = "k", .noalias = "tirx.noalias"}));
  EXPECT_EQ(n.name(), "main");
  EXPECT_EQ(n.attrs(), (ir::Annotations{{"tir.noalias", true}}));
}

TEST(TuningKey, SummaryListsTheBuffersForPeople) {
  tuning::Json s = tuning::workload_summary(add_func({.func = "k", .dtype = "float16", .rows = 4, .cols = 8}));
  tuning::Json buffer = {{"name", "A"}, {"dtype", "float16"}, {"shape", {4, 8}}};
  EXPECT_EQ(s["name"], "k");
  ASSERT_EQ(s["buffers"].size(), 3u);
  EXPECT_EQ(s["buffers"][0], buffer);
  EXPECT_EQ(s["buffers"][2]["name"], "C");
  // A symbolic dimension is written by name.
  EXPECT_EQ(tuning::workload_summary(add_func({.symbolic_rows = true}))["buffers"][0]["shape"],
            (tuning::Json{"rows", 32}));
}

TEST(TuningKey, CurrentToolchainNamesThisBuild) {
  Toolchain t = Toolchain::current();
  EXPECT_EQ(t.tessera, TESSERA_PROJECT_VERSION);
  EXPECT_EQ(std::string(tessera::version()), TESSERA_PROJECT_VERSION);
  EXPECT_EQ(t.nvrtc, runtime::nvrtc_available() ? runtime::nvrtc_version() : "none");
  int driver = runtime::driver_version();
  EXPECT_EQ(t.driver, driver > 0 ? fmt::format("{}.{}", driver / 1000, driver % 1000 / 10) : "none");
  // "12 hex digits[-dirty]", or empty outside a git checkout.
  std::string git(tessera::git_hash());
  if (!git.empty()) {
    std::string hex = git.substr(0, 12);
    EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos) << git;
    EXPECT_TRUE(git.size() == 12 || git.substr(12) == "-dirty") << git;
  }
}

}  // namespace
}  // namespace tessera::test
