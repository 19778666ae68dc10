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

#include <optional>
#include <vector>

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

/// The split loops of tile_like_the_issue, outer first.
struct IssueTiles {
  std::vector<schedule::LoopRef> i, j, k;
};

/// The issue's example tiling of matmul block `c` (data/matmul_trace.json up
/// to its binds): split i, j, k by 16, 16, 8 into i0/i1, j0/j1, k0/k1,
/// reorder to i0 j0 k0 i1 j1 k1, bind i0 to blockIdx.y and j0 to blockIdx.x.
inline IssueTiles tile_like_the_issue(schedule::Schedule &sch, const schedule::BlockRef &c) {
  auto l = sch.get_loops(c);
  IssueTiles t;
  t.i = sch.split(l[0], {std::nullopt, 16}, {"i0", "i1"});
  t.j = sch.split(l[1], {std::nullopt, 16}, {"j0", "j1"});
  t.k = sch.split(l[2], {std::nullopt, 8}, {"k0", "k1"});
  sch.reorder({t.i[0], t.j[0], t.k[0], t.i[1], t.j[1], t.k[1]});
  sch.bind(t.i[0], "blockIdx.y");
  sch.bind(t.j[0], "blockIdx.x");
  return t;
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
