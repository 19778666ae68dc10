//===- ArchPresetTest.cpp - The GPU descriptions in arch/ ------------------===//
//
// Every preset loads, validates and round-trips through JSON exactly; each
// satisfies the relations a policy relies on; lookup by name and alias.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <map>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "tessera/arch/Arch.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;

const std::vector<Arch> &all_presets() {
  static const std::vector<Arch> presets = Arch::presets();
  return presets;
}

/// JSON with objects compared regardless of field order (and 3 == 3.0).
nlohmann::json unordered(const ArchJson &j) { return nlohmann::json::parse(j.dump()); }

TEST(ArchPresets, EveryKnownGpuHasOneValidFile) {
  std::vector<std::string> names;
  for (const Arch &a : all_presets()) names.push_back(a.name);
  std::vector<std::string> expected = {"a10",  "a100_sxm4_80gb", "h100_pcie", "h100_sxm", "h200",
                                       "l4",   "l40s",           "rtx3090",   "rtx4090"};
  EXPECT_EQ(names, expected);
  // Every file in the source tree's arch/ is one of them (and loads on its own).
  int files = 0;
  for (const fs::directory_entry &e : fs::directory_iterator(TESSERA_ARCH_SOURCE_DIR))
    if (e.path().extension() == ".json") {
      ++files;
      EXPECT_NO_THROW(Arch::load(e.path().string())) << e.path();
    }
  EXPECT_EQ(files, static_cast<int>(expected.size()));
}

TEST(ArchPresets, TheCompiledInPresetsAreTheFiles) {
  // What a program linked against an installed tessera finds with no data
  // folder: arch/*.json as they were at build time, each equal to its file.
  std::vector<Arch> builtin = Arch::builtin_presets();
  ASSERT_EQ(builtin.size(), all_presets().size());
  for (size_t i = 0; i < builtin.size(); ++i) {
    SCOPED_TRACE(builtin[i].name);
    EXPECT_EQ(builtin[i], all_presets()[i]);
    EXPECT_EQ(builtin[i], Arch::load(std::string(TESSERA_ARCH_SOURCE_DIR) + "/" + builtin[i].name + ".json"));
  }
}

TEST(ArchPresets, JsonRoundTripIsExact) {
  for (const Arch &a : all_presets()) {
    SCOPED_TRACE(a.name);
    EXPECT_EQ(Arch::from_json(a.to_json(), "round trip"), a);
    EXPECT_EQ(Arch::parse(a.to_json().dump(2), "round trip"), a);
    // to_json writes back everything the file says, and nothing else.
    std::ifstream in(std::string(TESSERA_ARCH_SOURCE_DIR) + "/" + a.name + ".json");
    nlohmann::json file = nlohmann::json::parse(in);
    EXPECT_EQ(unordered(a.to_json()), file);
  }
}

TEST(ArchPresets, LimitsAreConsistent) {
  for (const Arch &a : all_presets()) {
    SCOPED_TRACE(a.name);
    EXPECT_TRUE(check_arch(a).empty());
    EXPECT_EQ(a.compute.warp_size, 32);
    EXPECT_EQ(a.limits.smem_per_block_bytes, 48 * 1024);
    EXPECT_GT(a.limits.smem_per_block_optin_bytes, a.limits.smem_per_block_bytes);
    EXPECT_EQ(a.max_smem_per_block(), a.limits.smem_per_block_optin_bytes);
    EXPECT_GE(a.limits.smem_per_sm_bytes,
              a.limits.smem_per_block_optin_bytes + a.limits.smem_reserved_per_block_bytes);
    EXPECT_LE(a.limits.max_regs_per_thread, 255);
    EXPECT_LE(a.limits.regs_per_block, a.limits.regs_per_sm);
    EXPECT_LE(a.limits.max_threads_per_block, a.limits.max_threads_per_sm);
    EXPECT_EQ(a.limits.max_threads_per_sm % a.compute.warp_size, 0);
    EXPECT_LT(a.memory.l2_bytes, a.memory.dram_bytes);
    EXPECT_EQ(a.memory.cache_line_bytes % a.memory.sector_bytes, 0);
    EXPECT_NEAR(a.memory.smem_bandwidth_gbps, a.derived_smem_bandwidth_gbps(), 0.1);
    // Shared memory is always faster than DRAM; tensor cores faster than CUDA cores.
    EXPECT_GT(a.memory.smem_bandwidth_gbps, a.memory.dram_bandwidth_gbps);
    ASSERT_NE(a.find_mma("float16", "float32"), nullptr);
    EXPECT_GT(a.find_mma("float16", "float32")->peak_tops, a.compute.peak_fp16_tflops);
  }
}

