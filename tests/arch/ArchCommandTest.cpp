//===- ArchCommandTest.cpp - `tessera arch` ---------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "Commands.h"
#include "tessera/arch/Arch.h"
#include "tessera/runtime/CudaDriver.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

struct Result {
  int status;
  std::string out, err;
};

Result run(const ArchCommandOptions &opts) {
  std::ostringstream out, err;
  int status = arch_command(opts, out, err);
  return {status, out.str(), err.str()};
}

bool has(const std::string &text, const std::string &fragment) { return text.find(fragment) != std::string::npos; }

TEST(ArchCommand, NoArgumentsListsEveryPreset) {
  Result r = run({});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(run({.list = true}).out, r.out);
  for (const Arch &a : Arch::presets()) EXPECT_TRUE(has(r.out, a.name + " ")) << r.out;
  EXPECT_TRUE(has(r.out, "h100_sxm         sm_90   132 SMs  NVIDIA H100 SXM5 80GB HBM3  (h100, ")) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), static_cast<long>(Arch::presets().size()));
}

TEST(ArchCommand, PrintsOnePresetByAlias) {
  Result r = run({.name = "H100"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "h100_sxm: NVIDIA H100 SXM5 80GB HBM3 (sm_90, fingerprint h100_sxm/sm_90/132sm)")) << r.out;
  EXPECT_TRUE(has(r.out, "48 KiB static, 227 KiB opt-in (1 KiB reserved per block)")) << r.out;
  EXPECT_TRUE(has(r.out, "80 GiB, 3350 GB/s")) << r.out;
  EXPECT_TRUE(has(r.out, "float16 -> float32")) << r.out;
  EXPECT_TRUE(has(r.out, "989.4 TFLOPS  m16n8k16 m16n8k8")) << r.out;
  EXPECT_TRUE(has(r.out, "1978.9 TOPS  m16n8k32 m16n8k16")) << r.out;
  EXPECT_TRUE(has(r.out, "wgmma                     yes (compile for sm_90a)")) << r.out;
  EXPECT_TRUE(has(r.out, "mma.sync ceiling          63% of the mma peaks")) << r.out;
  EXPECT_TRUE(has(r.out, "33454.08 GB/s (derived)")) << r.out;
  EXPECT_TRUE(has(r.out, "sources\n  compute: ")) << r.out;
}

TEST(ArchCommand, JsonOutputIsTheDescriptionItself) {
  Result r = run({.name = "rtx4090", .json = true});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Arch::parse(r.out, "stdout"), Arch::by_name("rtx4090"));
  Result list = run({.list = true, .json = true});
  ASSERT_EQ(list.status, 0) << list.err;
  ArchJson all = ArchJson::parse(list.out);
  ASSERT_TRUE(all.is_array());
  EXPECT_EQ(all.size(), Arch::presets().size());
}

TEST(ArchCommand, UnknownNameExitsOneListingKnownNames) {
  Result r = run({.name = "v100"});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(has(r.err, "error: unknown GPU 'v100'; known: a10 (nvidia_a10), a100_sxm4_80gb (a100, ")) << r.err;
}

TEST(ArchCommand, ConflictingOptionsExitOne) {
  Result both = run({.name = "h100", .detect = true});
  EXPECT_EQ(both.status, 1);
  EXPECT_TRUE(has(both.err, "error: give a GPU name or --detect, not both")) << both.err;
  Result list = run({.name = "h100", .list = true});
  EXPECT_EQ(list.status, 1);
  EXPECT_TRUE(has(list.err, "--list takes no GPU name")) << list.err;
}

TEST(ArchCommand, DetectWithoutDeviceExitsOne) {
  Result r = run({.detect = true});
  if (runtime::driver_status() == runtime::DriverStatus::Ok) {
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(has(r.out, "detected\n")) << r.out;
    return;
  }
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(has(r.err, "error: cannot detect the GPU: no CUDA device (" + runtime::driver_message() + ")"))
      << r.err;
}

TEST(ArchCommand, ReadsADescriptionFileAndReportsItsProblems) {
  fs::path dir = fs::temp_directory_path() / "tessera_arch_command_test";
  fs::create_directories(dir);
  Arch mine = Arch::by_name("l4");
  mine.name = "my_gpu";
  std::string good = (dir / "my_gpu.json").string();
  std::ofstream(good) << mine.to_json().dump(2);
  Result r = run({.name = good});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "my_gpu: NVIDIA L4 (sm_89")) << r.out;

  ArchJson broken = mine.to_json();
  broken["memory"]["l2_bytes"] = "48MB";
  broken["limits"]["max_regs_per_thread"] = 256;
  std::string bad = (dir / "broken.json").string();
  std::ofstream(bad) << broken.dump(2);
  Result e = run({.name = bad});
  EXPECT_EQ(e.status, 1);
  EXPECT_TRUE(has(e.err, "error: " + bad + ": /memory/l2_bytes: expected a positive integer, got \"48MB\"\n" + bad +
                             ": /limits/max_regs_per_thread: expected an integer in [1, 255], got 256"))
      << e.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::cli
