//===- tests/tune/TuneCommandTest.cpp - `tessera tune` and `tessera bench` --===//
//
// The commands as a user runs them on a machine without a GPU: tune goes up
// to the cubin and says nothing was measured; a database that already holds
// a measured best answers without tuning; bench writes its three reports.
//
//===----------------------------------------------------------------------===//
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <sstream>

#include "Commands.h"
#include "TuneTestUtil.h"
#include "tessera/analysis/Specialize.h"
#include "tessera/runtime/CudaDriver.h"
#include "tessera/runtime/LlvmJit.h"
#include "tessera/runtime/Sass.h"
#include "tessera/script/Parser.h"
#include "tessera/tune/Database.h"
#include "tessera/dispatch/Package.h"

namespace tessera::cli {
namespace {

std::string workload(const std::string &name) { return std::string(TESSERA_SOURCE_DIR) + "/workloads/" + name; }

struct CommandRun {
  int status;
  std::string out, err;
};

CommandRun tune(TuneCommandOptions o) {
  if (o.cache.empty()) o.cache = "none";  // tests never fill ~/.cache
  std::ostringstream out, err;
  int status = tune_command(o, out, err);
  return {status, out.str(), err.str()};
}

TEST(TuneCommand, WithoutADeviceCompilesEveryCandidateAndWritesTheBest) {
  test::ScratchDir dir;
  CommandRun r = tune({.file = workload("add_f16.py"), .arch = "h100", .topk = 4, .db = dir.file("db.jsonl"),
                .json = dir.file("r.json"), .output_dir = dir.file("out"), .dims = {"rows=64", "cols=96"},
                .no_measure = true});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("# rule: elementwise"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NOT MEASURED (measuring was turned off)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nothing measured, nothing stored"), std::string::npos) << r.out;
  for (const char *f : {"add_f16.cu", "add_f16.sm_90.cubin", "add_f16.scheduled.py"})
    EXPECT_TRUE(std::filesystem::exists(dir.file("out/") + f)) << f;
  // The scheduled program written out reads back.
  EXPECT_NO_THROW(script::parse_file(dir.file("out/add_f16.scheduled.py")));
  std::ifstream j(dir.file("r.json"));
  auto report = nlohmann::json::parse(j);
  EXPECT_EQ(report["rule"], "elementwise");
  EXPECT_GE(report["candidates"].size(), 2u);
  // Nothing measured: the database stays empty.
  EXPECT_TRUE(tuning::Database::open(dir.file("db.jsonl")).records().empty());
}

// The table's SASS column (with cuobjdump) or the hint saying how to get one.
TEST(TuneCommand, TheCpuTargetTimesEveryScheduleAndWritesTheFastest) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  test::ScratchDir dir;
  CommandRun r = tune({.file = workload("matmul_nn_f32.py"), .json = dir.file("r.json"), .output_dir = dir.file("out"),
                       .dims = {"m=40", "n=72", "k=33"}, .target = "cpu", .cpu = "ci"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("# target: cpu (ci: 2 cores"), std::string::npos) << r.out;
  {
    // --json: every schedule with its config as the rule's JSON (null for the plain one).
    std::ifstream j(dir.file("r.json"));
    auto report = nlohmann::json::parse(j);
    EXPECT_EQ(report["target"], "cpu");
    ASSERT_GE(report["candidates"].size(), 3u);
    bool plain = false, tiled = false;
    for (const auto &c : report["candidates"]) {
      EXPECT_TRUE(c["ok"].get<bool>()) << c.dump();
      EXPECT_GT(c["median_ms"].get<double>(), 0) << c.dump();
      plain |= c["name"] == "plain (as written)" && c["config"].is_null();
      tiled |= c["config"] == nlohmann::json{{"tile_m", 4}, {"tile_n", 32}, {"tile_k", 0}};
    }
    EXPECT_TRUE(plain && tiled) << report.dump(1);
  }
  EXPECT_NE(r.out.find("| plain (as written) | ok |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| matmul {\"tile_m\":4,\"tile_n\":32,\"tile_k\":0} | ok |"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("| no:"), std::string::npos) << r.out;  // every schedule verified
  EXPECT_NE(r.out.find("# best: "), std::string::npos) << r.out;
  EXPECT_NO_THROW(script::parse_file(dir.file("out/main.cpu.scheduled.py")));
  // Sizes to time at, and a target that exists.
  CommandRun symbolic = tune({.file = workload("matmul_nn_f32.py"), .output_dir = dir.file("out"), .target = "cpu"});
  EXPECT_EQ(symbolic.status, 1);
  EXPECT_NE(symbolic.err.find("bind 'm' (and the other symbolic sizes) with --dim"), std::string::npos) << symbolic.err;
  CommandRun tpu = tune({.file = workload("matmul_nn_f32.py"), .target = "tpu"});
  EXPECT_EQ(tpu.status, 1);
  EXPECT_NE(tpu.err.find("--target must be auto, gpu or cpu, got 'tpu'"), std::string::npos) << tpu.err;
}

// --db on the CPU target: every timed schedule is stored; the next run applies
// the stored best without timing anything; a record whose config no longer
// applies is reported and the function is tuned again.
TEST(TuneCommand, TheCpuTargetStoresItsTimesAndAnswersFromThem) {
  if (!runtime::llvm_jit_available()) GTEST_SKIP() << "built without LLVM";
  test::ScratchDir dir;
  TuneCommandOptions o{.file = workload("matmul_nn_f32.py"), .db = dir.file("db.jsonl"), .output_dir = dir.file("out"),
                       .dims = {"m=24", "n=40", "k=17"}, .target = "cpu", .cpu = "ci"};
  CommandRun first = tune(o);
  ASSERT_EQ(first.status, 0) << first.err;
  const std::vector<tuning::Record> records = tuning::Database::open(dir.file("db.jsonl")).records();
  ASSERT_GE(records.size(), 2u);
  for (const tuning::Record &rec : records) {
    EXPECT_EQ(rec.rule, "cpu");
    EXPECT_TRUE(rec.key.arch.starts_with("cpu/ci/2c/")) << rec.key.arch;
  }
  EXPECT_NE(first.out.find(fmt::format("({} records appended)", records.size())), std::string::npos) << first.out;

  CommandRun second = tune(o);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_NE(second.out.find("# answered from the database"), std::string::npos) << second.out;
  EXPECT_EQ(second.out.find("plain (as written)"), std::string::npos) << second.out;  // nothing timed
  EXPECT_EQ(tuning::Database::open(dir.file("db.jsonl")).records().size(), records.size());
  EXPECT_NO_THROW(script::parse_file(dir.file("out/main.cpu.scheduled.py")));

  // A faster record of the same key whose config does not apply: tuned again, and said so.
  tuning::Record stale = records[0];
  stale.status = tuning::RecordStatus::Ok;
  stale.time_us = 1e-3;
  stale.config = tuning::Json{{"tile_m", -4}};
  tuning::Database db = tuning::Database::open(dir.file("db.jsonl"));
  db.append({stale});
  CommandRun third = tune(o);
  ASSERT_EQ(third.status, 0) << third.err;
  EXPECT_NE(third.out.find("# database: the stored best cannot be applied, tuning again"), std::string::npos)
      << third.out;
  EXPECT_NE(third.out.find("| plain (as written) | ok |"), std::string::npos) << third.out;
}

TEST(TuneCommand, SassColumnOrTheHintToInstallCuobjdump) {
  test::ScratchDir dir;
  CommandRun r = tune({.file = workload("add_f16.py"), .arch = "h100", .topk = 2, .db = "none",
                       .json = dir.file("r.json"), .output_dir = dir.file("out"), .dims = {"rows=64", "cols=96"},
                       .no_measure = true});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream j(dir.file("r.json"));
  auto report = nlohmann::json::parse(j);
  if (!runtime::find_disassembler()) {
    EXPECT_NE(r.out.find(std::string("# ") + std::string(runtime::kNoDisassemblerHint)), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("ld/st/lcl"), std::string::npos) << r.out;
    EXPECT_TRUE(report["candidates"][0]["sass"].is_null());
    return;
  }
  EXPECT_NE(r.out.find("ld/st/lcl"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# ld/st/lcl: the widest global load and store in bytes"), std::string::npos) << r.out;
  EXPECT_TRUE(report["candidates"][0]["sass"]["summary"].get<std::string>().starts_with("global ld ")) << report;
  // --no-sass: no column, no summaries.
  CommandRun off = tune({.file = workload("add_f16.py"), .arch = "h100", .topk = 2, .db = "none",
                         .output_dir = dir.file("out2"), .dims = {"rows=64", "cols=96"}, .no_measure = true,
                         .no_sass = true});
  ASSERT_EQ(off.status, 0) << off.err;
  EXPECT_EQ(off.out.find("ld/st/lcl"), std::string::npos) << off.out;
}

TEST(TuneCommand, SecondRunAnswersFromTheDatabase) {
  test::ScratchDir dir;
  // What a measured run on this "device" stored: the elementwise rule with 128 threads.
  ir::PrimFunc f = analysis::specialize(script::parse_file(workload("add_f16.py")).funcs[0], {{"rows", 64}, {"cols", 96}});
  tuning::TuningKey key = tuning::TuningKey::of(f, Arch::by_name("h100"));
  tuning::Database db = tuning::Database::open(dir.file("db.jsonl"));
  tuning::Record rec = test::ok_record(key, 128, 3.5);
  db.append({rec});
  CommandRun r = tune({.file = workload("add_f16.py"), .arch = "h100", .db = dir.file("db.jsonl"),
                .output_dir = dir.file("out"), .dims = {"rows=64", "cols=96"}, .no_measure = true});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("answered from the database"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3.50 us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"threads\":128"), std::string::npos) << r.out;
  // Another shape misses it and is tuned.
  CommandRun other = tune({.file = workload("add_f16.py"), .arch = "h100", .db = dir.file("db.jsonl"),
                    .output_dir = dir.file("out"), .dims = {"rows=64", "cols=97"}, .no_measure = true});
  ASSERT_EQ(other.status, 0) << other.err;
  EXPECT_EQ(other.out.find("answered from the database"), std::string::npos) << other.out;
  // And so does another GPU.
  CommandRun a100 = tune({.file = workload("add_f16.py"), .arch = "a100", .db = dir.file("db.jsonl"),
                   .output_dir = dir.file("out"), .dims = {"rows=64", "cols=96"}, .no_measure = true});
  ASSERT_EQ(a100.status, 0) << a100.err;
  EXPECT_EQ(a100.out.find("answered from the database"), std::string::npos) << a100.out;
}

TEST(TuneCommand, SaveWritesAKernelPackageEvenWhenTheDatabaseAnswers) {
  test::ScratchDir dir;
  CommandRun r = tune({.file = workload("add_f16.py"), .arch = "h100", .topk = 2, .db = "none",
                       .output_dir = dir.file("out"), .dims = {"rows=64", "cols=96"}, .no_measure = true,
                       .save = dir.file("add.tsk")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("# kernel package: " + dir.file("add.tsk")), std::string::npos) << r.out;
  dispatch::Package p = dispatch::load_package(dir.file("add.tsk"));
  ASSERT_EQ(p.kind, "cuda");
  EXPECT_EQ(p.plan->target, "sm_90");
  EXPECT_EQ(p.plan->arguments.size(), 3u);
  EXPECT_EQ(p.meta.at("report").at("rule"), "elementwise");
  // Answered from the database (nothing compiled by the tune): the package
  // compiles the stored config.
  ir::PrimFunc f = analysis::specialize(script::parse_file(workload("add_f16.py")).funcs[0], {{"rows", 64}, {"cols", 96}});
  tuning::Database db = tuning::Database::open(dir.file("db.jsonl"));
  db.append({test::ok_record(tuning::TuningKey::of(f, Arch::by_name("h100")), 128, 3.5)});
  CommandRun again = tune({.file = workload("add_f16.py"), .arch = "h100", .db = dir.file("db.jsonl"),
                           .output_dir = dir.file("out"), .dims = {"rows=64", "cols=96"}, .no_measure = true,
                           .save = dir.file("from_db.tsk")});
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("answered from the database"), std::string::npos) << again.out;
  dispatch::Package q = dispatch::load_package(dir.file("from_db.tsk"));
  ASSERT_FALSE(q.plan->kernels.empty());
  EXPECT_FALSE(q.plan->kernels[0].steps.at(0).cubin.empty());
  EXPECT_NE(q.meta.at("script").get<std::string>().find("threadIdx.x"), std::string::npos);
  // A path that cannot be written is the user's error.
  CommandRun bad = tune({.file = workload("add_f16.py"), .arch = "h100", .topk = 1, .db = "none",
                         .output_dir = dir.file("out"), .dims = {"rows=64", "cols=96"}, .no_measure = true,
                         .save = dir.file("no/such/dir/x.tsk")});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("cannot write the kernel package"), std::string::npos) << bad.err;
}

TEST(TuneCommand, TheSecondTuneCompilesNothing) {
  test::ScratchDir dir;
  TuneCommandOptions o{.file = workload("matmul_nn_f16.py"), .arch = "h100", .topk = 3, .db = "none",
                       .output_dir = dir.file("out"), .dims = {"m=256", "n=256", "k=128"}, .no_measure = true};
  o.cache = dir.file("kernels");
  CommandRun first = tune(o);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.out.find(": 0 read, 4 compiled"), std::string::npos) << first.out;
  CommandRun second = tune(o);
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_NE(second.out.find(": 4 read, 0 compiled"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("nvrtc 0.0 "), std::string::npos) << second.out;
  // The same winner, written again from the cached cubin.
  EXPECT_EQ(first.out.substr(first.out.find("# best:")), second.out.substr(second.out.find("# best:")));
}

TEST(DynamicCommand, PrintsThePlanAndBuildsItsKernelsOnce) {
  test::ScratchDir dir;
  DynamicCommandOptions o{.file = workload("matmul_nn_f16.py"), .arch = "h100", .ranges = {"m=1:512"},
                          .hot = {"m=1"}, .dims = {"n=256", "k=128"}, .max_kernels = 3, .build = true};
  o.cache = dir.file("kernels");
  o.json = dir.file("plan.json");
  auto run = [&] {
    std::ostringstream out, err;
    int status = dynamic_command(o, out, err);
    return CommandRun{status, out.str(), err.str()};
  };
  CommandRun first = run();
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.out.find("# plan: rule matmul_tensor_core"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("m 1 "), std::string::npos) << "the hot value's own cell:\n" << first.out;
  EXPECT_NE(first.out.find("# baseline power-of-two buckets"), std::string::npos) << first.out;
  std::ifstream j(dir.file("plan.json"));
  auto plan = nlohmann::json::parse(j);
  const size_t kernels = plan["configs"].size();
  ASSERT_GE(kernels, 1u);
  ASSERT_LE(kernels, 3u);
  EXPECT_NE(first.out.find(fmt::format("# cold start: {} kernels, {} NVRTC compiles", kernels, kernels)),
            std::string::npos)
      << first.out;
  CommandRun second = run();
  ASSERT_EQ(second.status, 0) << second.err;
  EXPECT_NE(second.out.find(fmt::format("# warm start: {} kernels, 0 NVRTC compiles, {} read from the cache, 0 rule "
                                        "applications, 0 policy calls",
                                        kernels, kernels)),
            std::string::npos)
      << second.out;
  // --measure: on a device, each cell's kernel and its runners-up timed and
  // recorded; without one, said so, the plan's assignment kept.
  o.measure = true;
  o.db = dir.file("tuning.jsonl");
  CommandRun measured = run();
  ASSERT_EQ(measured.status, 0) << measured.err;
  if (runtime::driver_status() != runtime::DriverStatus::Ok || runtime::device_count() == 0) {
    EXPECT_NE(measured.out.find("# measure: no CUDA device"), std::string::npos) << measured.out;
  } else {
    EXPECT_NE(measured.out.find("# measured "), std::string::npos) << measured.out;
    EXPECT_NE(measured.out.find(" records appended)"), std::string::npos) << measured.out;
  }
  o.budget_ms = -5;
  CommandRun negative = run();
  EXPECT_EQ(negative.status, 1);
  EXPECT_NE(negative.err.find("--budget-ms must be 0 or more, got -5"), std::string::npos) << negative.err;
  o.budget_ms = 5000;
  o.measure = false;
  // A range of a symbol the function does not have.
  o.ranges = {"q=1:8"};
  o.hot.clear();
  CommandRun bad = run();
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("no symbolic size 'q'"), std::string::npos) << bad.err;
}

TEST(BenchCommand, DynamicSuiteWritesThePredictedRegret) {
  test::ScratchDir dir;
  std::ostringstream out, err;
  int status = bench_command({.suite = "dynamic", .out_dir = dir.file("out"), .arch = "h100", .only = {"down_proj_m"}},
                             out, err);
  ASSERT_EQ(status, 0) << err.str();
  EXPECT_NE(out.str().find("| down_proj_m | matmul_tensor_core | m=1:4096 | 24 |"), std::string::npos) << out.str();
  bool json = false, svg = false;
  for (const auto &e : std::filesystem::directory_iterator(dir.file("out"))) {
    if (e.path().extension() == ".json") {
      std::ifstream in(e.path());
      auto r = nlohmann::json::parse(in);
      const auto &w = r.at("workloads").at(0);
      EXPECT_LE(w.at("regret").at("plan").at("geomean").get<double>(),
                w.at("regret").at("one_kernel").at("geomean").get<double>());
      EXPECT_GT(w.at("points").size(), 100u);
      json = true;
    }
    svg = svg || e.path().extension() == ".svg";
  }
  EXPECT_TRUE(json && svg);
}

TEST(TuneCommand, BadArgumentsAreUserErrors) {
  CommandRun topk = tune({.file = workload("add_f16.py"), .arch = "h100", .topk = 0, .db = "none", .no_measure = true});
  EXPECT_EQ(topk.status, 1);
  EXPECT_NE(topk.err.find("--topk must be at least 1"), std::string::npos) << topk.err;
  CommandRun rule = tune({.file = workload("add_f16.py"), .arch = "h100", .rule = "matmul", .db = "none",
                   .dims = {"rows=8", "cols=8"}, .no_measure = true});
  EXPECT_EQ(rule.status, 1);
  EXPECT_NE(rule.err.find("matmul:"), std::string::npos) << rule.err;
  CommandRun arch = tune({.file = workload("add_f16.py"), .arch = "v100", .db = "none", .no_measure = true});
  EXPECT_EQ(arch.status, 1);
  EXPECT_NE(arch.err.find("v100"), std::string::npos) << arch.err;
}

TEST(BenchCommand, SmokeSuiteWritesJsonMarkdownAndSvg) {
  test::ScratchDir dir;
  std::ostringstream out, err;
  int status = bench_command({.suite = "smoke", .out_dir = dir.file("results"), .arch = "h100", .topk = 3,
                              .only = {"add_f16_256x256"}, .git = "abc123", .no_measure = true},
                             out, err);
  ASSERT_EQ(status, 0) << err.str();
  std::string prefix = dir.file("results/");
  std::vector<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(prefix)) files.push_back(e.path().filename().string());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_NE(out.str().find("| add_f16_256x256 | elementwise |"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("compile only"), std::string::npos);
  for (const std::string &f : files) {
    std::string text = test::read_text(prefix + f);
    if (f.ends_with(".svg")) {
      EXPECT_NE(text.find("<svg"), std::string::npos);
    } else if (f.ends_with(".json")) {
      auto j = nlohmann::json::parse(text);
      EXPECT_EQ(j["git"], "abc123");
      ASSERT_EQ(j["workloads"].size(), 1u);
      EXPECT_GT(j["workloads"][0]["phases_ms"]["nvrtc"].get<double>(), 0);
    }
  }
  std::ostringstream out2, err2;
  EXPECT_EQ(bench_command({.suite = "no_such_suite", .no_measure = true}, out2, err2), 1);
  EXPECT_NE(err2.str().find("smoke"), std::string::npos) << err2.str();  // the known suites are listed
}

}  // namespace
}  // namespace tessera::cli
