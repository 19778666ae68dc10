//===- DumpTest.cpp - TESSERA_DUMP=schedule ---------------------------------===//
#include <cstdlib>

#include "Programs.h"
#include "ScheduleTestUtil.h"

namespace tessera::test {
namespace {

using namespace schedule;
using std::nullopt;

/// Sets TESSERA_DUMP for the test's duration.
class ScopedDumpEnv {
 public:
  explicit ScopedDumpEnv(const char *value) {
    if (const char *old = std::getenv("TESSERA_DUMP")) old_ = old, had_ = true;
    ::setenv("TESSERA_DUMP", value, 1);
  }
  ~ScopedDumpEnv() {
    if (had_)
      ::setenv("TESSERA_DUMP", old_.c_str(), 1);
    else
      ::unsetenv("TESSERA_DUMP");
  }

 private:
  std::string old_;
  bool had_ = false;
};

TEST(Dump, PrintsTheFunctionAfterEveryPrimitive) {
  ScopedDumpEnv env("lower,schedule");
  Schedule sch = make_schedule(parse(kElementwise));
  testing::internal::CaptureStderr();
  auto l = sch.get_loops(sch.get_block("B"));  // lookups print nothing
  sch.split(l[0], {nullopt, 32});
  sch.reorder({l[1]});  // rebuilds the loop, same text
  try {
    sch.split(l[0], {nullopt, 32});  // stale handle
  } catch (const ScheduleError &) {
  }
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(
      err,
      R"(=== schedule: after split {"op": "split", "loop": "i", "factors": [null, 32], "out": ["i_0", "i_1"]}
)" + script::print(sch.func()) +
          R"(
=== schedule: after reorder {"op": "reorder", "loops": ["j"]}
(unchanged)
=== schedule: split failed (unchanged): loop 'i' no longer exists in function 'main' (split and fuse replace the loops they transform)
)");
}

TEST(Dump, SilentWithoutTheVariable) {
  ScopedDumpEnv env("lower");
  Schedule sch = make_schedule(parse(kElementwise));
  testing::internal::CaptureStderr();
  auto l = sch.get_loops(sch.get_block("B"));
  sch.split(l[0], {nullopt, 32});
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

}  // namespace
}  // namespace tessera::test