TEST(ArchPresets, NoV100Leftovers) {
  // Roller's V100 numbers (750 / 12080 GB/s, 80 SMs, 96 KiB) must not survive anywhere.
  for (const Arch &a : all_presets()) {
    SCOPED_TRACE(a.name);
    EXPECT_NE(a.memory.dram_bandwidth_gbps, 750.0);
    EXPECT_NE(a.memory.smem_bandwidth_gbps, 12080.0);
    EXPECT_GE(a.sm_version(), 80);
    EXPECT_GT(a.max_smem_per_block(), 96 * 1024);
  }
}

TEST(ArchPresets, ComputeCapabilityMatchesItsFamily) {
  std::map<std::string, int> expected = {{"a100_sxm4_80gb", 80}, {"a10", 86},      {"rtx3090", 86},
                                         {"l4", 89},             {"rtx4090", 89},  {"l40s", 89},
                                         {"h100_sxm", 90},       {"h100_pcie", 90}, {"h200", 90}};
  for (const Arch &a : all_presets()) EXPECT_EQ(a.sm_version(), expected.at(a.name)) << a.name;
}

TEST(ArchPresets, TensorCoreShapesFollowThePtxIsa) {
  const std::vector<MmaShape> f16 = {{16, 8, 16}, {16, 8, 8}};
  for (const Arch &a : all_presets()) {
    SCOPED_TRACE(a.name);
    for (const char *dtype : {"float16", "bfloat16"}) {
      const MmaSupport *m = a.find_mma(dtype, "float32");
      ASSERT_NE(m, nullptr) << dtype;
      EXPECT_EQ(m->shapes, f16);
    }
    ASSERT_NE(a.find_mma("tfloat32", "float32"), nullptr);
    EXPECT_EQ(a.find_mma("tfloat32", "float32")->shapes.front(), (MmaShape{16, 8, 8}));
    ASSERT_NE(a.find_mma("int8", "int32"), nullptr);
    EXPECT_EQ(a.find_mma("int8", "int32")->shapes.front(), (MmaShape{16, 8, 32}));
    // fp8 from sm_89 on; wgmma and TMA only on sm_90; cp.async on all of sm_80+.
    bool has_fp8 = a.find_mma("float8_e4m3fn", "float32") && a.find_mma("float8_e5m2", "float32");
    EXPECT_EQ(has_fp8, a.sm_version() >= 89);
    EXPECT_EQ(a.tensor_cores.wgmma, a.sm_version() == 90);
    EXPECT_EQ(a.memory.tma, a.sm_version() == 90);
    EXPECT_TRUE(a.memory.cp_async);
  }
}

TEST(ArchPresets, NewerGpusAreFasterWhereTheVendorSaysSo) {
  Arch a100 = Arch::by_name("a100"), h100 = Arch::by_name("h100"), h200 = Arch::by_name("h200");
  Arch a10 = Arch::by_name("a10"), l40s = Arch::by_name("l40s");
  EXPECT_GT(h100.find_mma("float16", "float32")->peak_tops, a100.find_mma("float16", "float32")->peak_tops);
  EXPECT_GT(h100.memory.dram_bandwidth_gbps, a100.memory.dram_bandwidth_gbps);
  EXPECT_GT(h200.memory.dram_bandwidth_gbps, h100.memory.dram_bandwidth_gbps);
  EXPECT_GT(h100.max_smem_per_block(), a100.max_smem_per_block());
  EXPECT_GT(a100.max_smem_per_block(), a10.max_smem_per_block());
  EXPECT_GT(l40s.memory.l2_bytes, a100.memory.l2_bytes);
  EXPECT_TRUE(h100.tensor_cores.wgmma);
  EXPECT_FALSE(a10.tensor_cores.wgmma);
  // GeForce parts accumulate fp16 in fp32 at half the fp16-accumulate rate.
  Arch rtx4090 = Arch::by_name("rtx4090");
  EXPECT_LT(rtx4090.find_mma("float16", "float32")->peak_tops, rtx4090.find_mma("float16", "float16")->peak_tops);
}

TEST(ArchPresets, EveryGroupNamesItsSource) {
  for (const Arch &a : all_presets()) {
    SCOPED_TRACE(a.name);
    // Product facts come from NVIDIA datasheets or whitepapers; limits from the Programming Guide.
    for (const std::string *s : {&a.sources.compute, &a.sources.memory, &a.sources.tensor_cores})
      EXPECT_NE(s->find("NVIDIA"), std::string::npos) << *s;
    EXPECT_NE(a.sources.limits.find("Technical Specifications per Compute Capability"), std::string::npos);
    EXPECT_NE(a.sources.tensor_cores.find("PTX ISA"), std::string::npos);
    EXPECT_NE(a.sources.derived.find("not a vendor figure"), std::string::npos);
  }
}

