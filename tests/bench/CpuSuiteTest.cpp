//===- tests/bench/CpuSuiteTest.cpp - `tessera bench --target cpu` ----------===//
//
// bench/CpuSuite.h on a small suite: a float32 matmul (Eigen's GEMM beside
// it, on the same threads), a row sum (judged against memcpy), a workload
// whose file does not parse (an error row; the others still run), the
// report written as JSON, Markdown and SVG. Skips without the LLVM JIT.
//
//===----------------------------------------------------------------------===//
#include "tessera/bench/CpuSuite.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tessera/runtime/LlvmJit.h"
#include "tessera/support/Error.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;

fs::path write(const fs::path &dir, const std::string &name, const std::string &text) {
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

TEST(CpuSuite, MatmulAgainstEigenReductionAgainstMemcpyAndABrokenWorkload) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  const fs::path dir = fs::temp_directory_path() / "tessera_cpu_suite_test";
  fs::remove_all(dir);
  write(dir, "matmul.py", R"(# from tvm.script import tir as T

@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle) -> None:
    m, n, k = T.int32(), T.int32(), T.int32()
    A = T.match_buffer(a, (m, k), "float32")
    B = T.match_buffer(b, (k, n), "float32")
    C = T.match_buffer(c, (m, n), "float32")
    for i, j, r in T.grid(m, n, k):
        with T.block("C"):
            v_i, v_j, v_r = T.axis.remap("SSR", [i, j, r])
            with T.init():
                C[v_i, v_j] = T.float32(0.0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_r] * B[v_r, v_j]
)");
  write(dir, "rowsum.py", R"(@T.prim_func
def main(A: T.Buffer((64, 300), "float32"), B: T.Buffer((64,), "float32")):
    for i, k in T.grid(64, 300):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)");
  write(dir, "broken.py", "@T.prim_func\ndef main(A: T.Buffer((4,), \"float32\")):\n    A[0] = \n");
  const fs::path suite = write(dir, "suite.json", R"({"suite": "tiny", "description": "test", "workloads": [
    {"name": "mm", "file": ")" + (dir / "matmul.py").string() + R"(", "dims": {"m": 40, "n": 48, "k": 33}},
    {"name": "rowsum", "file": ")" + (dir / "rowsum.py").string() + R"("},
    {"name": "broken", "file": ")" + (dir / "broken.py").string() + R"("}]})");

  int progress_calls = 0;
  nlohmann::json report = run_cpu_suite(
      {.suite = suite.string(), .cpu = "host", .git = "abc", .progress = [&](const nlohmann::json &) { ++progress_calls; }});
  EXPECT_EQ(progress_calls, 3);
  EXPECT_EQ(report.at("suite"), "tiny");
  EXPECT_EQ(report.at("git"), "abc");
  EXPECT_GT(report.at("memcpy").at("gbps").get<double>(), 0);
  EXPECT_FALSE(report.at("cpu_model").get<std::string>().empty());
  const nlohmann::json &rows = report.at("workloads");
  ASSERT_EQ(rows.size(), 3u);

  const nlohmann::json &mm = rows[0];
  ASSERT_EQ(mm.at("status"), "ok") << mm.dump(1);
  // The plain function and the matmul tilings all verified; the best is one of them.
  EXPECT_GT(mm.at("candidates").get<int>(), 1);
  EXPECT_EQ(mm.at("candidates_ok"), mm.at("candidates"));
  EXPECT_LE(mm.at("error_ratio").get<double>(), 1.0);
  EXPECT_EQ(mm.at("eigen_gemm"), "gemm 40x48x33 nn float32->float32");
  EXPECT_GT(mm.at("eigen_ms").get<double>(), 0);
  EXPECT_DOUBLE_EQ(mm.at("gflops").get<double>(), 2.0 * 40 * 48 * 33 / (mm.at("best_ms").get<double>() * 1e-3) / 1e9);
  EXPECT_DOUBLE_EQ(mm.at("fraction_of_eigen").get<double>(),
                   mm.at("eigen_ms").get<double>() / mm.at("best_ms").get<double>());
  EXPECT_FALSE(mm.contains("fraction_of_memcpy"));

  const nlohmann::json &sum = rows[1];
  ASSERT_EQ(sum.at("status"), "ok") << sum.dump(1);
  EXPECT_EQ(sum.at("candidates"), 1);  // no matmul: the function as written
  EXPECT_EQ(sum.at("schedule"), "plain (as written)");
  EXPECT_EQ(sum.at("bytes"), (64 * 300 + 64) * 4);
  EXPECT_GT(sum.at("fraction_of_memcpy").get<double>(), 0);
  EXPECT_FALSE(sum.contains("eigen_ms"));

  EXPECT_EQ(rows[2].at("status"), "error");
  EXPECT_NE(rows[2].at("error").get<std::string>().find("broken.py"), std::string::npos) << rows[2].dump(1);

  const std::string md = cpu_suite_markdown(report);
  // The fastest of the matmul's candidates: a tiling or, at this small size
  // and on a busy machine, the function as written.
  const std::string mm_schedule = mm.at("schedule").get<std::string>();
  EXPECT_TRUE(mm_schedule.starts_with("matmul {") || mm_schedule == "plain (as written)") << mm_schedule;
  EXPECT_NE(md.find("| mm | " + mm_schedule.substr(0, 8)), std::string::npos) << md;
  EXPECT_NE(md.find("| rowsum | plain (as written) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| broken | error: "), std::string::npos) << md;
  std::vector<std::string> paths = write_cpu_suite(report, (dir / "out" / "r").string());
  ASSERT_EQ(paths.size(), 3u);
  for (const std::string &p : paths) EXPECT_GT(fs::file_size(p), 100u) << p;
  fs::remove_all(dir);
}

TEST(CpuSuite, UnknownWorkloadIsRefusedByName) {
  EXPECT_THROW(
      {
        try {
          run_cpu_suite({.suite = "smoke", .only = {"nope"}});
        } catch (const UserError &e) {
          EXPECT_NE(std::string(e.what()).find("has no workload 'nope'"), std::string::npos) << e.what();
          throw;
        }
      },
      UserError);
}

TEST(CpuSuite, MemcpyBandwidthIsPositiveOnAnyThreadCount) {
  EXPECT_GT(measure_memcpy_gbps(size_t(1) << 20, 1), 0);
  EXPECT_GT(measure_memcpy_gbps(size_t(1) << 20, 3), 0);
  EXPECT_GT(measure_memcpy_gbps(7, 4), 0);  // fewer bytes than threads
}

}  // namespace
}  // namespace tessera::bench
