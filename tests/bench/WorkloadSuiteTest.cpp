//===- tests/bench/WorkloadSuiteTest.cpp - The workload suite's dry run (nvrtc) -===//
//
// bench/WorkloadRunner without a device: a dry run schedules every requested
// workload at its full size for an Arch preset and compiles it with NVRTC,
// naming each workload with its rule, as a library call and as the program
// tessera_bench_workloads (exit status, table, --json). The measured table
// is checked on a report written by hand, since measuring needs a GPU.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>

#include "tessera/bench/WorkloadRunner.h"
#include "tessera/runtime/CudaDriver.h"

namespace tessera::bench {
namespace {

using nlohmann::json;

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

TEST(WorkloadSuite, DryRunSchedulesAndCompilesEachWorkloadAtFullSize) {
  SuiteOptions o{.dry_run = true, .arch = "h100", .only = {"add_f16", "matmul_nt_f16", "gemv_int4"}, .git = "abc1234"};
  json report = run_workload_suite(o);
  EXPECT_EQ(report.at("mode"), "dry run");
  EXPECT_EQ(report.at("git"), "abc1234");
  EXPECT_TRUE(contains(report.at("arch"), "sm_90")) << report.at("arch");
  ASSERT_EQ(report.at("workloads").size(), 3u);
  std::string table = markdown_report(report);
  for (const json &w : report.at("workloads")) {
    std::string name = w.at("workload");
    SCOPED_TRACE(name);
    ASSERT_EQ(w.at("status"), "compiled") << w.value("error", "");
    EXPECT_EQ(w.at("rule"), w.at("expected_rule"));
    ASSERT_FALSE(w.at("kernels").empty());
    EXPECT_GT(w.at("kernels")[0].at("registers").get<int>(), 0) << "ptxas -v was read";
    EXPECT_GT(w.at("build_ms").get<double>(), 0);
    EXPECT_TRUE(contains(table, "| " + name + " | " + w.at("rule").get<std::string>() + " |")) << table;
  }
  // Full sizes, not the small ones.
  EXPECT_EQ(report["workloads"][0].at("bytes"), (4096u * 4096 * 2 + 4096) * 2) << "A, C and the bias row";
  EXPECT_EQ(report["workloads"][1].at("cublas_gemm"), "gemm 4096x4096x4096 nt float16->float16");
  EXPECT_TRUE(contains(table, "gemm 11008x1x4096 nn float16->float16 *")) << "int4 gemv: speed reference only";
  EXPECT_TRUE(all_passed(report));
}

TEST(WorkloadSuite, UnknownWorkloadIsAUserErrorListingTheKnownOnes) {
  try {
    run_workload_suite({.dry_run = true, .only = {"no_such_workload"}});
    FAIL() << "expected UserError";
  } catch (const UserError &e) {
    EXPECT_TRUE(contains(e.what(), "no_such_workload")) << e.what();
    EXPECT_TRUE(contains(e.what(), "matmul_nt_f16")) << e.what();
  }
}

TEST(WorkloadSuite, ArchIsOnlyForDryRuns) {
  EXPECT_THROW(run_workload_suite({.dry_run = false, .arch = "h100"}), UserError);
}

TEST(WorkloadSuite, MeasuredTableShowsRatesChecksAndFailures) {
  json report = {{"mode", "measured"}, {"date", "2026-01-01"}, {"arch", "h100_sxm/sm_90/132sm"},
                 {"device", "NVIDIA H100"}, {"nvrtc", "13.0"}, {"git", "abc1234"}, {"driver", "CUDA driver 13.0"},
                 {"copy", {{"gbps", 3000.0}}}, {"cublas", "libcublas.so.13 (cuBLAS 13.0.0)"}};
  report["workloads"] = {
      {{"workload", "matmul_nt_f16"}, {"expected_rule", "matmul"}, {"rule", "matmul"}, {"sizes", "k=4096 m=4096 n=4096"},
       {"status", "ok"}, {"reference", "cuBLAS"}, {"median_ms", 2.5}, {"gbps", 40.0}, {"fraction_of_copy", 0.0133},
       {"gflops", 54975.0}, {"cublas_ms", 0.25}, {"fraction_of_cublas", 0.1}, {"cublas_gemm", "gemm"},
       {"cublas_exact", true}},
      {{"workload", "add_f16"}, {"expected_rule", "elementwise"}, {"rule", "elementwise"}, {"sizes", "cols=4096 rows=4096"},
       {"status", "mismatch"}, {"reference", "device (fallback rule, float64)"}, {"error_ratio", 3.25}, {"median_ms", 0.03},
       {"gbps", 2237.0}, {"fraction_of_copy", 0.7457}},
      {{"workload", "transpose_f32"}, {"expected_rule", "transpose"}, {"rule", "elementwise"}, {"sizes", "cols=4096 rows=4096"},
       {"status", "error"}, {"error", "cuLaunchKernel: CUDA_ERROR_INVALID_VALUE\nsecond line | pipe"}}};
  std::string table = markdown_report(report);
  EXPECT_TRUE(contains(table, "**3000 GB/s**")) << table;
  EXPECT_TRUE(contains(table, "| matmul_nt_f16 | matmul | k=4096 m=4096 n=4096 | ok (cuBLAS) | 2500.0 | 40 | 1% | 54975 | 250.0 | 10% |"))
      << table;
  EXPECT_TRUE(contains(table, "| add_f16 | elementwise | cols=4096 rows=4096 | MISMATCH 3.25x the bound (device (fallback rule, float64)) | 30.0 | 2237 | 75% | – | – | – |"))
      << table;
  EXPECT_TRUE(contains(table, "| transpose_f32 | elementwise (expected transpose) |")) << table;
  EXPECT_TRUE(contains(table, "error: cuLaunchKernel: CUDA_ERROR_INVALID_VALUE second line   pipe")) << table;
  EXPECT_FALSE(all_passed(report));
}

struct Output {
  int status = -1;
  std::string text;
};

Output run_program(const std::string &args) {
  Output out;
  FILE *p = popen((std::string(TESSERA_BENCH_WORKLOADS) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.text.append(buf, n);
  int status = pclose(p);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(WorkloadSuiteProgram, DryRunPrintsEveryWorkloadWithItsRuleAndWritesJson) {
  std::filesystem::path json_path = std::filesystem::temp_directory_path() / "tessera_bench_dry_run_test.json";
  Output out = run_program("--dry-run --arch h100 --only copy_f16 --only gemv_f16 --git 0123abc --json " +
                           json_path.string());
  EXPECT_EQ(out.status, 0) << out.text;
  EXPECT_TRUE(contains(out.text, "| copy_f16 | elementwise |")) << out.text;
  EXPECT_TRUE(contains(out.text, "| gemv_f16 | gemv |")) << out.text;
  std::ifstream in(json_path);
  ASSERT_TRUE(in) << json_path;
  json report = json::parse(in);
  EXPECT_EQ(report.at("git"), "0123abc");
  EXPECT_EQ(report.at("workloads").size(), 2u);
  EXPECT_TRUE(report.contains("date") && report.contains("nvrtc") && report.contains("driver"));
  std::filesystem::remove(json_path);
}

TEST(WorkloadSuiteProgram, WithoutADeviceItSaysNothingWasMeasured) {
  if (runtime::driver_status() == runtime::DriverStatus::Ok) GTEST_SKIP() << "a device is present";
  Output out = run_program("--only copy_f16");
  EXPECT_EQ(out.status, 0) << out.text;
  EXPECT_TRUE(contains(out.text, "no CUDA device")) << out.text;
  EXPECT_TRUE(contains(out.text, "nothing measured")) << out.text;
  EXPECT_EQ(std::count(out.text.begin(), out.text.end(), '\n'), 1) << "one line: " << out.text;
}

TEST(WorkloadSuiteProgram, BadArgumentsExitWithStatus2) {
  Output out = run_program("--frobnicate");
  EXPECT_EQ(out.status, 2) << out.text;
  EXPECT_TRUE(contains(out.text, "--frobnicate")) << out.text;
}

}  // namespace
}  // namespace tessera::bench