TEST(ArchPresets, NamesAndAliasesAreUnique) {
  std::set<std::string> seen;
  for (const Arch &a : all_presets()) {
    EXPECT_TRUE(seen.insert(a.name).second) << a.name;
    for (const std::string &alias : a.aliases) EXPECT_TRUE(seen.insert(alias).second) << alias;
  }
}

TEST(ArchHelpers, FlagsFingerprintAndWarps) {
  Arch h100 = Arch::by_name("h100_sxm");
  EXPECT_EQ(h100.sm_version(), 90);
  EXPECT_EQ(h100.arch_flag(), "sm_90");
  EXPECT_EQ(h100.fingerprint(), "h100_sxm/sm_90/132sm");
  EXPECT_EQ(h100.max_smem_per_block(), 227 * 1024);
  EXPECT_EQ(h100.max_warps_per_sm(), 64);
  Arch l4 = Arch::by_name("l4");
  EXPECT_EQ(l4.max_warps_per_sm(), 48);
  EXPECT_EQ(l4.max_smem_per_block(), 99 * 1024);
  EXPECT_EQ(l4.find_mma("float16", "int32"), nullptr);
}

TEST(ArchHelpers, MmaShapeParsesOnlyTheCanonicalSpelling) {
  EXPECT_EQ(MmaShape::parse("m16n8k16"), (MmaShape{16, 8, 16}));
  EXPECT_EQ((MmaShape{64, 256, 16}).str(), "m64n256k16");
  for (const char *bad : {"", "16x8x16", "m16n8", "m16n8k16x", "M16N8K16", "m016n8k16", "m0n8k16", "m-1n8k16"})
    EXPECT_EQ(MmaShape::parse(bad), std::nullopt) << bad;
}

TEST(ArchLookup, NamesAndAliasesIgnoreCaseAndSeparators) {
  EXPECT_EQ(Arch::by_name("h100").name, "h100_sxm");
  EXPECT_EQ(Arch::by_name("H100").name, "h100_sxm");
  EXPECT_EQ(Arch::by_name("H100-SXM5").name, "h100_sxm");
  EXPECT_EQ(Arch::by_name("NVIDIA H100 80GB HBM3").name, "h100_sxm");
  EXPECT_EQ(Arch::by_name("GeForce RTX 4090").name, "rtx4090");
  EXPECT_EQ(Arch::by_name("A100").name, "a100_sxm4_80gb");
  EXPECT_EQ(Arch::by_name("h100_pcie").name, "h100_pcie");
}

TEST(ArchLookup, UnknownNameListsTheKnownOnes) {
  try {
    Arch::by_name("v100");
    FAIL() << "v100 should be unknown";
  } catch (const UserError &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown GPU 'v100'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("h100_sxm (h100, "), std::string::npos) << msg;
    EXPECT_NE(msg.find("rtx4090"), std::string::npos) << msg;
  }
}

TEST(ArchLookup, JsonPathIsLoadedAsAFile) {
  std::string path = std::string(TESSERA_ARCH_SOURCE_DIR) + "/l40s.json";
  EXPECT_EQ(Arch::by_name(path), Arch::by_name("l40s"));
}

TEST(ArchLookup, EnvironmentPathComesFirstAndShadows) {
  size_t builtin = Arch::presets().size();  // before TESSERA_ARCH_PATH is set
  fs::path dir = fs::temp_directory_path() / "tessera_arch_test_env_path";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A "custom" GPU, and an h100_sxm with a different SM count that shadows the preset.
  Arch custom = Arch::by_name("l4");
  custom.name = "my_l4";
  custom.aliases = {"lab_gpu"};
  std::ofstream(dir / "my_l4.json") << custom.to_json().dump(2);
  Arch shadow = Arch::by_name("h100_sxm");
  shadow.compute.sm_count = 120;
  shadow.memory.smem_bandwidth_gbps = shadow.derived_smem_bandwidth_gbps();
  std::ofstream(dir / "h100_sxm.json") << shadow.to_json().dump(2);
  ASSERT_EQ(setenv("TESSERA_ARCH_PATH", dir.c_str(), 1), 0);
  EXPECT_EQ(Arch::search_path().front(), dir.string());
  EXPECT_EQ(Arch::by_name("lab_gpu").name, "my_l4");
  EXPECT_EQ(Arch::by_name("h100").compute.sm_count, 120);
  EXPECT_EQ(Arch::presets().size(), builtin + 1);
  // A file whose name disagrees with its "name" is an error, not a silent skip.
  std::ofstream(dir / "other.json") << custom.to_json().dump(2);
  EXPECT_THROW(Arch::presets(), ArchError);
  unsetenv("TESSERA_ARCH_PATH");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera
