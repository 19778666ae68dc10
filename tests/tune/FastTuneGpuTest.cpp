//===- tests/tune/FastTuneGpuTest.cpp - fast_tune on a device ----------------===//
//
// On a GPU every candidate is verified against the reference and timed, the
// winner is the fastest verified one, and the database answers a second
// call. Skips itself without a device.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include "../workloads/Workloads.h"
#include "TuneTestUtil.h"
#include "tessera/runtime/DetectArch.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/tune/Database.h"
#include "tessera/tune/FastTune.h"

namespace tessera::tuning {
namespace {

#define TESSERA_REQUIRE_GPU()                                                  \
  do {                                                                         \
    if (runtime::driver_status() != runtime::DriverStatus::Ok)                 \
      GTEST_SKIP() << "no CUDA device: " << runtime::driver_message();         \
  } while (0)


void expect_measured_and_consistent(const TuneResult &r) {
  EXPECT_TRUE(r.measured) << r.why_unmeasured;
  EXPECT_FALSE(r.device.empty());
  ASSERT_GE(r.best, 0);
  const CandidateReport &w = r.winner();
  EXPECT_EQ(w.status, CandidateStatus::Ok);
  EXPECT_GT(w.time_us, 0);
  for (const CandidateReport &c : r.candidates) {
    EXPECT_NE(c.status, CandidateStatus::WrongAnswer) << c.origin << " " << c.config << ": " << c.error;
    if (c.status == CandidateStatus::Ok) {
      EXPECT_TRUE(c.measured) << c.origin;
      EXPECT_GE(c.time_us, w.time_us) << c.origin << " is faster than the winner";
    }
  }
}

// The planted kernels are real on a device (lib/tune/Measurer.h): a store a
// gigabyte past its buffer, a kernel that never ends, a block of 2048
// threads, and a worker that crashes. Each fails its candidate alone; the
// run goes on in fresh workers and the rest verify.
TEST(FastTuneGpu, RealFaultsInTheWorkerFailTheirCandidateAlone) {
  TESSERA_REQUIRE_GPU();
  Arch arch = runtime::detect_arch();
  setenv("TESSERA_PLANT_FAULT", "0:illegal_address,1:hang,2:launch_error,3:crash", 1);
  TuneResult r;
  try {
    r = fast_tune(test::workload_at_size("matmul_nn_f16", false), arch, {.topk = 8, .measure_timeout_ms = 8000});
  } catch (...) {
    unsetenv("TESSERA_PLANT_FAULT");
    throw;
  }
  unsetenv("TESSERA_PLANT_FAULT");
  ASSERT_TRUE(r.measured) << r.why_unmeasured;
  ASSERT_GE(r.candidates.size(), 6u);
  EXPECT_EQ(r.candidates[0].status, CandidateStatus::LaunchError);
  EXPECT_NE(r.candidates[0].error.find("ILLEGAL_ADDRESS"), std::string::npos) << r.candidates[0].error;
  EXPECT_EQ(r.candidates[1].status, CandidateStatus::Timeout) << r.candidates[1].error;
  EXPECT_EQ(r.candidates[2].status, CandidateStatus::LaunchError) << r.candidates[2].error;
  EXPECT_EQ(r.candidates[3].status, CandidateStatus::LaunchError);
  EXPECT_NE(r.candidates[3].error.find("killed by signal 11"), std::string::npos) << r.candidates[3].error;
  EXPECT_EQ(r.workers_started, 4) << r.isolation;
  for (size_t i = 4; i < r.candidates.size(); ++i)
    EXPECT_NE(r.candidates[i].status, CandidateStatus::WrongAnswer) << r.candidates[i].error;
  EXPECT_GE(r.best, 4);
  EXPECT_TRUE(r.winner().measured);
}

TEST(FastTuneGpu, EveryCandidateVerifiedAndTheFastestKept) {
  TESSERA_REQUIRE_GPU();
  Arch arch = runtime::detect_arch();
  // Small: the interpreter is the reference. Full size: the fallback kernel is.
  for (bool full : {false, true})
    for (const char *name : {"add_f16", "softmax_f16", "matmul_nn_f16", "gemv_int4", "reduce_sum_outer_f32"}) {
      SCOPED_TRACE(std::string(name) + (full ? " full" : " small"));
      TuneResult r = fast_tune(test::workload_at_size(name, full), arch, {.topk = 8});
      expect_measured_and_consistent(r);
      EXPECT_GT(r.phases.measure_ms, 0);
    }
}

TEST(FastTuneGpu, TheDatabaseAnswersTheSecondCall) {
  TESSERA_REQUIRE_GPU();
  test::ScratchDir dir;
  Database db = Database::open(dir.file("db.jsonl"));
  Arch arch = runtime::detect_arch();
  ir::PrimFunc f = test::workload_at_size("reduce_sum_f32", true);
  TuneResult first = fast_tune(f, arch, {.topk = 5, .db = &db});
  expect_measured_and_consistent(first);
  EXPECT_FALSE(first.from_db);
  Database reread = Database::open(dir.file("db.jsonl"));
  EXPECT_GE(reread.records().size(), 2u);
  TuneResult second = fast_tune(f, arch, {.topk = 5, .db = &reread});
  EXPECT_TRUE(second.from_db);
  EXPECT_EQ(second.winner().config, first.winner().config);
  EXPECT_LT(second.phases.total_ms, first.phases.total_ms);
}

}  // namespace
}  // namespace tessera::tuning
