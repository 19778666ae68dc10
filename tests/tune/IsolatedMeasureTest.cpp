//===- tests/tune/IsolatedMeasureTest.cpp - Candidates measured in a worker -===//
//
// fast_tune's measuring worker (tune/MeasureWorkerMain.h) on a machine
// without a GPU: TuneOptions::simulate_device has the worker run each
// candidate on the interpreter, and TESSERA_PLANT_FAULT plants the faults a
// device shows (lib/tune/Measurer.h). A worker that crashes, hangs or reports
// a sticky fault fails that candidate alone; a fresh worker measures the
// rest, and they agree with the same candidates measured in-process.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "../workloads/Workloads.h"
#include "MeasureWorker.h"  // lib/tune
#include "Measurer.h"
#include "tessera/arch/Arch.h"
#include "tessera/script/Parser.h"
#include "tessera/tune/FastTune.h"

namespace tessera::tuning {
namespace {


/// Sets an environment variable for one scope.
struct ScopedEnv {
  std::string name;
  ScopedEnv(std::string n, const std::string &value) : name(std::move(n)) { setenv(name.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

TuneOptions simulated(bool isolate) {
  return TuneOptions{.topk = 12,
                     .threads = 2,
                     .warmup_ms = 0.5,
                     .measure_budget_ms = 2,
                     .retime_ms = 4,
                     .read_sass = false,
                     .isolate = isolate,
                     .measure_timeout_ms = 4000,
                     .simulate_device = true};
}

size_t count(const TuneResult &r, CandidateStatus s) {
  size_t n = 0;
  for (const CandidateReport &c : r.candidates) n += c.status == s;
  return n;
}

TEST(IsolatedMeasure, TheWorkerProgramIsFound) {
  std::string looked;
  std::optional<std::filesystem::path> w = find_measure_worker(&looked);
  ASSERT_TRUE(w) << looked;
  EXPECT_EQ(w->filename(), "tessera-measure-worker");
}

TEST(IsolatedMeasure, AWorkerAgreesWithTheTunersOwnProcess) {
  ir::PrimFunc f = test::workload_at_size("matmul_nn_f32");
  TuneResult in = fast_tune(f, Arch::by_name("h100"), simulated(false));
  TuneResult out = fast_tune(f, Arch::by_name("h100"), simulated(true));
  ASSERT_TRUE(in.measured) << in.why_unmeasured;
  ASSERT_TRUE(out.measured) << out.why_unmeasured;
  EXPECT_EQ(in.isolation, "in-process");
  EXPECT_EQ(out.isolation, "worker (1 started)");
  EXPECT_EQ(out.workers_started, 1);
  EXPECT_EQ(out.device, "simulated (the interpreter)");
  ASSERT_EQ(in.candidates.size(), out.candidates.size());
  ASSERT_GE(out.candidates.size(), 6u);
  for (size_t i = 0; i < in.candidates.size(); ++i) {
    SCOPED_TRACE("candidate " + std::to_string(i) + " " + out.candidates[i].config);
    EXPECT_EQ(to_string(out.candidates[i].status), to_string(in.candidates[i].status)) << out.candidates[i].error;
    EXPECT_EQ(out.candidates[i].measured, in.candidates[i].measured);
    // The same inputs, the same program read back from its text, the same
    // interpreter: the same outputs to the last bit.
    EXPECT_EQ(out.candidates[i].error_ratio, in.candidates[i].error_ratio);
    if (out.candidates[i].measured) EXPECT_GT(out.candidates[i].time_us, 0);
  }
}

TEST(IsolatedMeasure, EachPlantedFaultFailsItsCandidateAloneAndAFreshWorkerGoesOn) {
  ir::PrimFunc f = test::workload_at_size("matmul_nn_f32");
  ScopedEnv plant("TESSERA_PLANT_FAULT", "0:crash,1:hang,2:launch_error,3:illegal_address,4:wrong_answer");
  TuneResult r = fast_tune(f, Arch::by_name("h100"), simulated(true));
  ASSERT_TRUE(r.measured) << r.why_unmeasured;
  ASSERT_GE(r.candidates.size(), 7u);
  const std::vector<CandidateReport> &c = r.candidates;
  EXPECT_EQ(c[0].status, CandidateStatus::LaunchError);
  EXPECT_NE(c[0].error.find("killed by signal 11"), std::string::npos) << c[0].error;
  EXPECT_EQ(c[1].status, CandidateStatus::Timeout);
  EXPECT_STREQ(to_string(c[1].status), "timeout");
  EXPECT_NE(c[1].error.find("no answer within 4000 ms: the watchdog killed the worker"), std::string::npos)
      << c[1].error;
  EXPECT_EQ(c[2].status, CandidateStatus::LaunchError);
  EXPECT_NE(c[2].error.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << c[2].error;
  EXPECT_EQ(c[3].status, CandidateStatus::LaunchError);
  EXPECT_NE(c[3].error.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << c[3].error;
  EXPECT_EQ(c[4].status, CandidateStatus::WrongAnswer) << c[4].error;
  // The first worker crashed, the second hung, the third survived the
  // refused launch and ended after the sticky fault: four in all.
  EXPECT_EQ(r.workers_started, 4);
  EXPECT_EQ(r.isolation, "worker (4 started)");
  for (size_t i = 5; i < c.size(); ++i) {
    SCOPED_TRACE("candidate " + std::to_string(i));
    if (c[i].status == CandidateStatus::ScheduleError || c[i].status == CandidateStatus::BuildError) continue;
    EXPECT_EQ(c[i].status, CandidateStatus::Ok) << c[i].error;
    EXPECT_TRUE(c[i].measured);
    EXPECT_LE(c[i].error_ratio, 1.0);
  }
  EXPECT_GE(r.best, 5);
  EXPECT_TRUE(r.winner().measured);
  EXPECT_EQ(count(r, CandidateStatus::LaunchError), 3u);
  EXPECT_EQ(count(r, CandidateStatus::Timeout), 1u);
}

TEST(IsolatedMeasure, AWorkerThatCannotStartLeavesTheRunUnmeasuredWithItsReason) {
  ir::PrimFunc f = test::workload_at_size("matmul_nn_f32");
  ScopedEnv worker("TESSERA_MEASURE_WORKER", "/bin/false");
  TuneResult r = fast_tune(f, Arch::by_name("h100"), simulated(true));
  EXPECT_FALSE(r.measured);
  EXPECT_NE(r.why_unmeasured.find("the measuring worker could not start: the worker exited with status 1"),
            std::string::npos)
      << r.why_unmeasured;
  EXPECT_EQ(r.winner().status, CandidateStatus::Ok);  // the policy's pick stands
}

TEST(IsolatedMeasure, BadHooksAreRefusedWithTheReason) {
  ir::PrimFunc f = test::workload_at_size("matmul_nn_f32");
  {
    ScopedEnv worker("TESSERA_MEASURE_WORKER", "/no/such/worker");
    TuneResult r = fast_tune(f, Arch::by_name("h100"), simulated(true));
    EXPECT_FALSE(r.measured);
    EXPECT_NE(r.why_unmeasured.find("TESSERA_MEASURE_WORKER=/no/such/worker is not a program"), std::string::npos)
        << r.why_unmeasured;
  }
  ScopedEnv plant("TESSERA_PLANT_FAULT", "2:meltdown");
  TuneResult r = fast_tune(f, Arch::by_name("h100"), simulated(true));
  EXPECT_FALSE(r.measured);
  EXPECT_NE(r.why_unmeasured.find("'2:meltdown' is not K:KIND with KIND one of crash, hang"), std::string::npos)
      << r.why_unmeasured;
}

TEST(IsolatedMeasure, StickyCudaErrorsAreTheOnesThatEndAWorker) {
  EXPECT_TRUE(is_sticky_cuda_error("cuLaunchKernel: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access)"));
  EXPECT_TRUE(is_sticky_cuda_error("cuCtxSynchronize failed: CUDA_ERROR_MISALIGNED_ADDRESS"));
  EXPECT_TRUE(is_sticky_cuda_error("CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure"));
  EXPECT_TRUE(is_sticky_cuda_error("CUDA_ERROR_ASSERT"));
  // A refused launch or a lack of memory leaves the context usable.
  EXPECT_FALSE(is_sticky_cuda_error("cuLaunchKernel: CUDA_ERROR_INVALID_VALUE"));
  EXPECT_FALSE(is_sticky_cuda_error("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"));
  EXPECT_FALSE(is_sticky_cuda_error("cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_FALSE(is_sticky_cuda_error("wrong answer at [3, 4]"));
}

TEST(IsolatedMeasure, ThePlantedGpuFaultsAreProgramsTheCudaPathBuilds) {
  // On a GPU these kernels are what a planted candidate runs; here they must
  // read and compile (their faults need a device).
  for (const std::string kind : {"illegal_address", "hang", "launch_error"}) {
    SCOPED_TRACE(kind);
    std::string text = planted_fault_program(kind);
    ASSERT_FALSE(text.empty());
    ir::PrimFunc pf = script::parse_func(text);
    MeasureContext ctx{.func = pf, .arch = Arch::by_name("h100")};
    std::unique_ptr<runtime::Executable> exe;
    EXPECT_NO_THROW(exe = build_candidate(ctx, {.text = text, .target = "sm_90a"}));
  }
  EXPECT_EQ(planted_fault_program("crash"), "");
}

}  // namespace
}  // namespace tessera::tuning
