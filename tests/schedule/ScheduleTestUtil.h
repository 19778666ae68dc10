//===- ScheduleTestUtil.h - The four checks every primitive test makes -----===//
//
//   1. golden: the scheduled function is structurally equal to expected text;
//   2. negative: see expect_schedule_error;
//   3. trace replay: trace -> JSON -> replay on the original -> the same function;
//   4. numeric: original and scheduled give the same outputs in the interpreter.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <gtest/gtest.h>

#include "IRTestUtil.h"
#include "tessera/ir/Verifier.h"
#include "tessera/schedule/Schedule.h"
#include "tessera/schedule/Trace.h"
#include "tessera/script/Parser.h"
#include "tessera/script/Printer.h"

namespace tessera::test {

inline schedule::Schedule make_schedule(const ir::PrimFunc &f) {
  return schedule::Schedule(f, schedule::ScheduleOptions{.verify = true});
}

/// Trace -> JSON -> replay on a fresh schedule of `original` -> structurally
/// equal to `sch.func()`, and the replayed trace prints the same JSON.
inline ::testing::AssertionResult replays(const ir::PrimFunc &original, const schedule::Schedule &sch) {
  std::string json = sch.trace().to_json();
  schedule::Schedule again = make_schedule(original);
  try {
    again.replay(json);
  } catch (const std::exception &e) {
    return ::testing::AssertionFailure() << "replay failed: " << e.what() << "\ntrace:\n" << json;
  }
  auto eq = structurally_equal_with_diff(again.func(), sch.func(), "replayed", "scheduled");
  if (!eq) return eq << "\ntrace:\n" << json;
  if (again.trace().to_json() != json)
    return ::testing::AssertionFailure() << "replayed trace differs:\n" << again.trace().to_json() << "vs\n" << json;
  return ::testing::AssertionSuccess();
}

/// The interpreter gives the same outputs for both functions.
inline ::testing::AssertionResult same_numbers(const ir::PrimFunc &a, const ir::PrimFunc &b,
                                               const runtime::DimBindings &dims = {}, uint64_t seed = 7) {
  RandomRuns r = run_on_same_random_args(a, b, dims, seed);
  return all_close(r.a, r.b, 1e-5, 1e-5);
}

/// All four positive checks at once.
inline void check_schedule(const ir::PrimFunc &before, const schedule::Schedule &sch, const char *expected,
                           const runtime::DimBindings &dims = {}) {
  if (expected) {
    EXPECT_TRUE(structurally_equal_with_diff(sch.func(), script::parse_func(expected), "scheduled", "expected"));
  }
  EXPECT_TRUE(ir::verify(sch.func()).empty());
  EXPECT_TRUE(replays(before, sch));
  EXPECT_TRUE(same_numbers(before, sch.func(), dims));
}

/// Runs `f` on `sch`, expecting error type E whose what() contains `fragment`;
/// then checks that the schedule is untouched (same function node, same trace).
template <typename E, typename F>
void expect_schedule_error(schedule::Schedule &sch, F &&f, const std::string &fragment) {
  ir::PrimFunc before = sch.func();
  std::string trace = sch.trace().to_json();
  try {
    f();
    ADD_FAILURE() << "expected a " << typeid(E).name() << " containing '" << fragment << "'";
  } catch (const E &e) {
    std::string what = e.what();
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
  EXPECT_TRUE(sch.func().same_as(before)) << "a failed primitive changed the function";
  EXPECT_EQ(sch.trace().to_json(), trace) << "a failed primitive changed the trace";
}

}  // namespace tessera::test
