//===- tests/bench/TuneSuiteGpuTest.cpp - `tessera bench` measured ----------===//
//
// The smoke suite tuned and measured on a device: every workload verified and
// timed, the default, top-1 and top-k times consistent (the winner is never
// slower than the default it was measured against), the copy ceiling and
// cuBLAS recorded, the three reports rendered. Skips itself without a GPU.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/bench/TuneSuite.h"
#include "tessera/runtime/CudaDriver.h"

namespace tessera::bench {
namespace {

TEST(TuneSuiteGpu, SmokeSuiteIsVerifiedAndTimed) {
  if (runtime::driver_status() != runtime::DriverStatus::Ok)
    GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();
  nlohmann::json report = run_tune_suite({.suite = "smoke", .topk = 4, .git = "test"});
  EXPECT_EQ(report["mode"], "measured");
  ASSERT_TRUE(report.contains("copy"));
  EXPECT_GT(report["copy"]["gbps"].get<double>(), 0);
  ASSERT_EQ(report["workloads"].size(), 3u);
  for (const auto &w : report["workloads"]) {
    SCOPED_TRACE(w["workload"].get<std::string>());
    ASSERT_EQ(w["status"], "ok") << w.dump();
    ASSERT_TRUE(w["default_us"].is_number()) << w.dump();
    ASSERT_TRUE(w["topk_us"].is_number()) << w.dump();
    EXPECT_LE(w["topk_us"].get<double>(), w["default_us"].get<double>());
    EXPECT_GT(w["fraction_of_copy"].get<double>(), 0);
    // Every candidate's estimate and time recorded; the fastest is the winner.
    ASSERT_EQ(w["candidate_results"].size(), w["candidates"].get<size_t>());
    double fastest = 1e30;
    for (const auto &c : w["candidate_results"]) {
      EXPECT_TRUE(c["config"].is_object()) << c.dump();
      if (c["status"] == "ok" && c["time_us"].is_number()) fastest = std::min(fastest, c["time_us"].get<double>());
    }
    EXPECT_DOUBLE_EQ(fastest, w["topk_us"].get<double>());
    if (w["rule"] == "matmul") {
      EXPECT_TRUE(w.contains("cublas_us")) << w.dump();
    }
  }
  EXPECT_NE(tune_suite_markdown(report).find("| matmul_nn_f32_256 | matmul |"), std::string::npos);
  EXPECT_NE(tune_suite_svg(report).find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace tessera::bench
