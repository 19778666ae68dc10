//===- tests/tools/ScheduleEverythingTest.cpp - No input crashes schedule ----===//
//
// Issue 12: every program of the corpus, every workload and the long-tail
// examples, with their symbolic sizes bound to 1, 7 and 64, go through
// `tessera schedule --verify` (in process): the exit status is 0, or 1 with a
// message that is not a wrong answer; never an internal error (2), never a
// signal (the test binary would die). Programs too large to interpret are
// refused by --verify's limit, with a message.
//
//===----------------------------------------------------------------------===//
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "Commands.h"
#include "tessera/script/Parser.h"
#include "tessera/support/DataPaths.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> programs() {
  std::vector<std::string> out;
  for (const fs::path &dir : {support::data_root() / "tests" / "corpus", support::data_root() / "workloads",
                              support::data_root() / "workloads" / "longtail"}) {
    std::error_code ec;
    for (const auto &e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".py") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class ScheduleEverything : public ::testing::TestWithParam<std::string> {};

TEST_P(ScheduleEverything, VerifyExitsZeroOrOneAndNeverWrong) {
  const std::string &file = GetParam();
  ir::Module m = script::parse_file(file);
  for (const ir::PrimFunc &f : m.funcs) {
    std::vector<std::string> symbols;
    for (const ir::Var &v : f.shape_vars()) symbols.push_back(v.name());
    for (int64_t n : {1, 7, 64}) {
      ScheduleCommandOptions o;
      o.file = file;
      o.func = m.funcs.size() > 1 ? f.name() : "";
      o.arch = "h100";
      o.verify = true;
      o.verify_limit = int64_t(1) << 22;  // a few seconds; larger programs are refused, quickly
      o.llvm_verify_limit = int64_t(1) << 25;  // the same in the LLVM JIT
      for (const std::string &s : symbols) o.dims.push_back(s + "=" + std::to_string(n));
      std::ostringstream out, err;
      int rc = schedule_command(o, out, err);
      SCOPED_TRACE(f.name() + " n=" + std::to_string(n) + "\n" + err.str());
      EXPECT_TRUE(rc == 0 || rc == 1) << "exit status " << rc;
      EXPECT_EQ(err.str().find("outside what rounding explains"), std::string::npos) << "a wrong answer";
      EXPECT_EQ(err.str().find("internal error"), std::string::npos);
      if (rc == 0) EXPECT_NE(out.str().find("# verify: "), std::string::npos) << out.str();
      // The only reasons to refuse a corpus program: too large to interpret.
      if (rc == 1) EXPECT_NE(err.str().find("--verify would "), std::string::npos);
      if (symbols.empty()) break;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, ScheduleEverything, ::testing::ValuesIn(programs()), [](const auto &info) {
  std::string name = fs::path(info.param).parent_path().filename().string() + "_" + fs::path(info.param).stem().string();
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

}  // namespace
}  // namespace tessera::cli
